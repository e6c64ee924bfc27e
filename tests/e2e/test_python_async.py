"""Python frames read from a signal handler without the interpreter (issue 15's sampler:
inject/stacks/python_async.h), through the test probe tests/programs/py_async_probe.cc, a SIGPROF
handler that runs the sampler's walk, loaded by tests/workloads/py_async_frames.py with ctypes.
Each case compares what the walk read with what the interpreter says of the same frames (function
qualname, file, line), on Debian's python3 (3.11.2, the interpreter in the executable) and, as
e2e_python_async_torch2, the venv's (3.11.7, libpython3.11.so)."""

import json
import os
import subprocess
import unittest

from common import NO_VENV, PROGRAMS, PYTHON, SANITIZER, WORKLOADS, skip_in_sanitizer_build

# TSan defers an asynchronous signal to its next interceptor or instrumented call: in the
# uninstrumented interpreter the probe's handler runs late, on other frames, and TSan reports its
# reads of the interpreter's memory. The normal and ASan builds run these.
TSAN_TIMER = "TSan defers asynchronous signals (the handler runs late, on other frames)"

PROBE = os.path.join(PROGRAMS, "libtp_py_async_probe.so")
DRIVER = os.path.join(WORKLOADS, "py_async_frames.py")


def run_case(case, arg="", timeout=120, python=PYTHON, preload=()):
    env = dict(os.environ)
    runtime = os.environ.get("TRAINPROF_SANITIZER_RUNTIME", "")
    preload = ([runtime] if runtime else []) + list(preload)
    if preload:  # the probe is built sanitized: its runtime must be mapped first (as trainprof run does)
        env["LD_PRELOAD"] = ":".join(preload)
    out = subprocess.run([python, DRIVER, PROBE, case, arg], capture_output=True, text=True, timeout=timeout,
                         env=env)
    if out.returncode != 0:
        raise AssertionError("%s %s: status %d\n%s" % (DRIVER, case, out.returncode, out.stderr))
    return json.loads(out.stdout)


class PythonAsyncTest(unittest.TestCase):
    python = PYTHON  # the interpreter the cases run on (test_python_versions.py: one per version)

    def setUp(self):
        if not os.path.exists(self.python):
            self.skipTest(NO_VENV % self.python)

    def frames_case(self, case, arg=""):
        r = run_case(case, arg, python=self.python)
        if "unsupported" in r:
            self.fail("the walk has no layout for this interpreter: " + r["unsupported"])
        return r

    def test_frames_as_the_interpreter_has_them(self):
        # Methods (qualname), nested classes and lambdas, a generator's and a coroutine's frames
        # (outside the thread's data stack), non-ASCII names and files, a long file name, another
        # thread, a fork child: every frame's function, file and line as the interpreter says.
        for case in ("method", "nested_lambda", "generator", "coroutine", "non_ascii_name", "non_ascii_file",
                     "long_file", "thread", "fork_child"):
            with self.subTest(case=case):
                r = self.frames_case(case)
                self.assertEqual([tuple(f) for f in r["got"]], [tuple(f) for f in r["want"]])
                self.assertEqual(r["missed"], 0)
                self.assertGreaterEqual(len(r["got"]), 4)

    def test_innermost_frame_is_the_capturing_line(self):
        r = self.frames_case("method")
        function, path, line = r["got"][0]
        self.assertEqual(function, "capture")
        self.assertEqual(os.path.realpath(path), os.path.realpath(DRIVER))
        with open(DRIVER) as f:
            self.assertIn("tp_probe_capture_now()", f.read().splitlines()[line - 1])
        self.assertEqual(r["got"][1][0], "Model.forward" if r["version"] >= [3, 11] else "forward")  # 3.10: co_name

    def test_names_cut_and_encoded(self):
        r = self.frames_case("non_ascii_file")
        self.assertTrue(r["got"][1][1].endswith("modülé_données.py"), r["got"][1])
        self.assertEqual(self.frames_case("non_ascii_name")["got"][1][0], "fünf")
        self.assertTrue(self.frames_case("long_file")["got"][1][1].endswith("x" * 200 + ".py"))

    def test_shim_frames_left_out(self):
        # A file under a _trainprof/ folder is trainprof's own shim: left out, as the GIL path does.
        r = self.frames_case("shim")
        want = [tuple(f) for f in r["want"] if "/_trainprof/" not in f[1]]
        self.assertEqual(len(want), len(r["want"]) - 1)
        self.assertEqual([tuple(f) for f in r["got"]], want)
        self.assertEqual(r["missed"], 0)

    def test_deep_stack_keeps_the_innermost_64(self):
        # As the GIL path: the rest are left out, and not counted as frames that could not be read.
        r = self.frames_case("deep", "100")
        self.assertGreater(len(r["want"]), 100)
        self.assertEqual([tuple(f) for f in r["got"]], [tuple(f) for f in r["want"][:64]])
        self.assertEqual(r["missed"], 0)

    def test_layout_offsets(self):
        # The code and str offsets of the layout against the objects' own addresses (id()).
        r = self.frames_case("offsets")
        self.assertEqual(r, {k: True for k in r})
        self.assertEqual(len(r), 7)

    @skip_in_sanitizer_build("thread", TSAN_TIMER)
    def test_spin_split_ratio(self):
        # tests/workloads/py_spin_split.py spins 3:1 in heavy() and light(); a CPU-time timer's
        # ticks name them by the innermost frame in that ratio (wide margin: a tick is a few ms of
        # CPU on a loaded VM).
        r = self.frames_case("spin_split", "3000000")
        self.assertGreaterEqual(r["heavy"] + r["light"], 40, r)
        self.assertEqual(r["ticks_missed"], 0, r)
        self.assertGreaterEqual(r["heavy"] + r["light"], 0.9 * r["ticks"], r)
        ratio = r["heavy"] / max(r["light"], 1)
        self.assertTrue(2.0 <= ratio <= 4.5, r)
        # Names are looked up once per code object, not per tick.
        self.assertLess(r["name_misses"], 20, r)

    @skip_in_sanitizer_build("thread", TSAN_TIMER)
    def test_churn_under_the_timer(self):
        # Frames pushed and popped, generators resumed, thread states made and freed by short-lived
        # threads, interrupted every 200 µs of CPU: no crash, names cached, and (nearly) nothing
        # missed: a tick inside the few instructions of a frame's push or pop may lose that frame.
        r = self.frames_case("churn", "200")
        self.assertGreater(r["ticks"], 50, r)
        self.assertLessEqual(r["ticks_missed"], 1 + r["ticks"] // 100, r)
        # Names cached: the bound is the normal build's. Under ASan, CPython 3.10's walk (every frame
        # through process_vm_readv) missed the cache 224 times in 754 ticks: left to the normal build.
        if SANITIZER != "address":
            self.assertLess(r["name_misses"], 60, r)


if __name__ == "__main__":
    unittest.main()
