"""The program's own resources stay its own under `trainprof run` (issue 35, classes 1 and 2).

File descriptors: a command started with stdin and stdout closed (as daemons, cron jobs and some
launchers start workers) finds them closed, and its opens return the numbers they would without
trainprof, in the default run, with `--backtrace=nvtx` and with `--sample`; a program that closes
every descriptor above 2 mid-run while being sampled keeps the files it opens next.

Stack space: threads on PTHREAD_STACK_MIN (16 KiB) stacks doing NVTX ranges and CPU work under
`--sample` and `--backtrace=nvtx` exit 0; a stack the library had no room for is counted in the
header's stacks_skipped and the report's stats. Programs: tests/programs/small_stacks.cc,
libtp_pynvtx.so (NVTX from Python through ctypes)."""

import os
import subprocess
import sys
import unittest

from common import PROGRAMS, PYTHON, TRAINPROF, TraceTest, program, skip_in_sanitizer_build
from trace_decode import read_trace

PYNVTX = os.path.join(PROGRAMS, "libtp_pynvtx.so")
MODES = {"default": [], "backtrace=nvtx": ["--backtrace=nvtx"], "sample=1000": ["--sample=1000"]}
# Closes stdin and stdout of the command it runs, as `COMMAND <&- >&-` in a shell does.
CLOSED_STDIO = ["sh", "-c", 'exec "$0" "$@" <&- >&-']

# What a Python program sees of its descriptors: stdin/stdout (None when closed), the number its
# first os.open gets, then the same after closing every descriptor above 2 mid-run, with NVTX
# ranges (ctypes, libtp_pynvtx.so) and CPU work around it, and whether its files are intact.
FD_PROBE = r"""
import ctypes, os, sys, time
result_path, pynvtx = sys.argv[1], sys.argv[2]
nvtx = ctypes.PyDLL(pynvtx)
def work(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        nvtx.tp_nvtx_push(b"probe_work")
        sum(i * i for i in range(20000))
        nvtx.tp_nvtx_pop()
work(0.3)
res = {"stdin_none": sys.stdin is None, "stdout_none": sys.stdout is None}
fd = os.open("/dev/null", os.O_RDONLY)
res["first_open"] = fd
os.close(fd)
os.closerange(3, 65536)
work(0.2)
paths = [result_path + ".%d" % i for i in range(4)]
fds = [os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600) for p in paths]
res["after_close_all"] = fds
for i, f in enumerate(fds):
    os.write(f, b"file %d\n" % i * 1000)
work(0.5)
res["intact"] = all(os.fstat(f).st_ino == os.stat(p).st_ino and os.pread(f, 100000, 0) == b"file %d\n" % i * 1000
                    for i, (f, p) in enumerate(zip(fds, paths)))
nxt = os.open("/dev/null", os.O_RDONLY)
res["next_open"] = nxt
with open(result_path, "w") as out:
    out.write(repr(res))
"""


