"""A symmetric DDP job (gloo, CPU, 2 ranks started with torch.multiprocessing.spawn), written as
PyTorch's DDP tutorial writes it: rank 0 saves a checkpoint once, at step --save-at, and the save
is slow (planted: a 300 ms pause beside torch.save, as slow storage makes it). Both ranks do the
same work in every step: there is no straggler, and step --save-at of rank 0 is an isolated slow
step (rank 1 waits for it in the next step's all-reduce).

    ddp_checkpoint.py [--steps N] [--save-at K] [--port P] [--dir D]
"""

import argparse
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world_size)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def train(rank, world_size, args):
    setup(rank, world_size, args.port)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    data = TensorDataset(torch.randn(args.steps * 16 * world_size, 10), torch.randn(args.steps * 16 * world_size, 5))
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data, num_replicas=world_size, rank=rank))
    checkpoint_path = os.path.join(args.dir, "model.checkpoint")
    for step, (inputs, labels) in enumerate(loader):
        optimizer.zero_grad()
        outputs = ddp_model(inputs)
        loss_fn(outputs, labels).backward()
        optimizer.step()
        if rank == 0 and step == args.save_at:
            torch.save(ddp_model.state_dict(), checkpoint_path)
            time.sleep(0.3)  # planted: slow storage
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description="DDP with one slow checkpoint save on rank 0")
    for flag, kind, default in (("--steps", int, 20), ("--save-at", int, 10), ("--port", int, 29571),
                                ("--dir", str, tempfile.gettempdir())):
        parser.add_argument(flag, type=kind, default=default)
    world_size = 2
    mp.spawn(train, args=(world_size, parser.parse_args()), nprocs=world_size, join=True)
    print("done")


if __name__ == "__main__":
    main()
