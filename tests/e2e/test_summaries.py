"""A report from per-process summaries is the report from the traces (collector/summary/,
docs/summary-format.md), on inputs the golden cases do not have: torch.profiler traces (operators
and Python functions, the shared GPU traces' kernels and NCCL) and a real recording of a DataLoader
training run with --sample (workers, stacks, samples), and of a PyTorch 2.x loop with
--trace=torch-ops --backtrace nvtx (operators by phase, call sites; .venv).

Each report is made three times: as is; with TRAINPROF_SUMMARY_ROUNDTRIP=1, which writes every
process's summary as a summary file's bytes and reads it back before the merge; and from the files
`trainprof summarize` writes. Text, JSON and CSV must be the same, byte for byte.
(`golden_summaries` and `golden_summary_files` do the same on every golden case.) Then the summary
files as users meet them: one task per node (the srun recipe), mixed with traces, given twice, and
damaged."""

import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, PROGRAMS, PYTHON, SOURCE_DIR, TRAINPROF, WORKLOADS

KINETO = os.path.join(SOURCE_DIR, "tests", "data", "kineto")
SHARED_KINETO = os.path.join(SOURCE_DIR, "..", "shared", "data", "kineto")


class SummariesTest(unittest.TestCase):
    def outputs(self, paths, roundtrip, summarize=False):
        env = dict(os.environ)
        env.pop("TRAINPROF_SUMMARY_ROUNDTRIP", None)
        if roundtrip:
            env["TRAINPROF_SUMMARY_ROUNDTRIP"] = "1"
        if summarize:
            tmp = tempfile.mkdtemp(prefix="trainprof-summaries-")
            self.addCleanup(shutil.rmtree, tmp, True)
            p = subprocess.run([TRAINPROF, "summarize", "-o", tmp, *paths], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("summary file", p.stderr)
            paths = [tmp]
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
        for other in (self.outputs(paths, True), self.outputs(paths, False, summarize=True)):
            self.assertEqual(sorted(plain), sorted(other))
            for name in plain:
                self.assertEqual(plain[name], other[name], "%s differs for %s" % (name, paths))
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


class SummaryFilesTest(unittest.TestCase):
    """`trainprof summarize` as a map step: the golden two-host run (make_golden_traces two_hosts)."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="trainprof-summarize-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.traces = os.path.join(self.work, "traces")
        binary = os.path.realpath(shutil.which(TRAINPROF) or TRAINPROF)  # build/launcher/trainprof
        make = os.path.join(os.path.dirname(binary), "..", "tests", "golden", "make_golden_traces")
        subprocess.run([make, "two_hosts", self.traces], check=True)

    def run_tp(self, *argv, cwd=None):
        return subprocess.run([TRAINPROF, *argv], capture_output=True, text=True, cwd=cwd or self.traces)

    def test_one_task_per_node_then_one_report(self):
        report = self.run_tp("report", "--format", "json", ".")
        self.assertEqual(report.returncode, 0, report.stderr)
        # node-a's files (7200, 7210, 7211) and node-b's (7300, ...) summarised apart, as srun would.
        out = os.path.join(self.work, "summaries")
        for node in ("72", "73"):
            files = sorted("./" + f for f in os.listdir(self.traces) if f.startswith("pid-" + node))
            p = self.run_tp("summarize", "-o", out, *files)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("3 summary files written to " + out, p.stderr)
        self.assertEqual(sorted(os.listdir(out)), sorted(f.replace(".trace", ".summary") for f in os.listdir(self.traces)))
        merged = self.run_tp("report", "--format", "json", out)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        self.assertEqual(merged.stdout, report.stdout)  # node-b's clock moved back onto node-a's at the merge
        # One file at a time (xargs -P): ranks are linked to their launchers at the merge.
        each = os.path.join(self.work, "each")
        for f in sorted(os.listdir(self.traces)):
            self.assertEqual(self.run_tp("summarize", "-o", each, "./" + f).returncode, 0)
        self.assertEqual(self.run_tp("report", "--format", "json", each).stdout, report.stdout)

    def test_mixed_twice_and_damaged_inputs(self):
        out = os.path.join(self.work, "s")
        self.assertEqual(self.run_tp("summarize", "-o", out, "./pid-7300.trace").returncode, 0)
        rest = sorted("./" + f for f in os.listdir(self.traces) if f != "pid-7300.trace")
        whole = self.run_tp("report", ".")
        mixed = self.run_tp("report", os.path.join(out, "pid-7300.summary"), *rest)
        self.assertEqual(mixed.returncode, 0, mixed.stderr)
        self.assertEqual(mixed.stdout, whole.stdout)  # the text names no file
        twice = self.run_tp("report", os.path.join(out, "pid-7300.summary"), ".")
        self.assertEqual(twice.returncode, 0, twice.stderr)
        self.assertIn("pid 7300 on node-b is in two of the inputs", twice.stdout)
        self.assertIn("from pid-7300.trace it is kept, from %s left out" % os.path.join(out, "pid-7300.summary"),
                      twice.stdout)
        self.assertTrue(twice.stdout.startswith("trainprof report: 6 trace files, 6 processes"), twice.stdout[:80])
        self.assertEqual(twice.stdout.count("python3 /usr/local/bin/torchrun"), 2)  # 7200 and 7300 once each
        bad = os.path.join(out, "pid-7300.summary")
        with open(bad, "r+b") as f:
            data = f.read()
            f.seek(0)
            f.truncate()
            f.write(data[: len(data) // 2])
        damaged = self.run_tp("report", bad, *rest)
        self.assertEqual(damaged.returncode, 0, damaged.stderr)
        self.assertIn(bad + ": not a usable summary file: damaged or cut short: its CRC-32 does not match its bytes",
                      damaged.stderr)
        self.assertIn("5 processes", damaged.stdout.splitlines()[0])
        self.assertEqual(self.run_tp("report", "--strict", bad, *rest).returncode, 2)
        alone = self.run_tp("report", bad)
        self.assertEqual(alone.returncode, 2)
        self.assertIn(bad, alone.stderr)

    def test_the_recipes_of_docs_scaling(self):
        """docs/scaling.md's plain-shell recipes, as written there: srun's one task per node (here a
        loop over two node-local directories) and xargs -P over the files."""
        report = self.run_tp("report", "--format", "json", ".").stdout
        nodes = os.path.join(self.work, "nodes")
        for f in os.listdir(self.traces):  # node-a: 72xx, node-b: 73xx, as on two nodes' local disks
            node = os.path.join(nodes, "node-a" if f.startswith("pid-72") else "node-b")
            os.makedirs(node, exist_ok=True)
            shutil.copy(os.path.join(self.traces, f), node)
        env = dict(os.environ, PATH=os.path.dirname(os.path.realpath(shutil.which(TRAINPROF) or TRAINPROF)) + ":" +
                   os.environ.get("PATH", ""))
        srun = ("for node in node-a node-b; do (cd $node && trainprof summarize -o ../../run1-summaries .); done && "
                "trainprof report --format json ../run1-summaries")
        p = subprocess.run(["bash", "-c", srun], cwd=nodes, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(self.work, "run1-summaries"))),
                         sorted(f.replace(".trace", ".summary") for f in os.listdir(self.traces)))
        # The nodes' folders summarised in one run: the summaries keep the folders, and the report of
        # them is the report of the traces, files in the same order.
        tree = self.run_tp("summarize", "-o", os.path.join(self.work, "tree-summaries"), nodes)
        self.assertEqual(tree.returncode, 0, tree.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(self.work, "tree-summaries"))), ["node-a", "node-b"])
        self.assertEqual(self.run_tp("report", "--format", "json", os.path.join(self.work, "tree-summaries")).stdout,
                         self.run_tp("report", "--format", "json", nodes).stdout)
        xargs = ("find traces -name '*.trace' | xargs -P 2 -n 2 trainprof summarize -o xargs-summaries && "
                 "trainprof report --format json xargs-summaries")
        q = subprocess.run(["bash", "-c", xargs], cwd=self.work, env=env, capture_output=True, text=True)
        self.assertEqual(q.returncode, 0, q.stderr)
        for out in (p.stdout, q.stdout):
            got, want = json.loads(out), json.loads(report)
            for doc in (got, want):  # the files' paths are as each recipe gave them
                doc["files"] = [os.path.basename(f["path"]) for f in doc["files"]]
                for proc in doc["processes"]:
                    proc["files"] = [os.path.basename(f) for f in proc["files"]]
            self.assertEqual(got, want)


class SharedDeviceTest(unittest.TestCase):
    """Two processes on one GPU (the stand-in CUPTI, tests/programs/fake_cupti.cc), read in CUDA
    windows, each summarised by a `trainprof summarize` of its own: the merged device row is the one
    of the report of the traces (a summary keeps its activity on every device: the other process
    is in another summary; a windowed read keeps no record to find the devices from)."""

    def test_a_device_shared_by_processes_summarised_apart(self):
        fake = os.path.join(PROGRAMS, "libfake_cupti.so")
        workload = os.path.join(PROGRAMS, "tp_cupti_fake_workload")
        if not os.path.exists(fake) or not os.access(workload, os.X_OK):
            self.skipTest("the fake CUPTI was not built (no CUPTI headers)")
        work = tempfile.mkdtemp(prefix="trainprof-shared-device-")
        self.addCleanup(shutil.rmtree, work, True)
        env = dict(os.environ, TRAINPROF_CUPTI_PATH=fake, TRAINPROF_CUDA_QUIET="1")
        for run in ("a", "b"):
            p = subprocess.run([TRAINPROF, "run", "-o", os.path.join(work, "traces", run), "--", workload, "mix", "4000"],
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
        windows = dict(os.environ, TRAINPROF_CUDA_WINDOW_RECORDS="500")
        for run in ("a", "b"):
            p = subprocess.run([TRAINPROF, "summarize", "-o", os.path.join(work, "summaries", run),
                                os.path.join(work, "traces", run)], env=windows, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)

        def devices(path):
            p = subprocess.run([TRAINPROF, "report", "--format", "json", path], env=windows, capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            return json.loads(p.stdout)["devices"]

        from_traces = devices(os.path.join(work, "traces"))
        self.assertEqual(len(from_traces), 1)
        self.assertEqual(from_traces[0]["processes"], 2)
        self.assertGreater(from_traces[0]["busy_ns"], 0)
        self.assertEqual(devices(os.path.join(work, "summaries")), from_traces)


if __name__ == "__main__":
    unittest.main()
