"""A small PyTorch loop for the end-to-end tests of the Python shim itself (tests/e2e/test_phases.py).

    shim_program.py MODE [--workers N] [--steps N]

MODE:
  train          train --steps steps, then print what the program's own sitecustomize left:
                 "sitecustomize: <TRAINPROF_TEST_SITECUSTOMIZE> <sitecustomize.VALUE> <its __file__>"
                 (the exception's name for VALUE if `import sitecustomize` raises)
  raise_forward  the model's forward raises ValueError("planted in forward") at the third step
  raise_getitem  the dataset's __getitem__ raises KeyError("planted in getitem") at item 5
  raise_step     the optimizer's step raises RuntimeError("planted in step") at the second step
  bad_lr         torch.optim.SGD(lr=-1): torch's own ValueError from Optimizer.__init__
Each exception is left uncaught: Python prints its traceback and exits 1.
"""

import argparse
import os

import torch
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self, fail_at=None):
        self.fail_at = fail_at

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError("planted in getitem")
        return torch.full((8,), float(i % 5)), i % 2


class Net(torch.nn.Module):
    def __init__(self, fail_at=None):
        super().__init__()
        self.fc = torch.nn.Linear(8, 2)
        self.calls = 0
        self.fail_at = fail_at

    def forward(self, x):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ValueError("planted in forward")
        return self.fc(x)


class FailingSGD(torch.optim.SGD):
    def __init__(self, params, fail_at):
        super().__init__(params, lr=0.1)
        self.steps = 0
        self.fail_at = fail_at

    def step(self, closure=None):
        self.steps += 1
        if self.steps == self.fail_at:
            raise RuntimeError("planted in step")
        return super().step(closure)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["train", "raise_forward", "raise_getitem", "raise_step", "bad_lr"])
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    model = Net(fail_at=3 if args.mode == "raise_forward" else None)
    if args.mode == "bad_lr":
        torch.optim.SGD(model.parameters(), lr=-1)
    if args.mode == "raise_step":
        opt = FailingSGD(model.parameters(), fail_at=2)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = DataLoader(Items(fail_at=5 if args.mode == "raise_getitem" else None), batch_size=4,
                      num_workers=args.workers, shuffle=False)
    for step, (x, y) in enumerate(data):
        if step == args.steps:
            break
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    if args.mode == "train":
        try:
            import sitecustomize
            value, where = getattr(sitecustomize, "VALUE", "-"), getattr(sitecustomize, "__file__", "-")
        except Exception as e:  # a failing sitecustomize fails again (it is not in sys.modules)
            value, where = type(e).__name__, "-"
        print("sitecustomize: %s %s %s" % (os.environ.get("TRAINPROF_TEST_SITECUSTOMIZE", "-"), value, where))


if __name__ == "__main__":
    main()
