"""A report from per-process summaries is the report from the traces (collector/summary/,
docs/summary-format.md), on inputs the golden cases do not have: torch.profiler traces (operators
and Python functions, the shared GPU traces' kernels and NCCL) and a real recording of a DataLoader
training run with --sample (workers, stacks, samples), and of a PyTorch 2.x loop with
--trace=torch-ops --backtrace nvtx (operators by phase, call sites; .venv).

Each report is made twice: as is, and with TRAINPROF_SUMMARY_ROUNDTRIP=1, which writes every
process's summary as a summary file's bytes and reads it back before the merge. Text, JSON and CSV
must be the same, byte for byte. (`golden_summaries` does the same on every golden case.)"""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, PYTHON, SOURCE_DIR, TRAINPROF, WORKLOADS

KINETO = os.path.join(SOURCE_DIR, "tests", "data", "kineto")
SHARED_KINETO = os.path.join(SOURCE_DIR, "..", "shared", "data", "kineto")


class SummariesTest(unittest.TestCase):
    def outputs(self, paths, roundtrip):
        env = dict(os.environ)
        env.pop("TRAINPROF_SUMMARY_ROUNDTRIP", None)
        if roundtrip:
            env["TRAINPROF_SUMMARY_ROUNDTRIP"] = "1"
        out = {}
        for fmt in ("text", "json"):
            p = subprocess.run([TRAINPROF, "report", "--format", fmt, *paths], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            out[fmt] = p.stdout
        with tempfile.TemporaryDirectory() as csv:
            p = subprocess.run([TRAINPROF, "report", "--format", "csv", "-o", csv + "/", *paths], capture_output=True,
                               text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            for name in sorted(os.listdir(csv)):
                with open(os.path.join(csv, name), encoding="utf-8") as f:
                    out["csv/" + name] = f.read()
        return out

    def assertSameReport(self, paths):
        plain = self.outputs(paths, False)
        through_files = self.outputs(paths, True)
        self.assertEqual(sorted(plain), sorted(through_files))
        for name in plain:
            self.assertEqual(plain[name], through_files[name], "%s differs for %s" % (name, paths))
        return plain

    def test_torch_profiler_cpu_traces_with_operators(self):
        ranks = sorted(glob.glob(os.path.join(KINETO, "ddp_gloo_rank*.pt.trace.json.gz")))
        self.assertEqual(len(ranks), 2)
        out = self.assertSameReport(ranks)
        self.assertIn("aten::", out["text"])  # the operator table, from the summaries
        self.assertSameReport([os.path.join(KINETO, "cpu_steps.pt.trace.json.gz")])

    def test_shared_gpu_traces(self):
        traces = sorted(glob.glob(os.path.join(SHARED_KINETO, "*.json.gz")))
        if not traces:
            self.skipTest("no shared Kineto traces at %s" % SHARED_KINETO)
        for t in traces:
            with self.subTest(trace=os.path.basename(t)):
                out = self.assertSameReport([t])
                self.assertIn("CUDA", out["text"])

    def record(self, options, argv):
        out_dir = tempfile.mkdtemp(prefix="trainprof-summaries-")
        self.addCleanup(shutil.rmtree, out_dir, True)
        p = subprocess.run([TRAINPROF, "run", "--follow-children", *options, "-o", out_dir, "--", *argv],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(glob.glob(os.path.join(out_dir, "pid-*.trace")))

    def test_recorded_dataloader_run_with_samples(self):
        traces = self.record(["--sample", "1000"], [PYTHON, os.path.join(WORKLOADS, "dataloader_train.py"),
                                                    "--workers", "2", "--batches", "12"])
        self.assertGreaterEqual(len(traces), 3)  # the main process and its two workers
        out = self.assertSameReport(traces)
        self.assertIn("DataLoader worker", out["text"])

    def test_recorded_torch_ops_with_backtraces(self):
        if not os.path.exists(MODERN_PYTHON):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        traces = self.record(["--trace=torch-ops", "--backtrace", "nvtx"],
                             [MODERN_PYTHON, os.path.join(WORKLOADS, "torch_ops_loop.py"), "--steps", "4"])
        out = self.assertSameReport(traces)
        self.assertIn("operators_by_phase", out["json"])
        self.assertIn("callsites", out["json"])


if __name__ == "__main__":
    unittest.main()
