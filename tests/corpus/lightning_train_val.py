"""A LightningModule trained with Trainer.fit on a train and a val DataLoader (2 workers each),
in the style of Lightning's quick-start autoencoder, on random 28x28 images.

Planted truth: the training set's __getitem__ is slow (a 2 ms sleep: an expensive augmentation),
so the training loader's workers cannot keep up: input-bound; the val loader (fast items) runs
after each training epoch.

    lightning_train_val.py [--epochs N] [--train-batches N] [--val-batches N] [--timing-out FILE]

--timing-out FILE: at exit, this script's own measurement as JSON from a Callback: the time
between consecutive on_train_batch_end calls (the first from on_train_epoch_start), which is the
whole training step, data loading included, as Lightning's ThroughputMonitor counts it; and the
time from on_train_batch_start to on_train_batch_end.
"""

import argparse
import json
import os
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

try:
    import lightning.pytorch as L
except ImportError:  # the older package name
    import pytorch_lightning as L


class Digits(Dataset):
    def __init__(self, n, augment_s, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.rand(n, 1, 28, 28, generator=g)
        self.augment_s = augment_s

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        if self.augment_s:
            time.sleep(self.augment_s)  # planted: an expensive augmentation
        return self.images[i], 0


class LitAutoEncoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 28 * 28))

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        x_hat = self.decoder(self.encoder(x))
        self.log("val_loss", F.mse_loss(x_hat, x))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class StepTimer(L.Callback):
    def __init__(self):
        self.step_times = []
        self.batch_times = []

    def on_train_epoch_start(self, trainer, pl_module):
        self.last_end = time.perf_counter()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self.batch_start = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        now = time.perf_counter()
        self.step_times.append(now - self.last_end)
        self.batch_times.append(now - self.batch_start)
        self.last_end = now


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--train-batches", type=int, default=12)
    parser.add_argument("--val-batches", type=int, default=3)
    parser.add_argument("--timing-out")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    train_loader = DataLoader(Digits(args.batch_size * args.train_batches, 0.002, seed=0),
                              batch_size=args.batch_size, shuffle=True, num_workers=2, persistent_workers=True)
    val_loader = DataLoader(Digits(args.batch_size * args.val_batches, 0.0, seed=1),
                            batch_size=args.batch_size, num_workers=2)
    timer = StepTimer()
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=args.epochs, num_sanity_val_steps=0,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[timer])
    trainer.fit(LitAutoEncoder(), train_loader, val_loader)

    if args.timing_out:
        with open(args.timing_out, "w") as f:
            json.dump({"pid": os.getpid(), "steps": len(timer.step_times), "step_times_s": timer.step_times,
                       "batch_times_s": timer.batch_times}, f)


if __name__ == "__main__":
    main()
