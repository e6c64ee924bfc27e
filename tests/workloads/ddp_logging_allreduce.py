"""A DDP training script in the style of PyTorch's "Getting Started with Distributed Data Parallel"
tutorial (gloo, CPU, torch.multiprocessing.spawn), whose loop all-reduces the loss after the
optimizer step for logging, as scripts do. Planted truth: rank 1's model has an extra layer that
takes ~20 ms more per forward, so rank 0 waits for it in DDP's gradient all-reduce (inside
backward) and rank 1 is the straggler; at the logging all_reduce the ranks are already aligned.

    ddp_logging_allreduce.py PORT [STEPS]     prints "steps N loop_s S" from rank 0
"""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class SlowLayer(nn.Module):
    """Stands for the extra work rank 1 does (a bigger model part, a slower node)."""

    def forward(self, x):
        time.sleep(0.02)
        return x


class ToyModel(nn.Module):
    def __init__(self, extra_layer=False):
        super().__init__()
        self.net1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.extra = SlowLayer() if extra_layer else nn.Identity()
        self.net2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.net2(self.extra(self.relu(self.net1(x))))


def demo_basic(rank, world_size, port, steps):
    torch.set_num_threads(1)
    setup(rank, world_size, port)
    model = ToyModel(extra_layer=(rank == 1))
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    dataset = TensorDataset(torch.randn(steps * 8, 16), torch.randn(steps * 8, 4))
    loader = DataLoader(dataset, batch_size=8)
    start = time.perf_counter()
    n = 0
    for inputs, labels in loader:
        optimizer.zero_grad()
        outputs = ddp_model(inputs)
        loss = loss_fn(outputs, labels)
        loss.backward()
        optimizer.step()
        logged = loss.detach().clone()
        dist.all_reduce(logged)  # the mean loss over ranks, for logging
        n += 1
    if rank == 0:
        print("steps %d loop_s %.4f loss %.4f" % (n, time.perf_counter() - start, logged.item() / world_size))
    cleanup()


if __name__ == "__main__":
    port = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    world_size = 2
    mp.spawn(demo_basic, args=(world_size, port, steps), nprocs=world_size, join=True)
