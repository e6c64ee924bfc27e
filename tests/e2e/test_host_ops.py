"""The operator and Python function tables of imported torch.profiler traces against torch.profiler's
own key_averages() of the same profile: the committed CPU traces of tests/data/kineto/ (one
process; two gloo DDP ranks) with the key_averages() recorded beside them, and a fresh recording by
tests/workloads/kineto_record.py from .venv (export_chrome_trace, and tensorboard_trace_handler).

Measured (tests/data/kineto, PyTorch 2.15.0): every operator's calls, self and total time equal
key_averages()' to the nanosecond (49 and 53 names); Python functions: calls and totals equal for
every name, self time for all but the 5-6 functions that open or close a record_function scope
(torch.profiler.record_function.__enter__, Optimizer.step's wrapper, DataLoader __next__, ...): the
user annotation these make is in torch's tree, not in trainprof's, and overlaps them partly, so
torch's self time of those is negative (-65.5 us for DataLoader.__next__) where trainprof's is not.

A trainprof that cannot read these traces (files[].format "kineto") fails every test."""

import glob
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, SOURCE_DIR, TRAINPROF, WORKLOADS

DATA = os.path.join(SOURCE_DIR, "tests", "data", "kineto")
RECORD = os.path.join(WORKLOADS, "kineto_record.py")
NO_READER = "trainprof did not read the committed torch.profiler trace as a Kineto trace: %s"
US = 1000.0  # ns per us


def report(*paths, args=()):
    p = subprocess.run([TRAINPROF, "report", "--format", "json", *args, *paths], capture_output=True, text=True)
    return p, (json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else None)


def reader_missing():
    """Why trainprof cannot read Kineto traces (None: it can): tried once on the committed trace."""
    if not hasattr(reader_missing, "why"):
        p, rep = report(os.path.join(DATA, "cpu_steps.pt.trace.json.gz"))
        ok = rep is not None and all(f.get("format") == "kineto" for f in rep["files"])
        reader_missing.why = None if ok else NO_READER % (p.stderr.strip().splitlines() or ["no format field"])[-1]
    return reader_missing.why


