"""A PyTorch training loop on the GPU with DataLoader workers, for scripts/gpu_check's comparison
with torch.profiler, and a launch loop for the overhead figure.

    gpu_train.py [--steps N] [--torch-profiler OUT.json]
        trains N steps after 3 warm-up steps; the N steps lie between cudaProfilerStart and
        cudaProfilerStop (torch.cuda.profiler), so `trainprof run --capture-range=cudaProfilerApi`
        records just them; with --torch-profiler, torch.profiler (CPU + CUDA activity) profiles the
        same N steps and {"kernels": count, "kernel_ns": total GPU time} goes to OUT.json
    gpu_train.py --launch-loop N [--torch-profiler OUT.json]
        launches N tiny kernels back to back and prints "launches_per_s X"
"""

import argparse
import json
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def kernel_totals(prof):
    """Kernels torch.profiler saw: (count, total GPU ns)."""
    count, total_us = 0, 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            count += 1
            total_us += e.time_range.elapsed_us()
    return count, int(total_us * 1000)


def train(steps, out):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn((steps + 3) * 64, 1024), torch.randint(0, 10, ((steps + 3) * 64,)))
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    it = iter(DataLoader(data, batch_size=64, num_workers=2))

    def step():
        x, y = next(it)
        x, y = x.to(dev), y.to(dev)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    if out:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
        count, ns = kernel_totals(prof)
        with open(out, "w") as f:
            json.dump({"kernels": count, "kernel_ns": ns}, f)
    else:
        torch.cuda.profiler.start()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    print("trained", steps, "steps")


def launch_loop(n, out):
    x = torch.zeros(1, device="cuda")
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()

    def run():
        start = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    if out:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            took = run()
    else:
        took = run()
    print("launches_per_s %.0f" % (n / took))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--torch-profiler", default="")
    ap.add_argument("--launch-loop", type=int, default=0)
    args = ap.parse_args()
    if args.launch_loop:
        launch_loop(args.launch_loop, args.torch_profiler)
    else:
        train(args.steps, args.torch_profiler)


if __name__ == "__main__":
    main()
