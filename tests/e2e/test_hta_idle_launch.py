"""trainprof's GPU idle time by kind per stream and its kernel launch statistics against Holistic
Trace Analysis's get_idle_time_breakdown and get_cuda_kernel_launch_stats on the real GPU traces of
../shared/data/kineto/ (docs/analysis.md, "GPU idle time by kind", "Kernel launches").

HTA runs from .venv (hta_idle_launch_ref.py) on the same events at the same times: its two loading
choices that are not part of the definitions switched off (ns timestamps rounded to whole µs, the
last ProfilerStep dropped) and the timestamps shifted exactly so that its float64 holds their ns
(documented differences, docs/analysis.md). trainprof reads the original files. Then:
  rank                            equal
  idle time per stream and kind   within 10 ns (HTA rounds its idle_time to 0.01 µs)
  launches per name               the same names; count and outlier counts exact; means within
                                  0.01 ns; medians and p95 of launch call and launch delay within
                                  0.01 ns, or, in a row of more than 1024 launches (quantiles_exact
                                  false: trainprof estimates them), within 0.39% plus 0.01 ns
Skips without .venv or without the shared traces."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from common import MODERN_PYTHON, NO_VENV, SOURCE_DIR, TRAINPROF

REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hta_idle_launch_ref.py")
DATA_DIRS = [os.environ.get("TRAINPROF_KINETO_DATA", ""),  # else beside the checkout or its worktree folder
             os.path.join(SOURCE_DIR, "..", "shared", "data", "kineto"),
             os.path.join(SOURCE_DIR, "..", "..", "shared", "data", "kineto")]
TRACES = ["alexnet_rank0", "ns_resolution_rank0", "nccl_rank0_of2"]


def data_dir():
    for d in DATA_DIRS:
        if d and os.path.isfile(os.path.join(d, TRACES[0] + ".json.gz")):
            return d
    return None


class HtaIdleLaunchTest(unittest.TestCase):
    hta = None  # {trace name: HTA's results}, from one run of the reference for all traces

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tp_hta_idle_")
        if not os.access(MODERN_PYTHON, os.X_OK) or data_dir() is None:
            return
        dirs = []
        for name in TRACES:
            d = os.path.join(cls.tmp, name)
            os.makedirs(d)
            shutil.copy(os.path.join(data_dir(), name + ".json.gz"), d)
            dirs.append(d)
        ref = subprocess.run([MODERN_PYTHON, REF] + dirs, capture_output=True, text=True, timeout=300)
        if ref.returncode != 0:
            raise AssertionError("HTA reference failed:\n" + ref.stderr)
        out = json.loads(ref.stdout)
        cls.hta = {name: out[d] for name, d in zip(TRACES, dirs)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not os.access(MODERN_PYTHON, os.X_OK):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        if data_dir() is None:
            self.skipTest("no shared Kineto traces (../shared/data/kineto/ or TRAINPROF_KINETO_DATA)")

    def both(self, name):
        trace = os.path.join(self.tmp, name, name + ".json.gz")
        ours = subprocess.run([TRAINPROF, "report", "--format", "json", "--full-names", "--top", "0", trace],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        return self.hta[name], json.loads(ours.stdout)

    def compare(self, name):
        hta, rep = self.both(name)
        self.assertEqual([p["rank"] for p in rep["processes"]], [hta["rank"]])
        streams = {}
        for row in rep["gpu_idle_by_kind"]:  # HTA groups by stream alone: sum over devices
            s = streams.setdefault(str(row["stream"]), {"host_wait": 0, "kernel_wait": 0, "other": 0})
            for kind in ("host_wait", "kernel_wait", "other"):
                s[kind] += row[kind + "_ns"]
        self.assertEqual(sorted(streams), sorted(hta["streams"]))
        for stream, kinds in hta["streams"].items():
            for kind, value in kinds.items():
                ours = streams[stream][kind]
                # HTA rounds its idle_time to 0.01 µs: 5 ns, and float noise
                self.assertLessEqual(abs(ours - value), 10.0, "%s stream %s %s: trainprof %d ns, HTA %.1f ns" %
                                     (name, stream, kind, ours, value))
        ours = {r["name"]: r for r in rep["kernel_launches"]}
        self.assertEqual(rep["kernel_launches_omitted"], 0)
        self.assertEqual(sorted(ours), sorted(hta["launches"]))
        for kernel, h in hta["launches"].items():
            o = ours[kernel]
            for field in ("count", "shorter_than_launch", "long_launches", "long_delays"):
                self.assertEqual(o[field], h[field], "%s %s: %s" % (name, kernel, field))
            self.assertEqual(o["quantiles_exact"], h["count"] <= 1024, "%s %s" % (name, kernel))
            for field in ("cpu_launch_mean_ns", "launch_delay_mean_ns"):
                self.assertAlmostEqual(o[field], h[field], delta=0.01, msg="%s %s: %s" % (name, kernel, field))
            for field in ("cpu_launch_median_ns", "launch_delay_median_ns", "launch_delay_p95_ns"):
                # Estimated past 1024 launches: within DurationSummary::kRelativeError (1/256).
                delta = 0.01 + (0 if o["quantiles_exact"] else abs(h[field]) / 256)
                self.assertAlmostEqual(o[field], h[field], delta=delta, msg="%s %s: %s" % (name, kernel, field))

    def test_alexnet(self):
        self.compare("alexnet_rank0")

    def test_ns_resolution(self):
        self.compare("ns_resolution_rank0")

    def test_nccl(self):
        self.compare("nccl_rank0_of2")


if __name__ == "__main__":
    unittest.main()
