"""The Python shim records the phases of real PyTorch loops (Debian python3-torch 1.13, CPU)."""

import os
import shutil
import subprocess
import tempfile
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid, free_port, ranges

PLANTED = os.path.join(WORKLOADS, "planted.py")
DDP = os.path.join(WORKLOADS, "ddp_straggler.py")
SHIM_PROGRAM = os.path.join(WORKLOADS, "shim_program.py")
MAIN_ITER = "trainprof:enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def calls(process, name):
    row = ranges(process["nvtx_ranges"]).get(name)
    return row["calls"] if row else 0


class PhaseRecordingTest(TraceTest):
    def run_planted(self, case, steps=12, workers=2, extra=()):
        self.profile([PYTHON, PLANTED, case, "--steps", str(steps), "--workers", str(workers)], extra=extra)
        rep = self.report()
        procs = by_pid(rep)
        main = [p for p in procs.values() if p["ppid"] not in procs][0]
        workers_ = [p for p in procs.values() if p["role"] == "DataLoader worker"]
        return main, workers_

    def test_main_process_and_worker_phases_with_pytorch_names(self):
        main, workers = self.run_planted("worker_init", steps=12)
        # 12 batches + the __next__ that raised StopIteration at the end of the epoch.
        self.assertEqual(calls(main, MAIN_ITER), 13)
        self.assertEqual(calls(main, "trainprof:Linear.forward"), 12)
        self.assertEqual(calls(main, "trainprof:Tensor.backward"), 12)
        self.assertEqual(calls(main, "trainprof:Optimizer.step#SGD.step"), 12)
        self.assertEqual(calls(main, "trainprof:Optimizer.zero_grad#SGD.zero_grad"), 12)
        self.assertEqual(len(workers), 2)
        self.assertEqual(sum(calls(w, "trainprof:_MapDatasetFetcher.fetch") for w in workers), 12)
        self.assertEqual(sum(calls(w, "trainprof:Items.__getitem__") for w in workers), 96)  # batch size 8
        self.assertEqual(sum(calls(w, "trainprof:default_collate") for w in workers), 12)
        for w in workers:
            init = ranges(w["nvtx_ranges"])["trainprof:worker_init_fn:slow_worker_init"]
            self.assertEqual(init["calls"], 1)
            self.assertGreater(init["mean_ns"], 0.38e9)  # the planted 400 ms sleep

    def test_slow_getitem_shows_in_the_worker_item_ranges(self):
        _, workers = self.run_planted("getitem", steps=8)
        items = [ranges(w["nvtx_ranges"])["trainprof:Items.__getitem__"] for w in workers]
        self.assertEqual(sum(r["calls"] for r in items), 64)
        for r in items:
            self.assertGreater(r["mean_ns"], 3.8e6)  # planted 4 ms sleep per item

    def test_single_process_loading_records_fetches_in_the_main_process(self):
        main, workers = self.run_planted("collate", steps=6, workers=0)
        self.assertEqual(workers, [])
        self.assertEqual(calls(main, "trainprof:enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), 7)
        self.assertEqual(calls(main, "trainprof:_MapDatasetFetcher.fetch"), 6)
        collate = ranges(main["nvtx_ranges"])["trainprof:slow_collate"]
        self.assertEqual(collate["calls"], 6)
        self.assertGreater(collate["mean_ns"], 38e6)  # planted 40 ms sleep per batch

    def test_trace_minus_python_turns_the_shim_off(self):
        main, workers = self.run_planted("compute", steps=4, extra=["--trace=-python"])
        self.assertEqual(main["nvtx_ranges"], [])
        self.assertTrue(all(w["nvtx_ranges"] == [] for w in workers))

    def test_spawned_ddp_ranks_are_named_by_rank(self):
        self.profile([PYTHON, DDP, "--steps", "6", "--port", str(free_port())])
        rep = self.report()
        ranks = sorted((p["rank"], p["role"]) for p in rep["processes"] if p["rank"] is not None)
        self.assertEqual(ranks, [(0, "rank 0"), (1, "rank 1")])
        for p in rep["processes"]:
            if p["rank"] is not None:
                self.assertEqual(calls(p, "trainprof:DistributedDataParallel.forward"), 6)
                self.assertEqual(calls(p, "trainprof:Tensor.backward"), 6)


class ShimTest(TraceTest):
    """The shim leaves the program as it was: its own sitecustomize runs, in whatever form; options
    that keep the shim out are explained in the report; tracebacks do not show trainprof."""

    def setUp(self):
        super().setUp()
        self.site = tempfile.mkdtemp(prefix="trainprof-e2e-site-")
        self.addCleanup(shutil.rmtree, self.site, True)

    def run_program(self, args, expect_status=0, python_options=(), pythonpath=None):
        env = self.child_env()
        if pythonpath is not None:
            env["PYTHONPATH"] = pythonpath
        proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--", PYTHON] + list(python_options)
                                  + [SHIM_PROGRAM] + list(args), check=False, env=env)
        self.assertEqual(proc.returncode, expect_status, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
        return proc

    def main_process(self):
        rep = self.report()
        procs = by_pid(rep)
        return rep, [p for p in procs.values() if p["ppid"] not in procs][0]

    def assert_phases_recorded(self, steps=4):
        _, main = self.main_process()
        self.assertEqual(calls(main, "trainprof:Net.forward"), steps)
        self.assertEqual(calls(main, "trainprof:Optimizer.step#SGD.step"), steps)
        self.assertIsNone(main["python_shim_off"])

    # ---- the program's own sitecustomize ----------------------------------------------------

    def write(self, relative, text):
        path = os.path.join(self.site, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    SITECUSTOMIZE = ("import os, sys\n"
                     "sys.stderr.write('PROGRAM SITECUSTOMIZE RAN\\n')\n"
                     "os.environ['TRAINPROF_TEST_SITECUSTOMIZE'] = 'set-by-%s'\n"
                     "VALUE = 42\n")

    def assert_the_programs_sitecustomize_runs(self, kind, path):
        """The training program run with the site directory on PYTHONPATH: its own sitecustomize
        (SITECUSTOMIZE of `kind`, at `path`) runs once, and the phases are still recorded."""
        proc = self.run_program(["train"], pythonpath=self.site)
        self.assertEqual(proc.stderr.count("PROGRAM SITECUSTOMIZE RAN"), 1, proc.stderr)
        # `import sitecustomize` in the program gives the program's own one.
        self.assertIn("sitecustomize: set-by-%s 42 %s" % (kind, path), proc.stdout)
        self.assert_phases_recorded()

    def test_a_sitecustomize_package_on_pythonpath_still_runs(self):
        init = self.write("sitecustomize/__init__.py", self.SITECUSTOMIZE % "package")
        self.assert_the_programs_sitecustomize_runs("package", init)

    def test_a_sourceless_sitecustomize_pyc_on_pythonpath_still_runs(self):
        source = self.write("src/sitecustomize.py", self.SITECUSTOMIZE % "pyc")
        pyc = os.path.join(self.site, "sitecustomize.pyc")
        subprocess.run([PYTHON, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], "
                        "doraise=True)", source, pyc], check=True)  # by the Python under test: its magic number
        os.remove(source)
        self.assert_the_programs_sitecustomize_runs("pyc", pyc)

    def test_a_plain_sitecustomize_module_still_runs_and_its_errors_read_as_without_trainprof(self):
        module = self.write("sitecustomize.py", self.SITECUSTOMIZE % "module")
        self.assert_the_programs_sitecustomize_runs("module", module)
        # A failing sitecustomize: the same message as Python gives without trainprof.
        self.write("sitecustomize.py", "raise NameError('planted in sitecustomize')\n")
        plain = subprocess.run([PYTHON, "-c", "pass"], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=self.site))
        self.assertIn("Error in sitecustomize", plain.stderr)
        shutil.rmtree(self.out)
        proc = self.run_program(["train"], pythonpath=self.site)
        self.assertIn(plain.stderr, proc.stderr)
        # The program's `import sitecustomize` fails again, as without trainprof.
        self.assertIn("sitecustomize: - NameError -", proc.stdout)
        self.assert_phases_recorded()

    # ---- options that keep the shim out -----------------------------------------------------

    def assert_shim_off_explained(self, options, reason):
        rep, main = self.main_process()
        self.assertEqual(main["python_shim_off"], options)
        self.assertEqual(main["nvtx_ranges"], [])
        self.assertEqual(rep["bottleneck"]["status"], "no_phases")
        message = rep["bottleneck"]["message"]
        self.assertIn(reason, message)
        self.assertIn("Run Python without %s" % options, message)
        self.assertNotIn("run the script as", message)  # the advice for a run without trainprof
        note = "pid %d: Python phases not recorded: %s, so trainprof's shim" % (main["pid"], reason)
        self.assertTrue(any(w.startswith(note) for w in rep["warnings"]), rep["warnings"])
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn(reason, text)
        self.assertNotIn("run the script as", text)

    def test_python_minus_I_report_says_the_shim_could_not_load(self):
        self.run_program(["train"], python_options=["-I"])
        self.assert_shim_off_explained("-I", "python -I ignores PYTHONPATH (isolated mode)")

    def test_python_minus_E_report_says_the_shim_could_not_load(self):
        self.run_program(["train", "--workers", "2"], python_options=["-E", "-X", "dev"])
        self.assert_shim_off_explained("-E", "python -E ignores PYTHONPATH")

    def test_python_minus_S_report_says_the_shim_could_not_load(self):
        # Without `site` there are no site-packages (no torch): a program of the standard library.
        self.run_trainprof(["run", "-o", self.out, "--", PYTHON, "-S", "-c", "import json; json.dumps([1])"])
        self.assert_shim_off_explained("-S", "python -S skips `import site`, which imports sitecustomize")

    def test_options_of_the_program_are_not_taken_for_pythons(self):
        # -I after the script belongs to the script (argparse rejects it: exit 2), not to Python.
        self.run_program(["train", "-I"], expect_status=2)
        _, main = self.main_process()
        self.assertIsNone(main["python_shim_off"])

    def test_a_program_without_torch_gets_only_the_shims_own_modules(self):
        # Until `import torch` the shim is its import hook and nothing else: a new-user pass found
        # importlib.abc's base class pulling importlib.resources, pathlib and typing (99 modules
        # against 36, ~15 ms) into every Python process, torch or not.
        listing = "import sys; print(' '.join(sorted(sys.modules)))"
        plain = subprocess.run([PYTHON, "-c", listing], capture_output=True, text=True, check=True)
        proc = self.run_trainprof(["run", "-o", self.out, "--", PYTHON, "-c", listing])
        extra = set(proc.stdout.split()) - set(plain.stdout.split())
        self.assertIn("_trainprof.import_hook", extra)  # the shim did load
        # The shim itself (where the interpreter has no sitecustomize of its own) and the frozen
        # importlib modules it uses to find the program's own sitecustomize.
        allowed = {"sitecustomize", "importlib", "importlib._bootstrap", "importlib._bootstrap_external", "importlib.machinery",
                   "warnings"}
        self.assertEqual(sorted(m for m in extra if not m.startswith("_trainprof") and m not in allowed), [])

    # ---- tracebacks -------------------------------------------------------------------------

    def assert_traceback_without_trainprof(self, proc, planted):
        self.assertIn("Traceback (most recent call last)", proc.stderr)
        self.assertIn(planted, proc.stderr)
        for ours in ("_trainprof", "sitecustomize"):  # python/_trainprof/*.py, python/sitecustomize.py
            self.assertNotIn(ours, proc.stderr)

    def test_an_exception_from_forward_shows_no_trainprof_frame(self):
        proc = self.run_program(["raise_forward"], expect_status=1)
        self.assert_traceback_without_trainprof(proc, 'raise ValueError("planted in forward")')
        _, main = self.main_process()
        self.assertEqual(calls(main, "trainprof:Net.forward"), 3)  # the wrapper was there

    def test_an_exception_from_getitem_shows_no_trainprof_frame(self):
        proc = self.run_program(["raise_getitem"], expect_status=1)
        self.assert_traceback_without_trainprof(proc, 'raise KeyError("planted in getitem")')

    def test_an_exception_from_getitem_in_a_worker_shows_no_trainprof_frame(self):
        proc = self.run_program(["raise_getitem", "--workers", "2"], expect_status=1)
        self.assertIn("Original Traceback", proc.stderr)  # the worker's, as DataLoader re-raises it
        self.assert_traceback_without_trainprof(proc, 'raise KeyError("planted in getitem")')

    def test_an_exception_from_the_optimizer_shows_no_trainprof_frame(self):
        proc = self.run_program(["raise_step"], expect_status=1)
        self.assert_traceback_without_trainprof(proc, 'raise RuntimeError("planted in step")')
        shutil.rmtree(self.out)
        proc = self.run_program(["bad_lr"], expect_status=1)
        self.assert_traceback_without_trainprof(proc, "Invalid learning rate")

    def test_a_failing_import_torch_reads_as_without_trainprof(self):
        # A broken torch install: the shim's import hook runs torch's module code.
        self.write("torch/__init__.py", "raise RuntimeError('planted in torch')\n")
        command = [PYTHON, "-c", "import torch"]
        plain = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=self.site))
        self.assertIn("planted in torch", plain.stderr)
        proc = self.run_trainprof(["run", "-o", self.out, "--"] + command, check=False,
                                  env=dict(self.child_env(), PYTHONPATH=self.site))
        self.assertEqual(proc.returncode, 1)
        self.assertTrue(proc.stderr.startswith(plain.stderr), "with trainprof:\n%s\nwithout:\n%s"
                        % (proc.stderr, plain.stderr))


if __name__ == "__main__":
    unittest.main()
