"""Two DDP ranks (gloo, CPU); rank 1 does ~60 ms of extra compute before each step's backward
(where DDP all-reduces gradients), so rank 0 waits for it: rank 1 is the straggler.

    ddp_straggler.py [--steps N] [--slow-rank R] [--port P]       starts 2 ranks itself with
                                                                  torch.multiprocessing.spawn
    torchrun --nproc-per-node 2 ddp_straggler.py [--steps N] ...  one rank per process, from
                                                                  torchrun's RANK/WORLD_SIZE/MASTER_*
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
    torch.set_num_threads(1)
    if port is None:  # torchrun: everything comes from the environment it set
        dist.init_process_group("gloo")
    else:
        os.environ["RANK"] = str(rank)
        os.environ["LOCAL_RANK"] = str(rank)
        os.environ["WORLD_SIZE"] = str(world)
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
    if "TORCHELASTIC_RUN_ID" in os.environ:  # started by torchrun
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args.steps, args.slow_rank, None)
        print("rank", os.environ["RANK"], "done")
        return
    mp.spawn(run, args=(2, args.steps, args.slow_rank, args.port), nprocs=2, join=True)
    print("done")


if __name__ == "__main__":
    main()
