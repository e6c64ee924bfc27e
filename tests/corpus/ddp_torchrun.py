"""DDP over gloo launched by torchrun (env:// rendezvous: RANK, WORLD_SIZE, MASTER_ADDR/PORT from
torchrun), a plain training loop over a DataLoader with a DistributedSampler.

Planted truth: the process with LOCAL_RANK 1 has an extra ~20 ms of work in its forward every
step (a sleep standing in for a slower device): rank 1 is the straggler.

    torchrun --nproc-per-node 2 ddp_torchrun.py [--epochs N] [--timing-out FILE]

--timing-out FILE: at exit, each rank's own measurement as JSON in FILE with ".rank<R>" before
its extension (perf_counter per iteration, data loading included).
"""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLP(nn.Module):
    def __init__(self, slow_s):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        self.slow_s = slow_s

    def forward(self, x):
        if self.slow_s > 0:
            time.sleep(self.slow_s)  # planted
        return self.layers(x)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--samples", type=int, default=512)
    p.add_argument("--timing-out", default=os.environ.get("TIMING_OUT"))
    return p.parse_args()


def run():
    args = get_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo", init_method="env://")
    rank = dist.get_rank()

    torch.manual_seed(1234)
    x = torch.randn(args.samples, 32)
    y = torch.randint(0, 10, (args.samples,))
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    net = DistributedDataParallel(MLP(slow_s=0.02 if local_rank == 1 else 0))
    criterion = nn.CrossEntropyLoss()
    optim = torch.optim.Adam(net.parameters(), lr=3e-4)

    times = []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        running = 0.0
        t0 = time.perf_counter()
        for it, (xb, yb) in enumerate(loader):
            logits = net(xb)
            loss = criterion(logits, yb)
            optim.zero_grad(set_to_none=True)
            loss.backward()
            optim.step()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            running += loss.item()
            t0 = time.perf_counter()
        if rank == 0:
            print(f"epoch {epoch}: mean loss {running / len(loader):.4f}, {1000 * sum(times) / len(times):.1f} ms/it")

    dist.destroy_process_group()
    if args.timing_out:
        base, ext = os.path.splitext(args.timing_out)
        with open(f"{base}.rank{rank}{ext}", "w") as fh:
            json.dump(dict(pid=os.getpid(), rank=rank, steps=len(times), step_times_s=times), fh)


if __name__ == "__main__":
    run()
