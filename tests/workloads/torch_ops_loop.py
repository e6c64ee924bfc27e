"""A small CPU training loop (an MLP and a conv layer, SGD) for `--trace=torch-ops`
(tests/e2e/test_torch_ops.py). `--profile OUT.json` runs the same program under torch.profiler
(CPU activity, from right after `import torch` to the end, as trainprof records it) and writes its
key_averages() rows: name, calls, self and total CPU time in us. `--steps N` (default 20).
`--warmup N` (default 0) runs N steps first, outside the measured loop: the first steps of each
operator and shape carry one-time costs (oneDNN/MKL set-up, first-touch page faults) of several ms
that vary from run to run. With it, the profiler enters after the warm-up and the measured loop
is one NVTX range, "measured" (torch.cuda.nvtx, where it loads), for `trainprof run
--capture-range=nvtx:measured`: both tools then time the same steady-state steps."""

import argparse
import json
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--profile", default=None)
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--warmup", type=int, default=0)
args = parser.parse_args()


def start_profiler():
    p = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    p.__enter__()
    return p


prof = start_profiler() if args.profile and not args.warmup else None

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 16 * 16, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 3, 16, 16)
y = torch.randint(0, 10, (32,))


def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


nvtx = None
if args.warmup:
    for _ in range(args.warmup):
        step()
    try:
        torch.cuda.nvtx.range_push("measured")
        nvtx = torch.cuda.nvtx
    except Exception:  # a PyTorch without NVTX (a CPU build)
        pass
    if args.profile:
        prof = start_profiler()
start = time.perf_counter()
for _ in range(args.steps):
    step()
elapsed = time.perf_counter() - start
if nvtx is not None:
    nvtx.range_pop()
print("loop %.6f s" % elapsed)

if prof is not None:
    prof.__exit__(None, None, None)
    rows = [{"name": e.key, "calls": e.count, "self_cpu_time_total_us": e.self_cpu_time_total,
             "cpu_time_total_us": e.cpu_time_total} for e in prof.key_averages()]
    rows.sort(key=lambda r: -r["self_cpu_time_total_us"])
    with open(args.profile, "w") as f:
        json.dump({"operators": rows, "loop_s": elapsed}, f)
