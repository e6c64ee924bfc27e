"""What observing DDP's gradient all-reduce through PyTorch's profiler costs (docs/analysis.md,
"Collectives"): a small DDP loop (gloo, world size 1, one thread) timed bare, then inside
torch.autograd.profiler.profile(); prints both per-step times and the c10d/gloo events it saw.
Run: /usr/bin/python3 bench/python/ddp_profiler_cost.py (or .venv/bin/python). Not run by ctest."""
import os, time, torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
torch.set_num_threads(1)
os.environ["MASTER_ADDR"]="127.0.0.1"; os.environ["MASTER_PORT"]=os.environ.get("PORT", "29533")
dist.init_process_group("gloo", rank=0, world_size=1)
m = DDP(nn.Sequential(nn.Linear(64,64), nn.ReLU(), nn.Linear(64,8)))
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x = torch.randn(32,64)
def loop(n):
    t=time.perf_counter()
    for _ in range(n):
        opt.zero_grad(); m(x).sum().backward(); opt.step()
    return (time.perf_counter()-t)/n
loop(20)
print("plain %.0f us/step" % (loop(300)*1e6))
with torch.autograd.profiler.profile() as prof:
    print("profile() %.0f us/step" % (loop(300)*1e6))
names = set(e.name for e in prof.function_events)
print([n for n in names if "reduce" in n.lower() or "gloo" in n.lower() or "c10d" in n.lower()], len(prof.function_events))
