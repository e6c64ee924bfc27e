"""Gradient accumulation, as the PyTorch forums and the AMP recipe write it: a classifier over a
Dataset of random features, a DataLoader with 2 workers, mixed precision through
torch.cuda.amp.GradScaler (enabled only with CUDA: on a CPU it passes the calls through), the loss
divided by the accumulation steps, and scaler.step(optimizer) every `--accumulation-steps`
micro-batches.

Planted truth: each optimizer step takes 4 micro-batches (4 DataLoader batches, 4 forward and
backward passes): the step is the optimizer step.

    grad_accumulation.py [--accumulation-steps N] [--steps N] [--timing-out FILE]

--timing-out FILE: at exit, this script's own measurement as JSON: perf_counter around each
optimizer step (from the end of the previous one's zero_grad to the end of its own: its
micro-batches' loading included), and the micro-batches and passes it ran.
"""

import argparse
import json
import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class RandomFeatures(Dataset):
    def __init__(self, n, features=64, classes=10):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, features, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class MLP(nn.Module):
    def __init__(self, features=64, hidden=256, classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def main():
    parser = argparse.ArgumentParser(description='gradient accumulation')
    parser.add_argument('--accumulation-steps', type=int, default=4)
    parser.add_argument('--steps', type=int, default=20, help='optimizer steps in the epoch')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--timing-out', metavar='FILE', help="write this script's own step timing (JSON)")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    use_cuda = torch.cuda.is_available()
    device = torch.device('cuda' if use_cuda else 'cpu')

    dataset = RandomFeatures(args.steps * args.accumulation_steps * args.batch_size)
    train_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=2)
    model = MLP().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=use_cuda)

    step_times, micro_batches, passes = [], 0, 0
    model.train()
    optimizer.zero_grad()
    end = time.perf_counter()
    for i, (inputs, labels) in enumerate(train_loader):
        inputs, labels = inputs.to(device), labels.to(device)
        with torch.autocast(device_type=device.type, enabled=use_cuda):
            outputs = model(inputs)
            loss = criterion(outputs, labels) / args.accumulation_steps
        scaler.scale(loss).backward()
        micro_batches += 1
        passes += 1
        if (i + 1) % args.accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            step_times.append(time.perf_counter() - end)
            if len(step_times) % 5 == 0:
                print('step {} loss {:.4f}'.format(len(step_times), loss.item() * args.accumulation_steps))
            end = time.perf_counter()

    if args.timing_out:
        with open(args.timing_out, 'w') as f:
            json.dump({'pid': os.getpid(), 'steps': len(step_times), 'step_times_s': step_times,
                       'micro_batches': micro_batches, 'passes': passes}, f)


if __name__ == '__main__':
    main()
