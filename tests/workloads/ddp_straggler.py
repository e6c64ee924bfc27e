"""Two DDP ranks (gloo, CPU) started with torch.multiprocessing.spawn; rank 1 does ~60 ms of
extra compute before each step's backward (where DDP all-reduces gradients), so rank 0 waits
for it: rank 1 is the straggler.

    ddp_straggler.py [--steps N] [--slow-rank R]
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def busy(seconds):
    end = time.perf_counter() + seconds
    x = torch.ones(64, 64)
    while time.perf_counter() < end:
        x = (x @ x).clamp_(-1, 1)


def run(rank, world, steps, slow_rank, port):
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    model = DDP(torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(steps * 8, 32), torch.randint(0, 4, (steps * 8,)))
    for x, y in DataLoader(data, batch_size=8):
        opt.zero_grad()
        out = model(x)
        if rank == slow_rank:
            busy(0.060)  # extra work on one rank, before the gradient all-reduce
        F.cross_entropy(out, y).backward()
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--port", type=int, default=29533)
    args = parser.parse_args()
    mp.spawn(run, args=(2, args.steps, args.slow_rank, args.port), nprocs=2, join=True)
    print("done")


if __name__ == "__main__":
    main()
