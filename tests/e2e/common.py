"""Helpers shared by the end-to-end tests: run `trainprof`, read its JSON report."""

import contextlib
import glob
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
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
# The sanitizer build these tests run in: "address" (ASan+UBSan), "thread" (TSan), or "" for the
# normal build. Set by ctest (tests/CMakeLists.txt); see docs/testing.md.
SANITIZER = os.environ.get("TRAINPROF_SANITIZER", "")
# The runtime option variables of each build: reports are sent to files (log_path) so that one
# from any process of a run is found, whether or not the test looks at that process's status.
_SANITIZER_OPTION_VARS = {"address": ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"),
                          "thread": ("TSAN_OPTIONS",)}

# Notices, not reports: in a process forked from a multithreaded one, LeakSanitizer still lists the
# parent's threads, cannot stop them (they do not exist there) and says so before its leak check.
_SANITIZER_NOTICES = re.compile(r"^==\d+==Running thread \d+ was not suspended\. False leaks are possible\.\n",
                                re.MULTILINE)

print("trainprof e2e: %s" % ("%s sanitizer build" % SANITIZER if SANITIZER else "normal build (no sanitizer)"),
      file=sys.stderr)


def free_port():
    """A TCP port free on 127.0.0.1 now, for a rendezvous: tests run in parallel (ctest -j, the
    suites of .ci/run, one test file under two Pythons), so a fixed port can be taken."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skip_in_sanitizer_build(sanitizer, reason):
    """Skips a test in one sanitizer build only ("address" or "thread"), saying why."""
    return unittest.skipIf(SANITIZER == sanitizer, "not run in the %s sanitizer build: %s" % (sanitizer, reason))


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
        self.sanitizer_logs = tempfile.mkdtemp(prefix="trainprof-e2e-reports-") if SANITIZER else None

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)
        if self.sanitizer_logs is not None:
            reports = []
            for path in sorted(glob.glob(os.path.join(self.sanitizer_logs, "*"))):
                with open(path, errors="replace") as f:
                    text = _SANITIZER_NOTICES.sub("", f.read())
                if text.strip():
                    reports.append("--- %s:\n%s" % (os.path.basename(path), text))
            shutil.rmtree(self.sanitizer_logs, ignore_errors=True)
            self.sanitizer_logs = None
            if reports:
                self.fail("%s sanitizer reports:\n%s" % (SANITIZER, "\n".join(reports)))

    @contextlib.contextmanager
    def fresh_subtest(self, **params):
        """self.subTest(**params) with an output directory of its own (tearDown, then setUp): one
        case of a loop of cases in one test."""
        with self.subTest(**params):
            self.tearDown()
            self.setUp()
            yield

    def tmpfs_mount_point(self):
        """A new directory in the output directory where the test can mount a 1 MiB tmpfs in a user
        namespace (`unshare -rm`, the mount lives as long as the namespace); skips the test where
        such a mount is not allowed."""
        mnt = os.path.join(self.out, "mnt")
        os.mkdir(mnt)
        probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m none " + mnt],
                               capture_output=True, text=True, timeout=30)
        if probe.returncode != 0:
            self.skipTest("cannot mount a tmpfs in a user namespace: " + probe.stderr.strip())
        return mnt

    def child_env(self):
        """The environment for processes the test starts: in a sanitizer build, each sanitizer
        report goes to a file <sanitizer_logs>/report.<pid>, which fails the test in tearDown."""
        env = dict(os.environ)
        if self.sanitizer_logs is not None:
            log = "log_path=" + os.path.join(self.sanitizer_logs, "report")
            for var in _SANITIZER_OPTION_VARS.get(SANITIZER, ()):
                env[var] = env[var] + ":" + log if env.get(var) else log
        return env

    def run_trainprof(self, args, timeout=300, check=True, preexec_fn=_limit_file_size, **kwargs):
        # A hung workload whose threads keep recording must not fill the disk: cap file sizes
        # (the library stops recording at RLIMIT_FSIZE, it never lets SIGXFSZ reach the program).
        kwargs.setdefault("env", self.child_env())
        proc = subprocess.run([TRAINPROF] + args, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=preexec_fn, **kwargs)
        if check and proc.returncode != 0:
            self.fail("trainprof %s exited %d\nstdout:\n%s\nstderr:\n%s"
                      % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
        return proc

    def run_or_fail_if_hung(self, args, hung, timeout=120):
        """Runs `trainprof ARGS` in a session of its own, so that a hung program is killed with
        trainprof; fails the test with "hung: " + `hung` after `timeout` s. The CompletedProcess."""
        run = subprocess.Popen([TRAINPROF] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=self.child_env(), start_new_session=True, preexec_fn=_limit_file_size)
        try:
            stdout, stderr = run.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            self.fail("hung: " + hung)
        return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)

    def profile(self, command, follow=True, expect_status=0, timeout=300, extra=()):
        args = ["run", "-o", self.out] + (["--follow-children"] if follow else []) + list(extra) + ["--"] + command
        proc = self.run_trainprof(args, timeout=timeout, check=False)
        self.assertEqual(proc.returncode, expect_status, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
        return proc

    def profile_ddp(self, command, **kwargs):
        """profile(command) with --follow-children, for programs that use torch.distributed;
        `kwargs` go to run_trainprof (env=...)."""
        # PyTorch 2.x's gloo process group now and then aborts a rank as it tears down, after the
        # steps ("terminate called without an active exception" from a std::thread of its own; the
        # library has none; seen once in this project's full CI runs). That failure, and only it, is
        # retried once; any other failure, or a second one, fails the test.
        args = ["run", "-o", self.out, "--follow-children", "--"] + command
        proc = self.run_trainprof(args, timeout=300, check=False, **kwargs)
        if proc.returncode != 0 and "terminate called without an active exception" in proc.stderr:
            shutil.rmtree(self.out, ignore_errors=True)
            os.makedirs(self.out)
            proc = self.run_trainprof(args, timeout=300, check=False, **kwargs)
        self.assertEqual(proc.returncode, 0, "stdout:\n%s\nstderr:\n%s" % (proc.stdout, proc.stderr))
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
