"""A small, complete PyTorch training run: the example `scripts/demo` profiles.

A small CNN learns to classify synthetic 1x28x28 images (10 classes) on the CPU, fed by a
DataLoader with worker processes. `__getitem__` does a little work per sample, like decoding
and augmenting would, so the input pipeline is visible in the profile.

    python examples/train.py [--epochs 2] [--workers 2] [--batch-size 32] [--samples 1024]
"""

import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

try:  # NVTX ranges appear in the report when this PyTorch has NVTX (CUDA builds)
    from torch.cuda import nvtx

    nvtx.range_push("probe")
    nvtx.range_pop()
except Exception:  # CPU-only builds: no NVTX
    nvtx = None


class SyntheticDigits(Dataset):
    """Deterministic noisy images; class c has a bright stripe at row 2c + 4."""

    def __init__(self, samples, decode_ms):
        self.samples = samples
        self.decode_ms = decode_ms

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        label = index % 10
        image = torch.rand(1, 28, 28, generator=g) * 0.5
        image[0, 2 * label + 4, :] += 1.0
        if self.decode_ms:
            time.sleep(self.decode_ms / 1000.0)  # stands for decoding / augmentation
        return image, label


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def range_push(name):
    if nvtx is not None:
        nvtx.range_push(name)


def range_pop():
    if nvtx is not None:
        nvtx.range_pop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--decode-ms", type=float, default=0.5)
    parser.add_argument("--torch-profiler", action="store_true",
                        help="run inside torch.profiler (CPU activity), for scripts/bench's comparison")
    args = parser.parse_args()
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            train(args)
        prof.key_averages()  # what a user of torch.profiler looks at: the table's aggregation
    else:
        train(args)


def train(args):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(SyntheticDigits(args.samples, args.decode_ms), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        total, correct, loss_sum = 0, 0, 0.0
        for images, labels in loader:
            range_push("train_step")
            optimizer.zero_grad()
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            range_pop()
            loss_sum += loss.item() * len(labels)
            correct += (logits.argmax(1) == labels).sum().item()
            total += len(labels)
        print("epoch %d: loss %.3f, accuracy %.1f%%" % (epoch, loss_sum / total, 100.0 * correct / total))


if __name__ == "__main__":
    main()
