"""CPU sampling in the profiled process (`trainprof run --sample=HZ`, issue 15), checked in the
trace itself with trace_decode.py: SAMPLE records, their STACKs placed in the planted functions
with the executable's own symbol table (nm), the header's kStacks entries and samples_dropped.

tests/programs/sample_split.cc spends CPU time 3:1 in heavy_work and light_work (by iteration
counts); sample_own_signal.cc uses every real-time signal itself; sample_threads_fork.cc runs 64
spinning threads and fork children that spin."""

import json
import os
import re
import unittest

from common import PYTHON, SANITIZER, TraceTest, program, skip_in_sanitizer_build

# The TSan build does not interpose sigaction/signal/pthread_create (inject/stacks/sampler.cc:
# TSan intercepts them itself, and calls sigaction before its runtime is ready), and defers
# asynchronous signals: chaining, threads that never record, and per-thread counts are tested in
# the normal and ASan builds.
TSAN_SAMPLING = "no sigaction/pthread_create interposition under TSan, which defers asynchronous signals"
# TSan installs the sampling handler (inject/stacks/sample_signal.cc) and runs it at its next
# interceptor: a thread spinning in pure Python calls none, so its samples land after the spin.
TSAN_LATE = "TSan defers the sampling signal to its next interceptor: samples of pure-Python spins land after them"
from test_stacks import Placed
from trace_decode import of, read_trace, stacks

HZ = 1000


def meta_entries(trace):
    """The header's kStacks entries as {key: value} (NUL-separated key=value)."""
    text = trace["header"]["meta"].get("stacks") or ""
    return dict(e.split("=", 1) for e in text.split("\0") if "=" in e)