class FileDescriptorTest(TraceTest):
    def probe_script(self):
        path = os.path.join(self.out, "fd_probe.py")
        with open(path, "w") as f:
            f.write(FD_PROBE)
        return path

    def run_probe(self, prefix, name):
        result = os.path.join(self.out, name)
        proc = subprocess.run(prefix + CLOSED_STDIO + [PYTHON, self.probe_script(), result, PYNVTX],
                              stderr=subprocess.PIPE, text=True, timeout=120, env=self.child_env())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(result) as f:
            return eval(f.read())  # noqa: S307 - our own probe's repr of a dict of ints and bools

    def test_cat_with_stdin_and_stdout_closed_exits_at_once_as_without_trainprof(self):
        plain = subprocess.run(CLOSED_STDIO + ["cat"], stderr=subprocess.PIPE, timeout=30)
        self.assertEqual(plain.returncode, 1)  # "cat: -: Bad file descriptor"
        for mode, extra in MODES.items():
            with self.fresh_subtest(mode=mode):
                try:
                    proc = subprocess.run([TRAINPROF, "run", "-o", self.out] + extra + ["--"] + CLOSED_STDIO + ["cat"],
                                          stderr=subprocess.PIPE, text=True, timeout=60, env=self.child_env())
                except subprocess.TimeoutExpired:
                    self.fail("cat with stdin and stdout closed ran on for 60 s under trainprof (%s)" % mode)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn("Bad file descriptor", proc.stderr)

    # Its reference run is Python without trainprof, which loads the sanitized NVTX test library
    # through ctypes: a sanitizer's runtime must come first, and only `trainprof run` preloads it there.
    @skip_in_sanitizer_build("address", "the run without trainprof loads the ASan-built NVTX library without its runtime")
    @skip_in_sanitizer_build("thread", "the run without trainprof loads the TSan-built NVTX library without its runtime")
    def test_python_sees_closed_stdio_and_its_own_descriptor_numbers(self):
        expected = self.run_probe([], "plain.result")
        self.assertEqual(expected["stdin_none"], True)
        self.assertEqual(expected["stdout_none"], True)
        self.assertEqual(expected["first_open"], 0)  # the lowest free number: stdin's
        self.assertEqual(expected["after_close_all"], [0, 1, 3, 4])  # stderr stays open
        self.assertTrue(expected["intact"])
        self.assertEqual(expected["next_open"], 5)
        for mode, extra in MODES.items():
            with self.fresh_subtest(mode=mode):
                got = self.run_probe([TRAINPROF, "run", "-o", self.out] + extra + ["--"], mode + ".result")
                self.assertEqual(got, expected)
                # The run was recorded, its ranges too (the trace file survived the close-all).
                pushes = sum(1 for f in self.trace_files() for r in read_trace(os.path.join(self.out, f))["records"]
                             if r[0] == "RANGE_PUSH")
                self.assertGreater(pushes, 10)

    def test_program_with_its_stdio_open_gets_3_first(self):
        """The lowest free number after the three standard ones is the program's, however the
        run samples or takes stacks (libunwind's pipe took 3 and 4 under --sample)."""
        for mode, extra in MODES.items():
            with self.fresh_subtest(mode=mode):
                script = os.path.join(self.out, "first.py")
                with open(script, "w") as f:
                    f.write("import os\nprint(os.open('/dev/null', os.O_RDONLY))\n")
                proc = self.run_trainprof(["run", "-o", self.out] + extra + ["--", PYTHON, script])
                self.assertEqual(proc.stdout.strip(), "3")


def small_stacks(*args):
    return [program("small_stacks")] + [str(a) for a in args] + [PROGRAMS]


