"""The modern stack users run, from .venv (scripts/setup): Lightning's loops named as its
SimpleProfiler names them and split into steps, DDP ranks started by torchrun, and NVTX ranges from
torch.cuda.nvtx and the nvtx package. (The PyTorch tests of test_pytorch, test_phases and
test_bottleneck also run against PyTorch 2.x: the ctest entries e2e_*_torch2.)"""

import json
import os
import unittest

from common import MODERN_PYTHON, NO_VENV, WORKLOADS, TraceTest, by_pid, free_port, ranges

LIGHTNING = os.path.join(WORKLOADS, "lightning_train.py")
DDP = os.path.join(WORKLOADS, "ddp_straggler.py")
TORCHRUN = os.path.join(os.path.dirname(MODERN_PYTHON), "torchrun")


class ModernTest(TraceTest):
    def setUp(self):
        if not os.access(MODERN_PYTHON, os.X_OK):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        super().setUp()

    def main_process(self, rep):
        mains = [p for p in rep["processes"] if p["role"] == "main"]
        self.assertEqual(len(mains), 1)
        return mains[0]


class LightningTest(ModernTest):
    def lightning(self, case, *args):
        self.profile([MODERN_PYTHON, LIGHTNING, case] + list(args))
        rep = self.report()
        self.assertEqual(rep["bottleneck"]["status"], "ok")
        procs = rep["bottleneck"]["processes"]
        self.assertEqual(len(procs), 1)
        return rep, procs[0]

    def test_actions_match_simple_profiler_counts(self):
        actions_file = os.path.join(self.out, "actions.json")
        rep, p = self.lightning("getitem", "--actions", actions_file)
        with open(actions_file) as f:
            simple = json.load(f)  # Lightning's SimpleProfiler: action -> calls, same run
        ours = {r["name"][len("trainprof:"):]: r["calls"] for r in rep["nvtx_ranges"]
                if r["name"].startswith("trainprof:")}
        self.assertGreater(len(simple), 30)
        for action, calls in simple.items():
            self.assertEqual(ours.get(action), calls, action)
        # 2 epochs of 10 batches, 3 validation batches after each epoch.
        self.assertEqual(ours["[Strategy]SingleDeviceStrategy.training_step"], 20)
        self.assertEqual(ours["[Strategy]SingleDeviceStrategy.backward"], 20)
        self.assertEqual(ours["[LightningModule]Net.optimizer_step"], 20)
        self.assertEqual(ours["[Strategy]SingleDeviceStrategy.validation_step"], 6)
        # The forward inside validation_step (no grad, eval mode) is a row of its own.
        self.assertEqual(ours["Net.forward"], 20)
        self.assertEqual(ours["Net.forward [eval]"], 6)
        self.assertEqual(p["steps"], 20)
        self.assertEqual(p["eval_steps"], 6)
        self.assertEqual(p["verdict"], "input_bound")
        self.assertEqual(p["advice"]["cause"], "getitem")

    def test_ranges_are_recorded_without_a_lightning_profiler(self):
        rep, p = self.lightning("getitem", "--epochs", "1", "--batches", "6")
        names = ranges(rep["nvtx_ranges"])
        self.assertEqual(names["trainprof:[Strategy]SingleDeviceStrategy.training_step"]["calls"], 6)
        self.assertEqual(names["trainprof:run_training_batch"]["calls"], 6)
        self.assertEqual(p["steps"], 6)

    def test_automatic_optimization_closure_is_forward_and_backward(self):
        # optimizer.step(closure) runs training_step and backward inside the optimizer step: they
        # stay forward and backward (docs/analysis.md, "Step breakdown").
        # Batches from the main process (see test_bottleneck's compute case: worker replies are
        # delayed on a loaded machine).
        rep, p = self.lightning("compute", "--epochs", "1", "--batches", "8", "--workers", "0")
        self.assertEqual(p["verdict"], "compute_bound")
        parts = p["parts"]
        self.assertGreater(parts["forward"]["percent"] + parts["backward"]["percent"], 80)
        self.assertGreater(parts["forward"]["percent"], 20)
        self.assertGreater(parts["backward"]["percent"], 20)
        self.assertLess(parts["optimizer"]["percent"], 10)

    def test_manual_optimization_splits_training_step(self):
        rep, p = self.lightning("compute", "--epochs", "1", "--batches", "8", "--manual", "--workers", "0")
        self.assertEqual(p["verdict"], "compute_bound")
        parts = p["parts"]
        self.assertGreater(parts["forward"]["percent"], 20)
        self.assertGreater(parts["backward"]["percent"], 20)
        self.assertLess(parts["optimizer"]["percent"], 10)
        names = ranges(rep["nvtx_ranges"])
        self.assertEqual(names["trainprof:optimizer_step"]["calls"], 8)  # Lightning's manual-loop action
        self.assertEqual(names["trainprof:[LightningModule]Net.on_before_backward"]["calls"], 8)


class TorchrunTest(ModernTest):
    def test_torchrun_ranks_and_straggler(self):
        self.profile([TORCHRUN, "--nproc-per-node", "2", "--master-port", str(free_port()), DDP, "--steps", "10",
                      "--slow-rank", "1"])
        rep = self.report()
        # The launcher and two ranks recorded; children they started by vfork that left no trace
        # (`/sbin/ldconfig -p`, which ctypes.util.find_library runs with a cleared environment) are rows marked
        # not recorded, from their parents' wait records.
        procs = [p for p in rep["processes"] if p["recorded"] == "yes"]
        self.assertEqual(len(procs), 3)
        for p in rep["processes"]:
            if p["recorded"] != "yes":
                self.assertFalse(p["start_known"], p)
        launcher = [p for p in procs if p["role"] == "launcher"]
        self.assertEqual(len(launcher), 1)
        ranks = {p["rank"]: p for p in procs if p["role"].startswith("rank")}
        self.assertEqual(sorted(ranks), [0, 1])
        for r in ranks.values():
            self.assertEqual(r["ppid"], launcher[0]["pid"])
            self.assertEqual((r["exit"]["kind"], r["exit"]["code"]), ("exit", 0))
        straggler = rep["bottleneck"]["ranks"]["straggler"]
        self.assertEqual(straggler["rank"], 1)
        self.assertGreater(straggler["median_lateness_ns"], 40e6)  # planted 60 ms


NVTX_SCRIPT = """
import torch, nvtx
for i in range(7):
    torch.cuda.nvtx.range_push("torch_range")
    with nvtx.annotate("pkg_range", domain="pkg_domain", color="blue"):
        pass
    torch.cuda.nvtx.mark("torch_mark")
    torch.cuda.nvtx.range_pop()
with torch.cuda.nvtx.range("torch_ctx_range"):
    pass
print("ok")
"""


class NvtxTest(ModernTest):
    def test_torch_cuda_nvtx_and_nvtx_package(self):
        proc = self.profile([MODERN_PYTHON, "-c", NVTX_SCRIPT], follow=False)
        self.assertEqual(proc.stdout.strip(), "ok")
        rep = self.report()
        names = ranges(rep["nvtx_ranges"])
        self.assertEqual(names["torch_range"]["calls"], 7)
        self.assertEqual(names["pkg_domain:pkg_range"]["calls"], 7)
        self.assertEqual(names["torch_ctx_range"]["calls"], 1)
        marks = {m["name"]: m["count"] for m in rep["nvtx_marks"]}
        self.assertEqual(marks["torch_mark"], 7)


if __name__ == "__main__":
    unittest.main()
