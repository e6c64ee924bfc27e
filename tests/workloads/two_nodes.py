"""One node of a two-node DDP job (four gloo ranks on CPU, two per node), as a per-node launcher
such as `torchrun --nnodes 2 --node-rank N` starts it: node N starts ranks 2N and 2N + 1. Run on one
machine, each node in a UTS namespace of its own named like a host (tests/e2e/test_hosts.py:
`unshare --uts sh -c 'hostname node-b && exec trainprof run ... -- python3 two_nodes.py --node 1'`),
its ranks record that host. Like a multi-node script, the ranks meet at a dist.barrier() after
init_process_group and twice at the end; rank 3 (--slow-rank) computes ~150 ms more before each
backward, where DDP all-reduces the gradients, so the other ranks wait for it: far above what a
loaded machine's scheduling adds to a rank (30 ms was not: CI under load found no straggler, one
run in a few).

    two_nodes.py --node N [--steps N] [--slow-rank R] [--port P]    starts node N's two ranks
"""

import argparse
import os
import subprocess
import sys


def run(rank, world, steps, slow_rank, port):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset

    from ddp_straggler import busy  # the same extra work as the one-host straggler (this directory)

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    dist.barrier()
    model = DDP(torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(steps * 8, 32), torch.randint(0, 4, (steps * 8,)))
    for x, y in DataLoader(data, batch_size=8):
        opt.zero_grad()
        out = model(x)
        if rank == slow_rank:
            busy(0.150)
        F.cross_entropy(out, y).backward()
        opt.step()
    dist.barrier()
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--node", type=int, required=True)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--slow-rank", type=int, default=3)
    parser.add_argument("--port", type=int, default=29541)
    parser.add_argument("--rank", type=int)
    args = parser.parse_args()
    world = 4
    if args.rank is not None:
        run(args.rank, world, args.steps, args.slow_rank, args.port)
        return
    ranks = []
    for local in range(2):
        rank = 2 * args.node + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world))
        ranks.append(subprocess.Popen(
            [sys.executable, "-u", os.path.abspath(__file__), "--node", str(args.node), "--rank", str(rank),
             "--steps", str(args.steps), "--slow-rank", str(args.slow_rank), "--port", str(args.port)], env=env))
    codes = [r.wait() for r in ranks]
    print("node", args.node, "ranks exited", *codes)
    sys.exit(max(codes))


if __name__ == "__main__":
    main()
