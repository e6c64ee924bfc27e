"""The sampler's Python frames on every CPython the machine has (issue 42): pyenv's interpreters
(`pyenv root`/versions/3.X.Y, release builds with a shared libpython; each version skipped, with
the reason, where it is missing). On each:
  - test_python_async.py's cases (the probe's walk, frame by frame against the interpreter's own
    view of the same frames);
  - `trainprof run --sample=1000` of tests/workloads/py_spin_split.py: the report's function table
    finds heavy() and light() in Python frames, 3:1 (wide margin);
  - the same of tests/workloads/py_code_churn.py, 20,000 functions each called once and freed (a
    code object made in the memory of the one before): every sampled frame of theirs is named for
    the function whose file and lines hold it (issue 35);
and a CPython the sampler has no layout for (simulated: a preloaded Py_Version of 3.15) gives the
message on stderr and in the report, and native frames only, not wrong Python frames.
These interpreters have no PyTorch: nothing here needs it."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import test_python_async as base
from common import PROGRAMS, WORKLOADS, TraceTest, skip_in_sanitizer_build

VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
SPLIT = os.path.join(WORKLOADS, "py_spin_split.py")
CHURN = os.path.join(WORKLOADS, "py_code_churn.py")
OVERRIDE = os.path.join(PROGRAMS, "libtp_py_version_override.so")
UNSUPPORTED = ("Python frames not read: CPython 3.15 is not supported; the samples show native frames only")


def pyenv_root():
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        root = ""
    return root or os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")


def interpreter(version):
    """(pyenv's newest release build of `version`, or None; the reason when None)."""
    versions = os.path.join(pyenv_root(), "versions")
    names = os.listdir(versions) if os.path.isdir(versions) else []
    # "3.12.1", not "3.13.0t" (free-threaded) or "3.12-dev".
    found = sorted((n for n in names if re.fullmatch(re.escape(version) + r"\.\d+", n)),
                   key=lambda n: int(n.rsplit(".", 1)[1]))
    for name in reversed(found):
        path = os.path.join(versions, name, "bin", "python" + version)
        if os.access(path, os.X_OK):
            return path, ""
    return None, "no CPython %s here: pyenv's interpreters are looked for in %s" % (version, versions)


def with_interpreter(version):
    """A base class's setUp that skips, saying why, where pyenv has no `version`."""
    path, why = interpreter(version)

    def setUp(self):
        if path is None:
            self.skipTest(why)
        super(type(self), self).setUp()

    return path or "", setUp


# test_python_async.py's cases, once per version.
for _v in VERSIONS:
    _path, _setup = with_interpreter(_v)
    _name = "PythonAsync%sTest" % _v.replace(".", "")
    globals()[_name] = type(_name, (base.PythonAsyncTest,), {"python": _path, "setUp": _setup})
del _v, _path, _setup, _name


def function_rows(report, path):
    """{function: row} of the report's function table rows in file `path`."""
    return {r["function"]: r for r in report.get("functions", [])
            if r["file"] is not None and os.path.realpath(r["file"]) == os.path.realpath(path)}


class SampledSplitTest(TraceTest):
    """`trainprof run --sample=1000` of the 3:1 program on each interpreter."""

    N = "2700000"  # light's iterations: about 0.2 s of CPU, heavy 0.6 s (pyenv's 3.11 on this VM)

    def split(self, version):
        python, why = interpreter(version)
        if python is None:
            self.skipTest(why)
        proc = self.profile([python, SPLIT, self.N], follow=False, extra=["--sample=1000"])
        self.assertNotIn("Python frames not read", proc.stderr)
        report = self.report()
        rows = function_rows(report, SPLIT)
        self.assertIn("heavy", rows, report.get("functions", [])[:5])
        self.assertIn("light", rows, report.get("functions", [])[:5])
        heavy, light = rows["heavy"]["self_samples"], rows["light"]["self_samples"]
        self.assertGreater(light, 30, rows)
        self.assertTrue(2.0 <= heavy / light <= 4.5, rows)
        self.assertIn(rows["heavy"]["line"], (16, 17), rows)  # its loop: `for i in range(n)`, `x += i * i`
        # The program's own time is in them: the samples of its two functions are most of all.
        total = sum(r["self_samples"] for r in report["functions"]) + report.get("functions_omitted_samples", 0)
        self.assertGreater(heavy + light, 0.6 * total, report["functions"][:8])
        self.assertNotIn("not supported", " ".join(w["text"] if isinstance(w, dict) else str(w)
                                                   for w in report.get("warnings", [])))

    def churn(self, version):
        python, why = interpreter(version)
        if python is None:
            self.skipTest(why)
        tmp = tempfile.mkdtemp(prefix="trainprof-e2e-churn-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        lines = os.path.join(tmp, "functions.json")
        self.profile([python, CHURN, lines, "20000", "1000"], follow=False, extra=["--sample=1000"])
        with open(lines) as f:
            where = json.load(f)  # co_name: [file, first line, last line]
        folded = self.run_trainprof(["export", "--format", "folded", "-o", "-", self.out]).stdout
        sampled, wrong = 0, []
        for row in folded.splitlines():
            stack, count = row.rsplit(" ", 1)
            for frame in stack.split(";"):
                m = re.fullmatch(r"(?:gen\.)?(f\d+) \((.*):(\d+)\)", frame)  # 3.10 names frames by co_name
                if m is None or m.group(1) not in where:
                    continue
                sampled += int(count)
                file, first, last = where[m.group(1)]
                if m.group(2) != file or not first <= int(m.group(3)) <= last:
                    wrong.append(frame)
        # About 1 s of CPU in the functions: hundreds of samples (a wide margin for a loaded VM).
        self.assertGreater(sampled, 150, folded[:2000])
        self.assertEqual(len(wrong), 0, "%d of %d sampled frames named for a function that cannot hold their file "
                         "and line, e.g. %s" % (len(wrong), sampled, wrong[:5]))

    # The override library is preloaded before the sanitizer runtime trainprof puts first there.
    @skip_in_sanitizer_build("address", "the preloaded Py_Version override would come before the ASan runtime")
    @skip_in_sanitizer_build("thread", "the preloaded Py_Version override would come before the TSan runtime")
    def test_unknown_version_gives_the_message_not_frames(self):
        # Any pyenv interpreter (a shared libpython: the preloaded Py_Version is found first).
        python = next((p for p in (interpreter(v)[0] for v in VERSIONS) if p), None)
        if python is None:
            self.skipTest("no pyenv interpreter here")
        env = self.child_env()
        env["LD_PRELOAD"] = ":".join(filter(None, [env.get("LD_PRELOAD", ""), OVERRIDE]))
        proc = self.run_trainprof(["run", "-o", self.out, "--sample=1000", "--", python, SPLIT, "2000000"], env=env)
        self.assertEqual(proc.stderr.count(UNSUPPORTED), 1, proc.stderr)
        report = self.report()
        self.assertEqual(len(report["processes"]), 1)
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertEqual(text.count(UNSUPPORTED), 1, text)
        self.assertEqual(report["stats"]["python_frames_unsupported"], 1, report["stats"])
        # Native frames only: no Python function, and no Python frames counted as missed.
        self.assertEqual(function_rows(report, SPLIT), {})
        self.assertFalse([r for r in report.get("functions", []) if r["file"] and r["file"].endswith(".py")],
                         report.get("functions", [])[:5])
        self.assertNotIn("could not read", text)
        # The probe's walk has no layout for it either.
        r = base.run_case("method", python=python, preload=[OVERRIDE])
        self.assertIn("unsupported", r)


# test_split_3_10 .. test_split_3_14 and test_churn_3_10 ..: the split and the churn on each version.
for _v in VERSIONS:
    setattr(SampledSplitTest, "test_split_" + _v.replace(".", "_"),
            skip_in_sanitizer_build("thread", base.TSAN_TIMER)(lambda self, v=_v: self.split(v)))
    setattr(SampledSplitTest, "test_churn_" + _v.replace(".", "_"),
            skip_in_sanitizer_build("thread", base.TSAN_TIMER)(lambda self, v=_v: self.churn(v)))
del _v


if __name__ == "__main__":
    unittest.main()