class HostOpsTest(unittest.TestCase):
    def read(self, *paths, args=()):
        self.assertIsNone(reader_missing())  # the reader is part of trainprof: a failure, not a skip
        p, rep = report(*paths, args=args)
        self.assertIsNotNone(rep, p.stderr)
        self.assertEqual([f["format"] for f in rep["files"]], ["kineto"] * len(paths))
        return rep

    def assert_like_key_averages(self, ours, ref_path, python=True):
        """Every operator of key_averages(): calls, self and total exact (10 ns of float sums);
        Python functions: calls and totals exact, self exact for all but those that open or close a
        record_function scope (see the module's docstring)."""
        with open(ref_path) as f:
            ref = json.load(f)
        by_name = {r["name"]: r for r in ours["operators"]}
        self.assertEqual(set(by_name), {r["name"] for r in ref["operators"]})
        for r in ref["operators"]:
            o = by_name[r["name"]]
            self.assertEqual(o["calls"], r["calls"], r["name"])
            self.assertAlmostEqual(o["self_ns"] / US, r["self_cpu_time_total_us"], delta=0.01, msg=r["name"])
            self.assertAlmostEqual(o["total_ns"] / US, r["cpu_time_total_us"], delta=0.01, msg=r["name"])
        # The top 5 by self time are the same names in the same order (ties aside).
        top = [r["name"] for r in ref["operators"][:5]]
        self.assertEqual([r["name"] for r in ours["operators"][:5]], top)
        if not python:
            return
        funcs = {r["name"]: r for r in ours["python_functions"]}
        self.assertEqual(set(funcs), {r["name"] for r in ref["python_functions"]})
        differ = []
        for r in ref["python_functions"]:
            o = funcs[r["name"]]
            self.assertEqual(o["calls"], r["calls"], r["name"])
            self.assertAlmostEqual(o["total_ns"] / US, r["cpu_time_total_us"], delta=0.01, msg=r["name"])
            if abs(o["self_ns"] / US - r["self_cpu_time_total_us"]) > 0.01:
                differ.append(r["name"])
        self.assertLessEqual(len(differ), 8, differ)

    def test_one_process_matches_key_averages(self):
        rep = self.read(os.path.join(DATA, "cpu_steps.pt.trace.json.gz"))
        self.assert_like_key_averages(rep, os.path.join(DATA, "cpu_steps.key_averages.json"))
        # Percentages of the process's wall time; the process has its own table, equal to the merged one.
        (proc,) = rep["processes"]
        for o in rep["operators"]:
            self.assertAlmostEqual(o["self_percent"], 100.0 * o["self_ns"] / proc["wall_ns"], places=6)
            self.assertEqual(o["processes"], 1)
        self.assertEqual(proc["operators"], rep["operators"])
        self.assertEqual(rep["operators_omitted"], 0)

    def test_ranks_each_match_their_key_averages_and_merge(self):
        paths = [os.path.join(DATA, "ddp_gloo_rank%d.pt.trace.json.gz" % r) for r in (0, 1)]
        rep = self.read(*paths)
        procs = sorted(rep["processes"], key=lambda p: p["rank"])
        self.assertEqual([p["rank"] for p in procs], [0, 1])
        for rank, p in enumerate(procs):
            self.assert_like_key_averages(p, os.path.join(DATA, "ddp_gloo_rank%d.key_averages.json" % rank))
        merged = {r["name"]: r for r in rep["operators"]}
        wall = sum(p["wall_ns"] for p in procs)
        for name, m in merged.items():
            rows = [r for p in procs for r in p["operators"] if r["name"] == name]
            self.assertEqual(m["calls"], sum(r["calls"] for r in rows), name)
            self.assertEqual(m["self_ns"], sum(r["self_ns"] for r in rows), name)
            self.assertEqual(m["processes"], len(rows), name)
            self.assertAlmostEqual(m["total_percent"], 100.0 * m["total_ns"] / wall, places=6)
        self.assertEqual(merged["c10d::allreduce_"]["processes"], 2)

    def test_top_cuts_and_counts_the_rest(self):
        path = os.path.join(DATA, "cpu_steps.pt.trace.json.gz")
        full = self.read(path)
        cut = self.read(path, args=("--top", "3"))
        self.assertEqual(cut["operators"], full["operators"][:3])
        self.assertEqual(cut["operators_omitted"], len(full["operators"]) - 3)
        self.assertEqual(cut["python_functions_omitted"], len(full["python_functions"]) - 3)
        text = subprocess.run([TRAINPROF, "report", "--top", "3", path], capture_output=True, text=True).stdout
        self.assertIn("Operators (all processes)", text)
        self.assertIn("Self CPU %", text)
        self.assertIn("# of Calls", text)
        self.assertIn(full["operators"][0]["name"], text)
        self.assertIn("... %d more names (--top 3)" % cut["operators_omitted"], text)

    def test_csv_tables(self):
        path = os.path.join(DATA, "cpu_steps.pt.trace.json.gz")
        rep = self.read(path)
        out = tempfile.mkdtemp(prefix="trainprof-e2e-")
        try:
            subprocess.run([TRAINPROF, "report", "--format", "csv", "-o", out, path], check=True, capture_output=True)
            with open(os.path.join(out, "operators.csv"), newline="") as f:
                lines = f.read().split("\r\n")
            self.assertEqual(lines[0], "name,calls,self_ns,total_ns,self_percent,total_percent,processes")
            first = rep["operators"][0]
            self.assertTrue(lines[1].startswith("%s,%d,%d,%d," % (first["name"], first["calls"], first["self_ns"],
                                                                  first["total_ns"])), lines[1])
            self.assertTrue(os.path.exists(os.path.join(out, "python_functions.csv")))
        finally:
            shutil.rmtree(out, ignore_errors=True)


class FreshRecordingTest(unittest.TestCase):
    """A recording made now by PyTorch 2.x (.venv), as users write the loop."""

    def setUp(self):
        if not os.access(MODERN_PYTHON, os.X_OK):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        self.assertIsNone(reader_missing())  # the reader is part of trainprof: a failure, not a skip
        self.out = tempfile.mkdtemp(prefix="trainprof-e2e-")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def record(self, *args):
        subprocess.run([MODERN_PYTHON, RECORD, "--out", self.out, *args], check=True, capture_output=True, timeout=300)

    def check(self, trace):
        p, rep = report(trace)
        self.assertIsNotNone(rep, p.stderr)
        HostOpsTest.assert_like_key_averages(self, rep, os.path.join(self.out, "key_averages.json"))

    def test_export_chrome_trace(self):
        self.record("--chrome")
        self.check(os.path.join(self.out, "trace.json"))

    def test_tensorboard_trace_handler_with_stack(self):
        self.record("--with-stack")
        (trace,) = glob.glob(os.path.join(self.out, "*.pt.trace.json.gz"))
        with gzip.open(trace) as f:
            self.assertIn(b"ProfilerStep#", f.read())
        self.check(trace)


if __name__ == "__main__":
    unittest.main()
