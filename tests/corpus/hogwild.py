"""pytorch/examples `mnist_hogwild`: several processes train one model whose parameters live in
shared memory (Hogwild!, lock-free SGD), each over its own DataLoader; the parent starts them,
waits for them, then tests the model.

Planted truth: the parent process only evaluates (its forwards run under model.eval() and
torch.no_grad(), no backward, no optimizer step); the training is the children's.

    python hogwild.py [--num-processes N] [--epochs N] [--timing-out FILE]

--timing-out FILE: at exit, each training process's own measurement as JSON in FILE with
".proc<K>" before its extension (perf_counter per iteration, data loading included).
"""

import argparse
import json
import os
import time

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


class RandomMNIST(Dataset):
    """Stands in for torchvision's MNIST (no download): 1x28x28 images and labels."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 1, 28, 28, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train(rank, args, model, dataset):
    torch.manual_seed(args.seed + rank)
    torch.set_num_threads(1)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    model.train()
    times = []
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        for batch_idx, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            t0 = time.perf_counter()
        print(f"{os.getpid()}\tTrain Epoch: {epoch}\tLoss: {loss.item():.6f}")
    if args.timing_out:
        base, ext = os.path.splitext(args.timing_out)
        with open(f"{base}.proc{rank}{ext}", "w") as fh:
            json.dump(dict(pid=os.getpid(), steps=len(times), step_times_s=times), fh)


def test(args, model, dataset):
    torch.set_num_threads(1)
    loader = DataLoader(dataset, batch_size=args.test_batch_size)
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.max(1)[1].eq(target).sum().item()
    n = len(loader.dataset)
    print(f"\nTest set: Average loss: {test_loss / n:.4f}, Accuracy: {correct}/{n} ({100.0 * correct / n:.0f}%)\n")


def main():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Hogwild Example")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--test-batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--timing-out", default=os.environ.get("TIMING_OUT"))
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    mp.set_start_method("fork", force=True)
    model = Net()
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    train_set = RandomMNIST(384, seed=1)
    test_set = RandomMNIST(256, seed=2)

    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, train_set))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()

    # Once training is complete, we can test the model
    test(args, model, test_set)


if __name__ == "__main__":
    main()
