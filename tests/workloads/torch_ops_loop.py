"""A small CPU training loop (an MLP and a conv layer, SGD) for `--trace=torch-ops`
(tests/e2e/test_torch_ops.py). `--profile OUT.json` runs the same program under torch.profiler
(CPU activity, from right after `import torch` to the end, as trainprof records it) and writes its
key_averages() rows: name, calls, self and total CPU time in us. `--steps N` (default 20)."""

import argparse
import json
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--profile", default=None)
parser.add_argument("--steps", type=int, default=20)
args = parser.parse_args()

prof = None
if args.profile:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    prof.__enter__()

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 16 * 16, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 3, 16, 16)
y = torch.randint(0, 10, (32,))
start = time.perf_counter()
for step in range(args.steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
elapsed = time.perf_counter() - start
print("loop %.6f s" % elapsed)

if prof is not None:
    prof.__exit__(None, None, None)
    rows = [{"name": e.key, "calls": e.count, "self_cpu_time_total_us": e.self_cpu_time_total,
             "cpu_time_total_us": e.cpu_time_total} for e in prof.key_averages()]
    rows.sort(key=lambda r: -r["self_cpu_time_total_us"])
    with open(args.profile, "w") as f:
        json.dump({"operators": rows, "loop_s": elapsed}, f)
