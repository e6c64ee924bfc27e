"""An MNIST-style training program written as PyTorch's examples/mnist/main.py is: a conv Net,
train() and test() functions, a train loader and a test loader with 2 workers each, model.eval()
and torch.no_grad() in test(). Small random tensors instead of MNIST, so it runs in seconds.

    mnist_style.py [--epochs N] [--counts FILE] [--start-method spawn|fork|forkserver] [--persistent-workers]

With --counts it writes the program's own counts as JSON: training and evaluation forward calls,
batches of each loader.
"""

import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


class Digits(Dataset):
    """The test set: a Dataset class of its own, as a user's would be."""

    def __init__(self, n):
        g = torch.Generator().manual_seed(1)
        self.images = torch.randn(n, 1, 12, 12, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


counts = {"train_forward": 0, "eval_forward": 0, "train_batches": 0, "test_batches": 0}


def train(model, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        counts["train_forward"] += 1
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        counts["train_batches"] += 1


def test(model, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            counts["eval_forward"] += 1
            counts["test_batches"] += 1
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1).eq(target).sum().item()
    test_loss /= len(test_loader.dataset)
    print("Test set: Average loss: %.4f, Accuracy: %d/%d" % (test_loss, correct, len(test_loader.dataset)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--counts")
    parser.add_argument("--start-method", help="the loaders' multiprocessing_context")
    parser.add_argument("--persistent-workers", action="store_true", help="both loaders keep their workers")
    args = parser.parse_args()
    torch.manual_seed(1)
    torch.set_num_threads(1)
    train_set = TensorDataset(torch.randn(160, 1, 12, 12), torch.randint(0, 10, (160,)))
    kwargs = {"num_workers": 2, "persistent_workers": args.persistent_workers}
    if args.start_method:
        kwargs["multiprocessing_context"] = args.start_method
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True, **kwargs)
    # pin_memory=True as many programs set it whatever the machine: PyTorch pins only with CUDA.
    test_loader = DataLoader(Digits(96), batch_size=32, pin_memory=True, **kwargs)
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(1, args.epochs + 1):
        train(model, train_loader, optimizer, epoch)
        test(model, test_loader)
    if args.counts:
        with open(args.counts, "w") as f:
            json.dump(counts, f)


if __name__ == "__main__":
    main()
