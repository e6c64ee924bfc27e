"""A DataLoader job whose workers use the spawn start method (multiprocessing_context="spawn", as on
macOS/Windows or with CUDA in workers): each epoch's `for x, y in loader` creates an iterator
whose workers start as fresh interpreters that import the program and torch, before the first
batch. The dataset holds its samples in a Python list, as datasets of file names do.

The planted truth: worker start-up (every epoch, no persistent_workers). Prints, as its last line,
JSON with the time the script itself spent creating iterators and in its steps."""

import argparse
import json
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ListDataset(Dataset):
    def __init__(self, n):
        self.samples = [(float(i % 97) / 97.0, i % 3) for i in range(n)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        x, y = self.samples[i]
        return torch.full((16,), x), y


def main():
    parser = argparse.ArgumentParser(description="a DataLoader with spawned workers")
    parser.add_argument("--epochs", type=int, default=2, help="each creates an iterator: workers start again")
    parser.add_argument("--batches", type=int, default=6, help="batches of 8 per epoch")
    parser.add_argument("--workers", type=int, default=2, help="num_workers")
    args = parser.parse_args()
    dataset = ListDataset(40000)
    sampler = torch.utils.data.SubsetRandomSampler(range(args.batches * 8))
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=args.workers,
                        multiprocessing_context="spawn")
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    iter_s, steps = 0.0, 0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        it = iter(loader)
        iter_s += time.perf_counter() - t0
        for x, y in it:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            steps += 1
    print(json.dumps({"steps": steps, "iter_s": iter_s}))


if __name__ == "__main__":
    main()
