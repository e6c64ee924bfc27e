"""Python frames in the stacks of `trainprof run --backtrace=nvtx` (issue 15): a pure-Python
program's NVTX ranges opened from two functions (tests/workloads/python_callsites.py), and the
phase ranges of a PyTorch training loop (tests/workloads/mnist_style.py), which must carry the
file and line of the user's loop. Read with trace_decode.py (the format, not the collector).
Run with Debian's python3 (3.11, PyTorch 1.13) and, as e2e_python_stacks_torch2, the venv's."""

import os
import subprocess
import unittest

from common import PROGRAMS, PYTHON, WORKLOADS, TraceTest
from trace_decode import of, read_trace, stacks, string

CALLSITES = os.path.join(WORKLOADS, "python_callsites.py")
HELPERS = os.path.join(WORKLOADS, "python_range_helpers.py")
MNIST = os.path.join(WORKLOADS, "mnist_style.py")
PYNVTX = os.path.join(PROGRAMS, "libtp_pynvtx.so")


def lines_of(path, marker):
    """The line numbers (1-based) of the lines of `path` that contain `marker`."""
    with open(path) as f:
        return [i + 1 for i, text in enumerate(f) if marker in text]


def site(path, name):
    """The line ending in "# site: NAME"."""
    found = lines_of(path, "# site: " + name)
    assert len(found) == 1, (name, found)
    return found[0]


def pushes_with_stacks(trace):
    """[(RANGE_PUSH fields, {"native": [address...], "python": [(function, file, line)...]} or
    None)]: each push with the stack of the EVENT_STACK right after it (same thread)."""
    table = stacks(trace)
    recs = trace["records"]
    out = []
    for i, (n, r) in enumerate(recs):
        if n != "RANGE_PUSH":
            continue
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        frames = None
        if nxt is not None and nxt[0] == "EVENT_STACK" and nxt[1]["tid"] == r["tid"]:
            f = table[nxt[1]["stack"]]
            frames = {"native": [x[1] for x in f if x[0] == "native"],
                      "python": [tuple(x[1:]) for x in f if x[0] == "python"]}
        out.append((r, frames))
    return out


def same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


