"""A Lightning training run (CPU) with one planted bottleneck, for the end-to-end Lightning tests.

    lightning_train.py CASE [--epochs N] [--batches N] [--manual] [--workers N] [--actions FILE]

CASE:
  getitem   input-bound: __getitem__ sleeps 4 ms per item (8 items per batch), tiny model
  compute   compute-bound: fast data, a model whose forward+backward take ~300 ms (the batch is
            repeated as often as this machine and PyTorch version need for that)
--manual      manual optimisation (manual_backward and the optimizer step inside training_step)
--actions F   runs with Lightning's SimpleProfiler and writes its action counts as JSON to F,
              so a test can compare trainprof's ranges with the peer tool's own numbers
"""

import argparse
import json
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

try:
    import lightning.pytorch as pl
    from lightning.pytorch.profilers import SimpleProfiler
except ImportError:  # the older package name
    import pytorch_lightning as pl
    from pytorch_lightning.profilers import SimpleProfiler


class Items(Dataset):
    def __init__(self, n, item_sleep_s, width):
        self.n, self.item_sleep_s, self.width = n, item_sleep_s, width

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.item_sleep_s:
            time.sleep(self.item_sleep_s)
        return torch.full((self.width,), float(i % 7)), i % 4


class Net(pl.LightningModule):
    def __init__(self, width, depth, manual, reps=1):
        super().__init__()
        self.reps = reps
        layers = [torch.nn.Linear(width, width) for _ in range(depth)]
        self.body = torch.nn.Sequential(*layers, torch.nn.Linear(width, 4))
        self.automatic_optimization = not manual

    def forward(self, x):
        return self.body(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.reps > 1:
            x, y = x.repeat(self.reps, 1), y.repeat(self.reps)
        loss = F.cross_entropy(self(x), y)
        if not self.automatic_optimization:
            opt = self.optimizers()
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def calibrate(body, width, target_s=0.300):
    """How many copies of a batch of 8 make one forward+backward of `body` take about target_s."""
    reps = 4
    while True:
        x = torch.zeros(8 * reps, width)
        start = time.perf_counter()
        body(x).sum().backward()
        took = time.perf_counter() - start
        if took >= target_s / 4 or reps >= 4096:
            body.zero_grad()
            return max(1, min(4096, round(reps * target_s / max(took, 1e-6))))
        reps *= 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["getitem", "compute"])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--manual", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--actions")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    batch = 8
    if args.case == "getitem":
        item_sleep, width, depth = 0.004, 64, 1
    else:
        item_sleep, width, depth = 0.0, 256, 4
    train = DataLoader(Items(batch * args.batches, item_sleep, width), batch_size=batch,
                       num_workers=args.workers, persistent_workers=args.workers > 0)
    val = DataLoader(Items(batch * 3, item_sleep, width), batch_size=batch, num_workers=0)
    profiler = SimpleProfiler() if args.actions else None
    trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=args.epochs, num_sanity_val_steps=0,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, profiler=profiler)
    net = Net(width, depth, args.manual)
    if args.case == "compute":
        net.reps = calibrate(net.body, width)
        print("batch repeated", net.reps, "times")
    trainer.fit(net, train, val)
    if args.actions:
        counts = {name: len(d) for name, d in profiler.recorded_durations.items()}
        with open(args.actions, "w") as f:
            json.dump(counts, f, indent=1, sort_keys=True)
    print("epochs", args.epochs, "batches", args.batches)


if __name__ == "__main__":
    main()
