"""Helpers shared by the end-to-end tests: run `trainprof`, read its JSON report."""

import json
import os
import resource
import shutil
import subprocess
import tempfile
import unittest

TRAINPROF = os.environ.get("TRAINPROF_BIN", "trainprof")
PROGRAMS = os.environ.get("TRAINPROF_PROGRAMS", "")
PYTHON = os.environ.get("TRAINPROF_TEST_PYTHON", "/usr/bin/python3")
# The modern stack (PyTorch 2.x, torchrun, Lightning, nvtx) that scripts/setup installs into .venv.
MODERN_PYTHON = os.environ.get("TRAINPROF_MODERN_PYTHON",
                               os.path.join(os.path.dirname(__file__), "..", "..", ".venv", "bin", "python"))
NO_VENV = "no %s: the modern stack is installed by scripts/setup (skipped with --no-venv or TRAINPROF_NO_VENV=1)"
SOURCE_DIR = os.environ.get("TRAINPROF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WORKLOADS = os.path.join(SOURCE_DIR, "tests", "workloads")


def program(name):
    return os.path.join(PROGRAMS, "tp_" + name)


def _limit_file_size(limit=2 << 30):
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def file_size_limit(limit):
    """A preexec_fn that caps file sizes at `limit` bytes (RLIMIT_FSIZE), for tests of a full disk."""
    return lambda: _limit_file_size(limit)


class TraceTest(unittest.TestCase):
    """A test case with a fresh output directory per test."""

    def setUp(self):
        if not os.access(PYTHON, os.X_OK):  # this module run with the modern stack, not installed
            self.skipTest(NO_VENV % PYTHON)
        self.out = tempfile.mkdtemp(prefix="trainprof-e2e-")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def run_trainprof(self, args, timeout=300, check=True, preexec_fn=_limit_file_size, **kwargs):
        # A hung workload whose threads keep recording must not fill the disk: cap file sizes
        # (the library stops recording at RLIMIT_FSIZE, it never lets SIGXFSZ reach the program).
        proc = subprocess.run([TRAINPROF] + args, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=preexec_fn, **kwargs)
        if check and proc.returncode != 0:
            self.fail("trainprof %s exited %d\nstdout:\n%s\nstderr:\n%s"
                      % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
        return proc

    def profile(self, command, follow=True, expect_status=0, timeout=300, extra=()):
        args = ["run", "-o", self.out] + (["--follow-children"] if follow else []) + list(extra) + ["--"] + command
        proc = self.run_trainprof(args, timeout=timeout, check=False)
        self.assertEqual(proc.returncode, expect_status, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
        return proc

    def report(self, *paths, extra=()):
        proc = self.run_trainprof(["report", "--format", "json"] + list(extra) + list(paths or [self.out]))
        return json.loads(proc.stdout)

    def trace_files(self):
        return sorted(f for f in os.listdir(self.out) if f.endswith(".trace"))


def by_pid(report):
    return {p["pid"]: p for p in report["processes"]}


def ranges(entries):
    """{display name: row} of an nvtx_ranges list."""
    return {r["name"]: r for r in entries}


def exit_of(process):
    """(kind, code) of a process's exit, e.g. ("exit", 0) or ("signal", 9)."""
    return process["exit"]["kind"], process["exit"]["code"]