class StackSpaceTest(TraceTest):
    def headers(self):
        return [read_trace(os.path.join(self.out, f))["header"] for f in self.trace_files()]

    @skip_in_sanitizer_build("address", "ASan's instrumented frames need more than PTHREAD_STACK_MIN of their own")
    @skip_in_sanitizer_build("thread", "TSan's interceptors need more than PTHREAD_STACK_MIN of their own")
    def test_threads_on_pthread_stack_min_stacks_exit_0(self):
        plain = subprocess.run(small_stacks(8, 300), capture_output=True, text=True, timeout=120)
        self.assertEqual((plain.returncode, plain.stdout), (0, "ok 8\n"), plain.stderr)
        for mode, extra in MODES.items():
            with self.fresh_subtest(mode=mode):
                proc = self.run_trainprof(["run", "-o", self.out] + extra + ["--"] + small_stacks(8, 300), check=False)
                self.assertEqual((proc.returncode, proc.stdout), (0, "ok 8\n"), proc.stderr)
                trace = read_trace(os.path.join(self.out, self.trace_files()[0]))
                pushes = [r for r in trace["records"] if r[0] == "RANGE_PUSH"]
                self.assertGreaterEqual(len(pushes), 8 * 2)  # each thread's step and the plugin's
                skipped = trace["header"]["stacks_skipped"]
                report = self.report()
                self.assertEqual(report["stats"].get("stacks_skipped", 0), skipped)
                if mode == "backtrace=nvtx":
                    stacked = sum(1 for r in trace["records"] if r[0] == "EVENT_STACK")
                    # Every push and mark either has its stack or is counted as skipped.
                    self.assertGreaterEqual(stacked + skipped, len(pushes))
                if mode == "sample=1000":
                    samples = [r for r in trace["records"] if r[0] == "SAMPLE"]
                    self.assertGreater(len(samples), 20)  # 8 threads, 0.3 s of CPU each: fewer on a loaded machine

    @skip_in_sanitizer_build("address", "ASan's instrumented frames need more than PTHREAD_STACK_MIN of their own")
    @skip_in_sanitizer_build("thread", "TSan's interceptors need more than PTHREAD_STACK_MIN of their own")
    def test_cuda_backtraces_on_a_pthread_stack_min_thread(self):
        """The default CUDA backtrace from a thread with a 16 KiB stack (the stand-in CUPTI,
        tests/programs/fake_cupti.cc): the 6 blocking calls over 1 ms each have their stack or are
        counted as skipped, and the program exits 0."""
        fake = os.path.join(PROGRAMS, "libfake_cupti.so")
        if not os.path.exists(fake) or not os.access(program("cupti_fake_workload"), os.X_OK):
            self.skipTest("the fake CUPTI was not built (no CUPTI headers)")
        env = self.child_env()
        env.pop("TRAINPROF_CUDA_QUIET", None)
        env["TRAINPROF_CUPTI_PATH"] = fake
        proc = self.run_trainprof(["run", "-o", self.out, "--backtrace=cuda:1000000", "--",
                                   program("cupti_fake_workload"), "stacks-small"], env=env, check=False, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("stacks done", proc.stdout)
        trace = read_trace(os.path.join(self.out, self.trace_files()[0]))
        stacked = sum(1 for r in trace["records"] if r[0] == "EVENT_STACK")
        self.assertEqual(stacked + trace["header"]["stacks_skipped"], 6)
        self.assertEqual(self.report()["stats"]["stacks_skipped"], trace["header"]["stacks_skipped"])

    @skip_in_sanitizer_build("address", "ASan's instrumented frames measure ASan, not trainprof")
    @skip_in_sanitizer_build("thread", "TSan's instrumented frames measure TSan, not trainprof")
    def test_stack_the_library_uses_on_a_thread_is_within_its_budget(self):
        """`measure`: one thread's work on a painted 1 MiB stack. What the library's hooks and the
        sampler's handler used below the program's own deepest frame stays within the budget the
        stack-room check asks for (inject/stacks/stack_room.h, kStackCaptureBudget: 10 KiB), plus
        under --sample the kernel's signal frame (measured by the program: 3.4 KiB with AVX-512)."""
        def use(prefix):
            proc = subprocess.run(prefix + small_stacks("measure", 300), capture_output=True, text=True, timeout=120,
                                  env=self.child_env())
            self.assertEqual(proc.returncode, 0, proc.stderr)
            values = dict(l.rsplit(": ", 1) for l in proc.stdout.splitlines() if ": " in l)
            return int(values["stack use"]), int(values["signal frame"])
        own, signal_frame = use([])
        self.assertGreater(signal_frame, 0)
        for mode, extra in MODES.items():
            with self.fresh_subtest(mode=mode):
                used, _ = use([TRAINPROF, "run", "-o", self.out] + extra + ["--"])
                print("stack use %s: %d bytes (the program alone: %d; signal frame %d)" % (mode, used, own, signal_frame),
                      file=sys.stderr)
                self.assertLessEqual(used - own, 10 * 1024 + (signal_frame if mode.startswith("sample") else 0))

if __name__ == "__main__":
    unittest.main()
