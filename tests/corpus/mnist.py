"""MNIST-style CNN, after pytorch/examples mnist/main.py, on random 1x28x28 images (no download).

Planted truth: the dataset's __getitem__ is slow (it "decodes" each image: a 6 ms sleep), so the
2 workers of the training loader cannot keep up: input-bound. A second loader (the test set, 2
workers of its own) is run by test() under model.eval() and torch.no_grad() after each epoch.

    mnist.py [--epochs N] [--batch-size N] [--train-size N] [--test-size N] [--timing-out FILE]

--timing-out FILE: at exit, this script's own measurement as JSON (perf_counter around each
training step, as the ImageNet example's batch_time: from the end of the previous step, data
loading included, to the end of optimizer.step()).
"""

import argparse
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


class RandomMNIST(Dataset):
    """Stands in for torchvision.datasets.MNIST: fixed random images and labels."""

    def __init__(self, size, seed, decode_s=0.006):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.rand(size, 1, 28, 28, generator=g)
        self.targets = torch.randint(0, 10, (size,), generator=g)
        self.decode_s = decode_s

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        time.sleep(self.decode_s)  # planted: a slow image decode
        img = (self.images[index] - 0.1307) / 0.3081  # transforms.Normalize((0.1307,), (0.3081,))
        return img, int(self.targets[index])


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(1152, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


step_times = []


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    end = time.perf_counter()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        step_times.append(time.perf_counter() - end)
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
        end = time.perf_counter()
        if args.dry_run:
            break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=32, metavar='N')
    parser.add_argument('--epochs', type=int, default=1, metavar='N')
    parser.add_argument('--train-size', type=int, default=320, metavar='N')
    parser.add_argument('--test-size', type=int, default=128, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
    parser.add_argument('--dry-run', action='store_true', default=False, help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=False, help='For Saving the current Model')
    parser.add_argument('--timing-out', metavar='FILE', help='write this script\'s own step timing (JSON)')
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")

    train_kwargs = {'batch_size': args.batch_size, 'num_workers': 2, 'shuffle': True}
    test_kwargs = {'batch_size': args.test_batch_size, 'num_workers': 2}
    train_loader = DataLoader(RandomMNIST(args.train_size, seed=0), **train_kwargs)
    test_loader = DataLoader(RandomMNIST(args.test_size, seed=1), **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")

    if args.timing_out:
        with open(args.timing_out, 'w') as f:
            json.dump({'pid': os.getpid(), 'steps': len(step_times), 'step_times_s': step_times}, f)


if __name__ == '__main__':
    main()