class SamplingTest(TraceTest):
    def traces(self):
        out = []
        for f in self.trace_files():
            t = read_trace(os.path.join(self.out, f))
            self.assertEqual(t["errors"], [], f)
            out.append(t)
        return out

    @skip_in_sanitizer_build("thread", "the TSan build takes no native frames in the sampling handler (libunwind's lock trips TSan's deadlock detector)")
    def test_samples_find_the_3_to_1_split(self):
        # ~1.6 s of CPU time (4x the program's default): enough signals for the bound below.
        proc = self.profile([program("sample_split"), str(4 * 60000000)], follow=False, extra=["--sample=%d" % HZ])
        self.assertIn("sample_split done", proc.stdout)
        (trace,) = self.traces()
        meta = meta_entries(trace)
        self.assertEqual(meta.get("sample_hz"), str(HZ))
        self.assertEqual(meta.get("backtrace"), "cuda:1000")
        signo = int(meta["sample_signal"])
        self.assertTrue(34 <= signo <= 64, signo)  # a real-time signal
        samples = of(trace, "SAMPLE")
        table = stacks(trace)
        placed = Placed(trace, program("sample_split"), {"heavy_work", "light_work", "main"})
        self.assertEqual(set(placed.funcs), {"heavy_work", "light_work", "main"})
        exe = placed.exe[0]
        counts = {}
        signals = {}  # the samples one signal wrote (one per period of CPU time it stood for) share its time
        for s in samples:
            signals.setdefault(s["t"], []).append(s)
            self.assertIn(s["stack"], table, "a SAMPLE names an undefined stack")
            self.assertEqual(s["python_missed"], 0)
            frames = table[s["stack"]]
            # The handler's and the signal trampoline's frames are left out: the innermost frame
            # is the interrupted code, no frame of trainprof's library anywhere.
            for f in frames:
                m = placed.module_of(f[1])
                self.assertFalse(m is not None and m["path_text"].endswith("libtrainprof_inject.so"), frames)
            name = placed.function_of(frames[0][1] + 1, exe) if placed.module_of(frames[0][1]) is exe else None
            counts[name] = counts.get(name, 0) + 1
        heavy, light = counts.get("heavy_work", 0), counts.get("light_work", 0)
        # ~1.6 s of CPU time at 1000 Hz: ~1200 and ~400 samples, from ~400 signals (the kernel
        # checks CPU timers at its tick, 250 Hz here: a signal stands for ~4 periods). Each signal
        # is one observation of where the thread was: the light share is binomial over the
        # signals, and the bound is 3.5 standard deviations of it (a loaded machine's preemption
        # breaks the tick's regular pattern; at ~60 signals, a 2.0-4.5 ratio bound failed there).
        n = len(signals)
        self.assertGreater(n, 100, counts)
        share = light / (heavy + light)
        allowed = max(0.05, 3.5 * (0.25 * 0.75 / n) ** 0.5)
        self.assertLessEqual(abs(share - 0.25), allowed, (counts, n))
        # Nearly every sample is in the two functions (the rest: start-up, exit).
        self.assertGreater(heavy + light, 0.8 * len(samples), counts)
        self.assertEqual(trace["header"]["samples_dropped"], 0)

    def test_off_by_default(self):
        self.profile([program("sample_split"), "3000000"], follow=False)
        (trace,) = self.traces()
        self.assertEqual(of(trace, "SAMPLE"), [])
        self.assertNotIn("sample_hz", meta_entries(trace))
        self.assertEqual(trace["header"]["meta"].get("stacks"), "backtrace=cuda:1000")

    @skip_in_sanitizer_build("thread", "the TSan build takes no native frames in the sampling handler (libunwind's lock trips TSan's deadlock detector)")
    def test_samples_with_backtrace_none(self):
        self.profile([program("sample_split"), "20000000"], follow=False,
                     extra=["--sample=%d" % HZ, "--backtrace=none"])
        (trace,) = self.traces()
        self.assertEqual(meta_entries(trace).get("backtrace"), "none")
        self.assertEqual(meta_entries(trace).get("sample_hz"), str(HZ))
        self.assertGreater(len(of(trace, "SAMPLE")), 10)

    @skip_in_sanitizer_build("thread", TSAN_SAMPLING)
    def test_program_using_the_real_time_signals_keeps_working(self):
        proc = self.profile([program("sample_own_signal")], follow=False, extra=["--sample=%d" % HZ])
        self.assertIn("own signals ok", proc.stdout)
        (trace,) = self.traces()
        self.assertGreater(len(of(trace, "SAMPLE")), 20)  # and the sampler kept sampling

    @skip_in_sanitizer_build("thread", TSAN_SAMPLING)
    @skip_in_sanitizer_build("address", "no pthread_create interposition under ASan (its thread start routine "
                             "must run first): threads that never record are not sampled")
    def test_threads_and_fork_children_all_sampled_without_deadlock(self):
        proc = self.run_or_fail_if_hung(["run", "-o", self.out, "--follow-children", "--sample=%d" % HZ, "--",
                                         program("sample_threads_fork"), "64", "4", "30"],
                                        hung="64 sampled threads and 4 fork children", timeout=240)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("threads_fork done, 0 children failed", proc.stdout)
        cpu = {int(p): int(ns) for p, ns in re.findall(r"^cpu (\d+) (\d+)$", proc.stdout, re.M)}
        traces = {t["header"]["pid"]: t for t in self.traces()}
        self.assertEqual(set(traces), set(cpu))
        for pid, t in traces.items():
            samples = of(t, "SAMPLE")
            expected = cpu[pid] * HZ / 1e9
            # Every thread's CPU time is sampled: samples × 1/HZ ≈ the process's CPU time, less what
            # the kernel does not signal: with 64 spinning threads on few cores it delivers far
            # fewer CPU-timer signals than periods (measured without trainprof on the 2-core
            # development machine under load: 31-98% of the expiries of 8 threads; here each
            # signal stands for the periods since the thread's last one, but a thread's periods
            # after its last signal are lost). Hence the wide lower margin.
            self.assertTrue(0.15 * expected <= len(samples) + t["header"]["samples_dropped"] <= 1.3 * expected + 5,
                            "pid %d: %d samples for %.0f ms of CPU time" % (pid, len(samples), cpu[pid] / 1e6))
            tids = {s["tid"] for s in samples}
            self.assertGreater(len(samples), 0, "pid %d has no samples" % pid)
            if t["header"]["flags"] & 1:  # a fork child: its forking thread (90 ms) and its 2 threads
                self.assertGreaterEqual(len(tids), 1, tids)
                self.assertLessEqual(len(tids), 3, tids)
            else:
                # Most of the 64 spinners: the kernel leaves some threads of 30 ms without a
                # single CPU-timer signal when 64 spin on 2 cores (measured without trainprof too:
                # /tmp-style per-thread timer_create program, 11 of 64 threads got none).
                self.assertGreaterEqual(len(tids), 32, len(tids))

    def script(self, name, text):
        """A Python program written next to the output directory (removed after the test)."""
        path = os.path.join(os.path.dirname(self.out), os.path.basename(self.out) + "-" + name)
        with open(path, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    @skip_in_sanitizer_build("thread", TSAN_LATE)
    def test_python_functions_in_the_samples(self):
        # A pure-Python loop, as users write one: CPU time 3:1 in two functions, split by calls.
        script = self.script("spin.py", "def heavy_step(n):\n"
                    "    x = 0\n"
                    "    for i in range(n):\n"
                    "        x += i * i\n"
                    "    return x\n\n\n"
                    "def light_step(n):\n"
                    "    x = 0\n"
                    "    for i in range(n):\n"
                    "        x += i * i\n"
                    "    return x\n\n\n"
                    "for _ in range(20):\n"
                    "    heavy_step(300000)\n"
                    "    light_step(100000)\n"
                    "print('spin done')\n")
        proc = self.profile([PYTHON, script], follow=False, extra=["--sample=%d" % HZ])
        self.assertIn("spin done", proc.stdout)
        (trace,) = self.traces()
        table = stacks(trace)
        counts, loop_missed = {}, 0
        for s in of(trace, "SAMPLE"):
            py = [f for f in table.get(s["stack"], []) if f[0] == "python"]
            name = (py[0][1], os.path.basename(py[0][2])) if py else None
            counts[name] = counts.get(name, 0) + 1
            if name is not None and name[0] in ("heavy_step", "light_step") and s["python_missed"]:
                loop_missed += 1
        heavy = counts.get(("heavy_step", os.path.basename(script)), 0)
        light = counts.get(("light_step", os.path.basename(script)), 0)
        self.assertGreater(light, 20, counts)
        self.assertTrue(2.0 <= heavy / light <= 4.5, counts)
        # In the loop the frames are read (samples with frames missed come from the start-up:
        # the shim's and the interpreter's imports).
        self.assertLessEqual(loop_missed, 0.05 * (heavy + light), counts)
        # The report's function table names both functions, with their file and the 3:1 split.
        report = json.loads(self.run_trainprof(["report", "--format", "json", self.out]).stdout)
        rows = {r["function"]: r for r in report["functions"]
                if r["file"] is not None and os.path.basename(r["file"]) == os.path.basename(script)}
        self.assertIn("heavy_step", rows, report["functions"][:5])
        self.assertIn("light_step", rows)
        ratio = rows["heavy_step"]["self_samples"] / rows["light_step"]["self_samples"]
        self.assertTrue(2.0 <= ratio <= 4.5, ratio)
        self.assertIn(rows["heavy_step"]["line"], (3, 4))  # its loop: `for i in range(n)`, `x += i * i`
        self.assertGreater(rows["heavy_step"]["self_share"], rows["light_step"]["self_share"])

    @skip_in_sanitizer_build("thread", TSAN_LATE)
    def test_stacks_deeper_than_64_python_frames_are_marked_cut(self):
        # A recursive walk 100 calls deep (a tree, a parser): the sampler keeps the innermost 64
        # Python frames and marks the rest; the report roots them at <outer frames not recorded>.
        script = self.script("deep.py", "def leaf(n):\n"
                    "    x = 0\n"
                    "    for i in range(n):\n"
                    "        x += i * i\n"
                    "    return x\n\n\n"
                    "def down(depth, n):\n"
                    "    if depth == 0:\n"
                    "        return leaf(n)\n"
                    "    return down(depth - 1, n)\n\n\n"
                    "for _ in range(8):\n"
                    "    down(100, 300000)\n"
                    "print('deep done')\n")
        proc = self.profile([PYTHON, script], follow=False, extra=["--sample=%d" % HZ])
        self.assertIn("deep done", proc.stdout)
        report = json.loads(self.run_trainprof(["report", "--format", "json", self.out]).stdout)
        rows = {r["function"]: r for r in report["functions"]}
        self.assertIn("leaf", rows, report["functions"][:5])
        leaf = rows["leaf"]["self_samples"]
        self.assertGreater(leaf, 20, rows["leaf"])
        cut = rows.get("<outer frames not recorded>")
        self.assertIsNotNone(cut, sorted(rows))
        self.assertEqual(cut["self_samples"], 0)
        self.assertGreaterEqual(cut["total_samples"], 0.9 * leaf)  # the leaf's samples are all 102 deep
        self.assertIsNone(cut["file"])
        self.assertEqual(report["stats"]["samples_stacks_cut"], cut["total_samples"])
        # 63 of the 100 `down` frames fit below the leaf: `down` is on every such stack, once.
        self.assertGreaterEqual(rows["down"]["total_samples"], leaf)
        text = self.run_trainprof(["report", self.out])
        self.assertIn("CPU samples had stacks deeper than the 64 frames kept", text.stdout + text.stderr)
        folded = self.run_trainprof(["export", "--format", "folded", "-o", "-", self.out]).stdout
        leaf_lines = [l for l in folded.splitlines() if ";leaf (" in l]
        self.assertTrue(leaf_lines, folded[:500])
        rooted = sum(int(l.rsplit(" ", 1)[1]) for l in leaf_lines if l.startswith("<outer frames not recorded>;"))
        self.assertGreaterEqual(rooted, 0.9 * leaf, leaf_lines[:3])

    def test_samples_only_inside_the_capture_window(self):
        # --delay/--duration limit the samples as every other event (a new-user pass found the
        # whole run's samples under a 0.3 s window that the report said was the capture).
        script = self.script("long_spin.py", "import time\n\n\n"
                             "def spin(seconds):\n"
                             "    end = time.process_time() + seconds\n"
                             "    x = 0\n"
                             "    while time.process_time() < end:\n"
                             "        x += 1\n\n\n"
                             "spin(1.5)\n"
                             "print('long spin done')\n")
        proc = self.profile([PYTHON, script], follow=False,
                            extra=["--sample=%d" % HZ, "--delay", "0.5", "--duration", "0.4"])
        self.assertIn("long spin done", proc.stdout)
        (trace,) = self.traces()
        window = dict(e.split("=", 1) for e in trace["header"]["meta"]["capture"].split("\0") if "=" in e)
        begin, end = int(window["window_start_ns"]), int(window["window_end_ns"])
        samples = of(trace, "SAMPLE")
        self.assertGreater(len(samples), 40, "samples inside the 0.4 s window")
        outside = [s["t"] for s in samples if not begin <= s["t"] < end]
        self.assertEqual(outside, [])
        # 0.4 s of a spinning thread's CPU time at 1000 Hz, not the run's 1.5 s.
        self.assertLess(len(samples), 0.6 * HZ, len(samples))

    def test_the_shims_frames_are_not_in_the_samples_of_import_torch(self):
        # `import torch` runs under the shim's import hook (python/_trainprof/import_hook.py): a
        # sample taken while torch imports must show the program's `import torch` line and
        # torch's modules, never trainprof's own frames (a new-user pass found the hook's
        # exec_and_instrument, then in sitecustomize.py, at 47% total).
        script = self.script("imports.py", "import torch\n\n"
                             "x = torch.ones(64, 64)\n"
                             "for _ in range(200):\n"
                             "    x = (x @ x).clamp(max=1.0)\n"
                             "print('imports done')\n")
        proc = self.profile([PYTHON, script], follow=False, extra=["--sample=%d" % HZ])
        self.assertIn("imports done", proc.stdout)
        (trace,) = self.traces()
        table = stacks(trace)
        files, import_line = set(), 0
        for s in of(trace, "SAMPLE"):
            py = [f for f in table.get(s["stack"], []) if f[0] == "python"]
            files.update(f[2] for f in py)
            # (the program's own line may be past the innermost 64 frames of a deep import)
            import_line += any("/torch/" in f[2] and f[1] == "<module>" for f in py)
        self.assertGreater(import_line, 5, "samples in `import torch`")
        ours = sorted(f for f in files if "/_trainprof/" in f or f.endswith("/python/sitecustomize.py"))
        self.assertEqual(ours, [])

    @skip_in_sanitizer_build("thread", TSAN_SAMPLING)
    def test_python_fork_children_sampled_with_their_python_frames(self):
        # DataLoader-style workers: os.fork() children of a Python parent, each spinning in Python
        # on its forking thread and on a thread of its own. A fork child has no native frames
        # (docs/cli.md, "Call stacks"): its samples carry the Python frames.
        script = self.script("workers.py",
                             "import os, threading\n\n\n"
                             "def worker_loop(n):\n"
                             "    x = 0\n"
                             "    for i in range(n):\n"
                             "        x += i * i\n"
                             "    return x\n\n\n"
                             "pids = []\n"
                             "for _ in range(3):\n"
                             "    pid = os.fork()\n"
                             "    if pid == 0:\n"
                             "        t = threading.Thread(target=worker_loop, args=(1000000,))\n"
                             "        t.start()\n"
                             "        worker_loop(1000000)\n"
                             "        t.join()\n"
                             "        os._exit(0)\n"
                             "    pids.append(pid)\n"
                             "for p in pids:\n"
                             "    os.waitpid(p, 0)\n"
                             "print('workers done')\n")
        proc = self.run_or_fail_if_hung(["run", "-o", self.out, "--follow-children", "--sample=%d" % HZ, "--",
                                         PYTHON, script], hung="Python fork children sampled", timeout=240)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("workers done", proc.stdout)
        children = [t for t in self.traces() if t["header"]["flags"] & 1]
        self.assertEqual(len(children), 3)
        for t in children:
            table = stacks(t)
            samples = of(t, "SAMPLE")
            in_loop = [s for s in samples
                       if any(f[0] == "python" and f[1] == "worker_loop" for f in table.get(s["stack"], []))]
            self.assertGreater(len(in_loop), 10, "pid %d: %d samples" % (t["header"]["pid"], len(samples)))
            # The forking thread and its thread; in the sanitizer builds a thread is sampled once it
            # records (no pthread_create interposition there: docs/testing.md), so the forking one.
            self.assertEqual(len({s["tid"] for s in in_loop}), 1 if SANITIZER else 2)
            for s in in_loop:
                self.assertTrue(all(f[0] == "python" for f in table[s["stack"]]))

    def test_bad_sample_rate_is_a_usage_error(self):
        for bad in ("fast", "10001", "-1"):
            with self.subTest(bad=bad):
                proc = self.run_trainprof(["run", "-o", self.out, "--sample=" + bad, "--", "true"], check=False)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("trainprof: --sample: '%s'" % bad, proc.stderr)


if __name__ == "__main__":
    unittest.main()
