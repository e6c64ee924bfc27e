"""Multi-process DDP training over gloo started with torch.multiprocessing.spawn, after PyTorch's
DDP tutorial series (pytorch/examples distributed/ddp-tutorial-series/multigpu.py) on the CPU.

Planted truth: rank 1 sits on a slower device: its forward takes ~20 ms more per step (a sleep),
so rank 0 waits for it in DDP's gradient all-reduce every step: rank 1 is the straggler.

    ddp_spawn.py [--total-epochs N] [--batch-size N] [--master-port P] [--timing-out FILE]

--timing-out FILE: at exit, each rank's own measurement as JSON in FILE with ".rank<R>" before
its extension (perf_counter around each batch, from the end of the previous one, data included).
"""

import argparse
import json
import os
import time

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


class Regressor(torch.nn.Module):
    def __init__(self, device_delay_s=0.0):
        super().__init__()
        self.fc = torch.nn.Linear(20, 1)
        self.device_delay_s = device_delay_s

    def forward(self, x):
        if self.device_delay_s:
            time.sleep(self.device_delay_s)  # planted: this rank's device is slower
        return self.fc(x)


def ddp_setup(rank, world_size, port):
    """
    Args:
        rank: Unique identifier of each process
        world_size: Total number of processes
    """
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    init_process_group(backend="gloo", rank=rank, world_size=world_size)


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id):
        self.gpu_id = gpu_id
        self.train_data = train_data
        self.optimizer = optimizer
        self.model = DDP(model)
        self.step_times = []

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[Rank{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        end = time.perf_counter()
        for source, targets in self.train_data:
            self._run_batch(source, targets)
            self.step_times.append(time.perf_counter() - end)
            end = time.perf_counter()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)


def prepare_dataloader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=False, shuffle=False,
                      sampler=DistributedSampler(dataset))


def main(rank, world_size, args):
    torch.set_num_threads(1)
    ddp_setup(rank, world_size, args.master_port)
    torch.manual_seed(0)
    dataset = MyTrainDataset(args.dataset_size)
    model = Regressor(device_delay_s=0.020 if rank == 1 else 0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    train_data = prepare_dataloader(dataset, args.batch_size)
    trainer = Trainer(model, train_data, optimizer, rank)
    trainer.train(args.total_epochs)
    destroy_process_group()
    if args.timing_out:
        root, ext = os.path.splitext(args.timing_out)
        with open("%s.rank%d%s" % (root, rank, ext), "w") as f:
            json.dump({"pid": os.getpid(), "rank": rank, "steps": len(trainer.step_times),
                       "step_times_s": trainer.step_times}, f)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description='simple distributed training job')
    parser.add_argument('--total-epochs', default=2, type=int, help='Total epochs to train the model')
    parser.add_argument('--batch-size', default=32, type=int, help='Input batch size on each device')
    parser.add_argument('--dataset-size', default=1024, type=int)
    parser.add_argument('--master-port', default=12355, type=int)
    parser.add_argument('--timing-out', help="write each rank's own step timing (JSON)")
    args = parser.parse_args()

    world_size = 2
    mp.spawn(main, args=(world_size, args), nprocs=world_size)
