"""CPU training loops with one planted bottleneck each, for the end-to-end verdict tests.

    planted.py CASE [--workers N] [--steps N]

CASE:
  getitem      input-bound: __getitem__ sleeps 4 ms per item (8 items per batch), tiny model
  collate      input-bound: collate_fn sleeps 40 ms per batch, fast items
  compute      compute-bound: fast data, a model whose forward+backward take ~300 ms (the batch is
               repeated as often as this machine and PyTorch version need for that)
  worker_init  worker start-up: worker_init_fn sleeps 400 ms, then fast data and a medium model
The numbers are planted so the verdict is unambiguous on a loaded 2-core machine.
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, default_collate


class Items(Dataset):
    def __init__(self, n, item_sleep_s):
        self.n = n
        self.item_sleep_s = item_sleep_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.item_sleep_s:
            time.sleep(self.item_sleep_s)
        return torch.full((64,), float(i % 7)), i % 4


def slow_collate(batch):
    time.sleep(0.040)
    return default_collate(batch)


def slow_worker_init(worker_id):
    time.sleep(0.400)


def heavy_model():
    return torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)], torch.nn.Linear(256, 4))


def calibrate(model, project, target_s=0.300):
    """How many copies of a batch of 8 make one forward+backward take about target_s here
    (PyTorch 2.x on the CPU is several times faster than 1.13 on the same model)."""
    reps = 4
    while True:
        x = torch.zeros(8 * reps, 64)
        start = time.perf_counter()
        model(project(x)).sum().backward()
        took = time.perf_counter() - start
        if took >= target_s / 4 or reps >= 4096:
            return max(1, min(4096, round(reps * target_s / max(took, 1e-6))))
        reps *= 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["getitem", "collate", "compute", "worker_init"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=24)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    batch = 8
    item_sleep = 0.004 if args.case == "getitem" else 0.0
    collate = slow_collate if args.case == "collate" else None
    init_fn = slow_worker_init if args.case == "worker_init" else None
    loader = DataLoader(Items(args.steps * batch, item_sleep), batch_size=batch, num_workers=args.workers,
                        collate_fn=collate, worker_init_fn=init_fn)
    if args.case == "compute":
        model = heavy_model()
        project = torch.nn.Linear(64, 256)
    else:
        model = torch.nn.Linear(64, 4)
        project = None
    reps = calibrate(model, project) if project is not None else 1
    if project is not None:
        print("batch repeated", reps, "times")
    params = list(model.parameters()) + (list(project.parameters()) if project else [])
    opt = torch.optim.SGD(params, lr=0.01)
    steps = 0
    for x, y in loader:
        opt.zero_grad()
        if project is not None:
            x = project(x.repeat(reps, 1))
            y = y.repeat(reps)
            out = model(x)
        else:
            out = model(x)
        F.cross_entropy(out, y).backward()
        opt.step()
        steps += 1
    print("steps", steps)


if __name__ == "__main__":
    main()
