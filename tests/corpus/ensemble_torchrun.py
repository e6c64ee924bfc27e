"""A small deep ensemble trained under torchrun: each rank trains its own member (its own seed and
width) on the whole training set, apart from the others, and the members' validation losses are
gathered at the end to pick the best one. torch.distributed is only the launcher's rendezvous and
that one gather: no DistributedDataParallel, no collective inside a training step.

Planted truth: the member of rank 1 is wider (hidden 1024 against 256): its steps take longer, but
no rank waits for another, so there is no straggler.

    torchrun --nproc-per-node 2 ensemble_torchrun.py [--epochs N] [--timing-out FILE]

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
from torch.utils.data import DataLoader, TensorDataset

HIDDEN = {0: 256, 1: 1024}


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--samples", type=int, default=768)
    p.add_argument("--timing-out", default=os.environ.get("TIMING_OUT"))
    return p.parse_args()


def make_member(hidden):
    return nn.Sequential(nn.Linear(256, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


def evaluate(model, loader, criterion):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            total += criterion(model(xb), yb).item() * len(xb)
            n += len(xb)
    model.train()
    return total / n


def main():
    args = get_args()
    torch.set_num_threads(1)
    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()

    torch.manual_seed(0)  # the same data on every rank; the members differ by seed and width
    x = torch.randn(args.samples, 256)
    y = torch.randint(0, 10, (args.samples,))
    train = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=args.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(x[640:], y[640:]), batch_size=args.batch_size)

    torch.manual_seed(100 + rank)
    model = make_member(HIDDEN.get(rank, 64))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    times = []
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        for xb, yb in train:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            t0 = time.perf_counter()
        print(f"rank {rank} epoch {epoch}: val loss {evaluate(model, val, criterion):.4f}")

    losses = [None] * dist.get_world_size()
    dist.all_gather_object(losses, evaluate(model, val, criterion))
    if rank == 0:
        best = min(range(len(losses)), key=lambda r: losses[r])
        print(f"best member: rank {best} (val loss {losses[best]:.4f})")
    dist.destroy_process_group()
    if args.timing_out:
        base, ext = os.path.splitext(args.timing_out)
        with open(f"{base}.rank{rank}{ext}", "w") as fh:
            json.dump(dict(pid=os.getpid(), rank=rank, steps=len(times), step_times_s=times), fh)


if __name__ == "__main__":
    main()
