"""Symmetric DDP training over gloo (torch.multiprocessing.spawn) that checkpoints by iteration:
every --save-every iterations rank 0 torch.save()s the model and optimizer state.

Planted truth: the checkpoint storage is slow (the save is followed by ~300 ms of "upload", a
sleep), and with the defaults it happens once, at iteration 15 (index 14). Both ranks do the
same work otherwise: there is no straggler, only one slow step on rank 0 (rank 1 then waits for
rank 0 in the next step's gradient all-reduce).

    ddp_checkpoint.py [--iters N] [--save-every N] [--ckpt-dir DIR] [--port P] [--timing-out FILE]

--timing-out FILE: at exit, each rank's own measurement as JSON in FILE with ".rank<R>" before
its extension (perf_counter per iteration, data loading and checkpointing included; and the
perf_counter time at which each iteration's forward and loss were done, just before backward).
"""

import argparse
import itertools
import json
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Synthetic(Dataset):
    def __init__(self, length=4096, dim=128):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(length, dim, generator=g)
        self.y = (self.x.sum(dim=1) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Model(nn.Module):
    def __init__(self, dim=128, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.head(F.relu(self.fc2(F.relu(self.fc1(x)))))


def save_checkpoint(path, it, model, optimizer):
    torch.save({"iteration": it, "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict()}, path)
    time.sleep(0.300)  # planted: slow checkpoint storage


def train(rank, world_size, args):
    torch.set_num_threads(1)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    dataset = Synthetic()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, drop_last=True)
    model = DDP(Model())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    iter_times, forward_done = [], []
    tic = time.perf_counter()
    for it, (x, y) in enumerate(itertools.islice(loader, args.iters)):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        forward_done.append(time.perf_counter())  # forward time = forward_done - tic, as logged
        loss.backward()
        optimizer.step()
        if rank == 0 and (it + 1) % args.save_every == 0:
            save_checkpoint(os.path.join(args.ckpt_dir, "ckpt_%06d.pt" % (it + 1)), it, model, optimizer)
        toc = time.perf_counter()
        iter_times.append(toc - tic)
        tic = toc

    if args.timing_out:
        name, ext = os.path.splitext(args.timing_out)
        with open(f"{name}.rank{rank}{ext}", "w") as f:
            json.dump({"pid": os.getpid(), "rank": rank, "steps": len(iter_times),
                       "step_times_s": iter_times, "forward_done_s": forward_done}, f)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=24)
    parser.add_argument("--save-every", type=int, default=15)
    parser.add_argument("--ckpt-dir", default=tempfile.gettempdir())
    parser.add_argument("--port", type=int, default=29501)
    parser.add_argument("--timing-out")
    args = parser.parse_args()
    world_size = 2
    mp.spawn(train, args=(world_size, args), nprocs=world_size)


if __name__ == "__main__":
    main()
