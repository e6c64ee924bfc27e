"""PyTorch training loops on a GPU with one planted GPU bottleneck each (scripts/gpu_check runs
them where PyTorch with CUDA is installed; tests/programs/gpu_planted.cu is the same without
PyTorch).

    gpu_planted.py CASE [--steps N]

CASE:
  sync     each step: a medium model on the GPU, then loss.item() (a DtoH copy and a stream
           synchronize) and 3 ms of host work per step while the GPU idles: sync-bound
  launch   each step: 1000 tiny elementwise ops on a small tensor: launch-bound
  busy     each step: large matmuls: the GPU is busy
"""

import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["sync", "launch", "busy"])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(args.steps * 64, 1024), torch.randint(0, 10, (args.steps * 64,)))
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    small = torch.zeros(32, device=dev)
    big = torch.randn(8192, 8192, device=dev)
    losses = []
    for x, y in DataLoader(data, batch_size=64, num_workers=1):
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if args.case == "sync":
            losses.append(loss.item())  # DtoH copy + synchronize every step
            time.sleep(0.003)           # host work while the GPU idles
        elif args.case == "launch":
            for _ in range(1000):
                small.mul_(1.0001).add_(1.0)
        else:
            for _ in range(4):
                big = (big @ big).clamp_(-1, 1)
    torch.cuda.synchronize()
    print(args.case, "steps", len(data) // 64)


if __name__ == "__main__":
    main()