class PythonStacksTest(TraceTest):
    def traces(self):
        """(main process's trace, [its children's])."""
        traces = [read_trace(os.path.join(self.out, f)) for f in self.trace_files()]
        for t in traces:
            self.assertEqual(t["errors"], [])
        pids = {t["header"]["pid"] for t in traces}
        main = [t for t in traces if t["header"]["ppid"] not in pids][0]
        return main, [t for t in traces if t is not main]

    def main_trace(self):
        return self.traces()[0]

    def range_stacks(self, trace, name):
        """[(python frames, native frame count)] of each RANGE_PUSH named `name`."""
        out = []
        for rec, s in pushes_with_stacks(trace):
            if string(trace, rec["name"]) == name:
                self.assertIsNotNone(s, "range %r without a stack" % name)
                out.append((s["python"], len(s["native"])))
        return out

    def check_callsites(self, mode):
        proc = self.profile([PYTHON, CALLSITES, PYNVTX, mode], follow=False, extra=["--backtrace=nvtx"])
        self.assertIn("callsites done", proc.stdout)
        trace = self.main_trace()
        io = self.range_stacks(trace, "io")
        self.assertEqual(len(io), 40)
        by_function = {}
        for python, native in io:
            self.assertGreater(native, 0, "native frames first")
            # The user's function: the innermost frame in the workload (the nvtx package's own
            # push_range may come before it).
            ours = [i for i, f in enumerate(python) if same_file(f[1], CALLSITES)]
            self.assertTrue(ours, python)
            i = ours[0]
            if mode == "ctypes":
                self.assertEqual(i, 0, "innermost: the caller of the ctypes function")
            fn, _, line = python[i]
            caller = python[i + 1]
            by_function.setdefault((fn, line, caller[0], caller[2]), 0)
            by_function[(fn, line, caller[0], caller[2])] += 1
            self.assertEqual(python[-1][0], "<module>")
        self.assertEqual(by_function, {
            ("load_batch", site(CALLSITES, mode + " load_batch"), "main", site(CALLSITES, "main->load_batch")): 30,
            ("save_checkpoint", site(CALLSITES, mode + " save_checkpoint"), "main",
             site(CALLSITES, "main->save_checkpoint")): 10})
        # The thread that called with the GIL released: native frames only.
        no_gil = self.range_stacks(trace, "no_gil")
        self.assertEqual(len(no_gil), 5)
        for python, native in no_gil:
            self.assertEqual(python, [])
            self.assertGreater(native, 0)

    @unittest.skipUnless(os.path.exists(PYNVTX), "no tests/programs (built only with the NVTX headers)")
    def test_ranges_from_two_functions_carry_their_names_files_and_lines(self):
        self.check_callsites("ctypes")

    @unittest.skipUnless(os.path.exists(PYNVTX), "no tests/programs (built only with the NVTX headers)")
    def test_nvtx_package(self):
        if subprocess.run([PYTHON, "-c", "import nvtx"], capture_output=True).returncode != 0:
            self.skipTest("no nvtx package for %s (the venv has it: e2e_python_stacks_torch2)" % PYTHON)
        self.check_callsites("nvtx")

    @unittest.skipUnless(os.path.exists(PYNVTX), "no tests/programs (built only with the NVTX headers)")
    def test_range_helpers_of_the_program_are_split_by_their_callers(self):
        """A context manager and a decorator of the script's own open "io" and "step" for train()
        (30 each) and evaluate() (10 each): the report's call-site rows name the helper's line and,
        a row per caller, the caller's line (issue 37, class 7)."""
        proc = self.profile([PYTHON, HELPERS, PYNVTX], follow=False, extra=["--backtrace=nvtx"])
        self.assertIn("helpers done", proc.stdout)
        rows = [r for r in self.report(extra=["--by-callsite"])["callsites"] if r["name"] in ("io", "step")]
        # The function's last name: Python 3.11 on name it by its qualified name (traced.<locals>...).
        got = {(r["name"], r["function"].split(".")[-1], r["line"], r["caller"]): r["calls"] for r in rows}
        name = os.path.basename(HELPERS)

        def caller(fn, site_name):
            return "%s at %s:%d" % (fn, name, site(HELPERS, site_name))

        self.assertEqual(got, {
            ("io", "annotate", site(HELPERS, "annotate"), caller("train", "train->annotate")): 30,
            ("io", "annotate", site(HELPERS, "annotate"), caller("evaluate", "evaluate->annotate")): 10,
            ("step", "wrapper", site(HELPERS, "traced"), caller("train", "train->train_step")): 30,
            ("step", "wrapper", site(HELPERS, "traced"), caller("evaluate", "evaluate->eval_step")): 10})

    def test_phase_ranges_carry_the_line_of_the_users_loop(self):
        self.profile([PYTHON, MNIST, "--epochs", "1"], extra=["--backtrace=nvtx"])
        trace, workers = self.traces()
        domains = {d["domain"]: string(trace, d["name"]) for d in of(trace, "DOMAIN")}
        got = {}
        for rec, s in pushes_with_stacks(trace):
            if domains.get(rec["domain"]) != "trainprof":
                continue
            self.assertIsNotNone(s, "phase %s without a stack" % string(trace, rec["name"]))
            python = s["python"]
            self.assertTrue(python, "phase %s without Python frames" % string(trace, rec["name"]))
            fn, file, line = python[0]
            self.assertFalse("/_trainprof/" in file, "the shim's own frames are left out")
            got.setdefault(rec["category"], set()).add((fn, os.path.basename(file), line))

        def in_fn(fn, code):
            """(fn, file, line) of the lines of function `fn` of MNIST that contain `code`."""
            with open(MNIST) as f:
                text = f.read().split("\n")
            begin = text.index([t for t in text if t.startswith("def %s(" % fn)][0])
            end = next((i for i in range(begin + 1, len(text)) if text[i].startswith("def ")), len(text))
            found = {(fn, "mnist_style.py", i + 1) for i in range(begin, end) if code in text[i]}
            self.assertEqual(len(found), 1, (fn, code))
            return found

        def in_train(code):
            return in_fn("train", code)

        # format/trainprof/phases.h: 1 data wait, 7 forward, 8 backward, 9 optimizer step, 10 zero_grad
        # Data waits: train()'s loop and test()'s.
        self.assertEqual(got[1], in_train("in enumerate(train_loader)") | in_fn("test", "in test_loader:"))
        self.assertEqual(got[7], in_train("output = model(data)") | in_fn("test", "output = model(data)"))
        self.assertEqual(got[8], in_train("loss.backward()"))
        self.assertEqual(got[9], in_train("optimizer.step()"))
        self.assertEqual(got[10], in_train("optimizer.zero_grad()"))

        # DataLoader workers (fork children: string ids of their own, the name cache emptied):
        # each dataset item is fetched by PyTorch's fetcher, as torch/utils/data names it.
        self.assertEqual(len(workers), 4)  # 2 workers for each loader
        for w in workers:
            items = [s for rec, s in pushes_with_stacks(w) if rec["category"] == 4]
            self.assertTrue(items)
            for s in items:
                self.assertIsNotNone(s)
                fn, file, _ = s["python"][0]
                self.assertIn("fetch", fn)
                self.assertTrue(file.endswith(os.path.join("torch", "utils", "data", "_utils", "fetch.py")), file)


if __name__ == "__main__":
    unittest.main()
