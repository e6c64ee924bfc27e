"""A small CPU training loop profiled with torch.profiler the way users do it: a schedule
(wait/warmup/active), a DataLoader, SGD, `prof.step()` once per batch, and the trace written by
`tensorboard_trace_handler` (or `export_chrome_trace`). Beside the trace it writes torch.profiler's own
`key_averages()` of the same profile as JSON: the reference trainprof's operator table is checked
against (tests/e2e/test_host_ops.py) and how tests/data/kineto/ was recorded.

    kineto_record.py --out DIR [--steps N] [--active N] [--with-stack] [--chrome]
        one process; DIR gets <host>_<pid>.<ms>.pt.trace.json[.gz] (tensorboard_trace_handler)
        or trace.json (--chrome: export_chrome_trace), and key_averages.json
    kineto_record.py --out DIR --ddp [--port P] ...
        two gloo DDP ranks started with torch.multiprocessing.spawn, one trace per rank (each with
        distributedInfo) and key_averages_rank<R>.json

key_averages.json: {"operators": [{name, calls, self_cpu_time_total_us, cpu_time_total_us}],
"user_annotations": [...], "python_functions": [...] (with --with-stack)}, each sorted by self time,
every name.
"""

import argparse
import json
import os

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, TensorDataset


def key_averages_json(prof):
    """torch.profiler's own tables of the profile, per event name: calls and self/total CPU time (us).
    operators: the cpu_op events (key_averages() less the user annotations such as ProfilerStep*),
    user_annotations: those, python_functions: what key_averages(include_python_functions=True)
    adds (with_stack=True only)."""

    def row(e):
        return {"name": e.key, "calls": e.count, "self_cpu_time_total_us": e.self_cpu_time_total,
                "cpu_time_total_us": e.cpu_time_total}

    plain = prof.key_averages()
    ops = [row(e) for e in plain if not e.is_user_annotation]
    annotations = [row(e) for e in plain if e.is_user_annotation]
    known = {e.key for e in plain}
    try:
        every = prof.key_averages(include_python_functions=True)
    except TypeError:  # a PyTorch without the argument keeps Python functions out
        every = []
    pyfuncs = [row(e) for e in every if e.key not in known]
    out = {}
    for name, rows in (("operators", ops), ("user_annotations", annotations), ("python_functions", pyfuncs)):
        out[name] = sorted(rows, key=lambda r: (-r["self_cpu_time_total_us"], r["name"]))
    return out


def train(out, steps, active, with_stack, chrome, rank=None):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    if rank is not None:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = TensorDataset(torch.randn(steps * 16, 32), torch.randint(0, 4, (steps * 16,)))
    loader = DataLoader(data, batch_size=16, shuffle=True, num_workers=0)
    wait, warmup = 1, 1
    sched = schedule(wait=wait, warmup=warmup, active=active, repeat=1)
    handler = None if chrome else tensorboard_trace_handler(out, use_gzip=True)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler,
                 with_stack=with_stack) as prof:
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    if chrome:
        prof.export_chrome_trace(os.path.join(out, "trace.json"))
    name = "key_averages.json" if rank is None else "key_averages_rank%d.json" % rank
    with open(os.path.join(out, name), "w") as f:
        json.dump(key_averages_json(prof), f, indent=1)


def ddp_rank(rank, world, port, args):
    import torch.distributed as dist
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    try:
        train(args.out, args.steps, args.active, args.with_stack, args.chrome, rank=rank)
    finally:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--active", type=int, default=3)
    ap.add_argument("--with-stack", action="store_true")
    ap.add_argument("--chrome", action="store_true")
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--port", type=int, default=29533)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.ddp:
        import torch.multiprocessing as mp
        mp.spawn(ddp_rank, args=(2, args.port, args), nprocs=2, join=True)
    else:
        train(args.out, args.steps, args.active, args.with_stack, args.chrome)


if __name__ == "__main__":
    main()
