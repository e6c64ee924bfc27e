"""DDP over gloo (torch.multiprocessing.spawn) that averages the loss across ranks for logging:
`dist.all_reduce(loss)` after `optimizer.step()`, as many training scripts do.

Planted truth: rank 1's model has an extra layer that costs ~20 ms per step (a sleep standing in
for a slower device; it has no parameters, so DDP sees the same model on both ranks): rank 0
waits for rank 1 in DDP's gradient all-reduce (inside backward) every step, and the logging
all_reduce after the step is already in step: rank 1 is the straggler.

    ddp_allreduce.py [--steps-per-epoch N] [--port P] [--timing-out FILE]

--timing-out FILE: at exit, each rank's own measurement as JSON in FILE with ".rank<R>" before
its extension (perf_counter per iteration, from the end of the previous one, data included).
"""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

WORLD_SIZE = 2
BATCH_SIZE = 16
LR = 0.05


class Stall(nn.Module):
    """An extra layer of no parameters that takes `seconds`."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds

    def forward(self, x):
        time.sleep(self.seconds)
        return x


def build_model(rank):
    layers = [nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 4)]
    if rank == 1:
        layers.insert(2, Stall(0.020))  # planted
    return nn.Sequential(*layers)


def worker(rank, args):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.port,
                            rank=rank, world_size=WORLD_SIZE)
    g = torch.Generator().manual_seed(7)
    n = args.steps_per_epoch * BATCH_SIZE * WORLD_SIZE
    ds = TensorDataset(torch.randn(n, 64, generator=g), torch.randint(0, 4, (n,), generator=g))
    loader = DataLoader(ds, batch_size=BATCH_SIZE, sampler=DistributedSampler(ds, num_replicas=WORLD_SIZE, rank=rank))
    model = DDP(build_model(rank))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    durations = []
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        last = time.perf_counter()
        for step, (inputs, labels) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(inputs), labels)
            loss.backward()
            opt.step()
            # average the loss over the ranks, for the log line
            reduced = loss.detach().clone()
            dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
            reduced /= WORLD_SIZE
            if rank == 0 and step % 10 == 0:
                print("epoch %d step %d loss %.4f" % (epoch, step, reduced.item()))
            now = time.perf_counter()
            durations.append(now - last)
            last = now

    dist.destroy_process_group()
    if args.timing_out:
        stem, ext = os.path.splitext(args.timing_out)
        with open("%s.rank%d%s" % (stem, rank, ext), "w") as out:
            json.dump({"pid": os.getpid(), "rank": rank, "steps": len(durations), "step_times_s": durations}, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps-per-epoch", type=int, default=24)
    parser.add_argument("--port", type=int, default=29500)
    parser.add_argument("--timing-out")
    mp.spawn(worker, args=(parser.parse_args(),), nprocs=WORLD_SIZE, join=True)
