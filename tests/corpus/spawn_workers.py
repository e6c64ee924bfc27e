"""CIFAR-10-style classifier, after PyTorch's "Training a Classifier" tutorial, on random 32x32
RGB images kept in memory as a numpy uint8 array (as torchvision.datasets.CIFAR10 keeps them),
loaded by 2 DataLoader workers started with the 'spawn' method (as on macOS and Windows, or when
CUDA is initialised before the workers start).

Planted truth: with 'spawn', iter(trainloader) starts 2 fresh interpreters that import torch and
this script again, and hands each the pickled dataset; that start-up happens before the first
training step, in no step.

    TIMING_OUT=FILE spawn_workers.py

TIMING_OUT: where to write, at exit, this script's own measurement as JSON (perf_counter per
training iteration, from the end of the previous one, data included).
"""

import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset

batch_size = 16
n_images = 320
classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')


class RandomCIFAR10(Dataset):
    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.data = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
        self.targets = rng.integers(0, len(classes), size=n).tolist()

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img = torch.from_numpy(self.data[index]).permute(2, 0, 1).float().div(255)  # ToTensor()
        img = (img - 0.5) / 0.5  # Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
        return img, self.targets[index]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


if __name__ == '__main__':
    torch.set_num_threads(1)
    trainset = RandomCIFAR10(n_images)
    trainloader = DataLoader(trainset, batch_size=batch_size, shuffle=True, num_workers=2,
                             multiprocessing_context='spawn')

    net = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

    iter_times = []
    for epoch in range(1):  # loop over the dataset multiple times
        running_loss = 0.0
        last = time.perf_counter()
        for i, data in enumerate(trainloader, 0):
            # get the inputs; data is a list of [inputs, labels]
            inputs, labels = data

            # zero the parameter gradients
            optimizer.zero_grad()

            # forward + backward + optimize
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            # print statistics
            running_loss += loss.item()
            if i % 10 == 9:
                print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 10:.3f}')
                running_loss = 0.0
            now = time.perf_counter()
            iter_times.append(now - last)
            last = now

    print('Finished Training')
    if os.environ.get('TIMING_OUT'):
        with open(os.environ['TIMING_OUT'], 'w') as f:
            json.dump({'pid': os.getpid(), 'steps': len(iter_times), 'step_times_s': iter_times}, f)
