"""A small CPU training loop with DataLoader(num_workers=N), for the end-to-end tests.

    dataloader_train.py [--workers 2] [--batches 16] [--kill-worker]

--kill-worker: after a few batches, SIGKILL one DataLoader worker (as the OOM killer would).
PyTorch then raises in the main process; the script reports that and exits 0, so the test can
check the killed worker's trace.
"""

import argparse
import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((16,), float(i)), i % 3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batches", type=int, default=16)
    parser.add_argument("--kill-worker", action="store_true")
    args = parser.parse_args()

    torch.set_num_threads(1)
    model = torch.nn.Linear(16, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Slow(), batch_size=8, num_workers=args.workers)
    it = iter(loader)
    print("workers", " ".join(str(w.pid) for w in it._workers), flush=True)
    try:
        for step in range(args.batches):
            x, y = next(it)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            if args.kill_worker and step == 4:
                victim = it._workers[0].pid
                print("killing", victim, flush=True)
                os.kill(victim, signal.SIGKILL)
                time.sleep(0.5)
    except RuntimeError as error:
        print("dataloader error:", str(error).splitlines()[0], flush=True)
    del it
    print("trained", flush=True)


if __name__ == "__main__":
    sys.exit(main())
