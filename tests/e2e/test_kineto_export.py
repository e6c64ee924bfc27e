"""`trainprof export --format kineto` and the export selection (--window, --pid, --rank), end to end:
the files a two-rank run and the stand-in-CUPTI CUDA run give, read back as JSON and loaded by
Holistic Trace Analysis (.venv; those parts skip without it), whose breakdowns must equal
trainprof's own numbers."""

import glob
import gzip
import json
import os
import re
import subprocess
import unittest

from common import MODERN_PYTHON, NO_VENV, PROGRAMS, SOURCE_DIR, TraceTest, program

# The real GPU traces (HTA's public test data), as tests/e2e/test_kineto_read.py finds them.
SHARED = os.environ.get("TRAINPROF_KINETO_DATA",
                        os.path.normpath(os.path.join(SOURCE_DIR, "..", "..", "shared", "data", "kineto")))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/data/kineto"
SHARED_TRACES = ("alexnet_rank0", "ns_resolution_rank0", "nccl_rank0_of2")
HTA_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hta_breakdowns.py")
FILE_NAME = re.compile(r"^(.+)_(\d+)\.(\d+)\.pt\.trace\.json(\.gz)?$")
RANK_LINE = re.compile(r'"rank":\s+(\d+)')  # HTA's rank lookup (hta/common/trace_file.py)


def hta_available():
    if not os.access(MODERN_PYTHON, os.X_OK):
        return False
    return subprocess.run([MODERN_PYTHON, "-c", "import hta"], capture_output=True, timeout=120).returncode == 0


HTA = None


def need_hta(test):
    global HTA
    if HTA is None:
        HTA = hta_available()
    if not HTA:
        test.skipTest(NO_VENV % (MODERN_PYTHON + " with HolisticTraceAnalysis"))


def hta_breakdowns(test, trace_dir):
    proc = subprocess.run([MODERN_PYTHON, HTA_SCRIPT, trace_dir], capture_output=True, text=True, timeout=300)
    test.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    return json.loads(proc.stdout)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return f.read()


class KinetoExportTest(TraceTest):
    def export(self, *args, paths=None, expect=0):
        out = os.path.join(self.out, "kineto")
        proc = self.run_trainprof(["export", "--format", "kineto", "-o", out] + list(args) +
                                  (paths or [self.out]), check=False)
        self.assertEqual(proc.returncode, expect, proc.stderr)
        return proc, out, sorted(os.listdir(out)) if os.path.isdir(out) else []

    def two_ranks(self):
        prog = program("nvtx_workload")
        self.profile(["sh", "-c", 'RANK=0 WORLD_SIZE=2 "$0" & RANK=1 WORLD_SIZE=2 "$0" & wait', prog])
        # nvtx_workload forks a child, which inherits its rank: the rank's own process is the one
        # whose role names the rank.
        return {p["rank"]: p["pid"] for p in self.report()["processes"] if p["role"] == "rank %d" % (p["rank"] or 0)}

    def test_a_two_rank_run_gives_one_file_per_rank_that_hta_loads(self):
        pids = self.two_ranks()
        self.assertEqual(sorted(pids), [0, 1])
        proc, out, files = self.export()
        self.assertEqual(len(files), 2, files)
        self.assertIn("has no rank and no ancestor with one: left out of the Kineto export", proc.stderr)  # sh
        self.assertIn("written to 2 Kineto traces", proc.stderr)
        self.assertNotIn("\r", proc.stderr)  # stderr is not a terminal: no progress bar
        for f in files:
            host, pid, ms, gz = FILE_NAME.match(f).groups()
            self.assertIsNone(gz)
            text = load(os.path.join(out, f))
            rank = int(RANK_LINE.search(text).group(1))
            self.assertEqual(int(pid), pids[rank])
            doc = json.loads(text)
            self.assertEqual(doc["distributedInfo"], {"rank": rank, "world_size": 2})
            self.assertEqual(doc["schemaVersion"], 1)
            steps = [e for e in doc["traceEvents"] if e.get("name") == "step" and e["ph"] == "X"]
            self.assertEqual(len(steps), 20)
            self.assertTrue(all(e["cat"] == "user_annotation" and e["pid"] == int(pid) for e in steps))
            self.assertGreater(doc["baseTimeNanoseconds"], 1_600_000_000 * 10**9)
        need_hta(self)
        self.assertEqual(hta_breakdowns_ranks(self, out), [0, 1])

    def test_gzip_and_rank_selection(self):
        pids = self.two_ranks()
        proc, out, files = self.export("--gzip", "--rank", "1")
        self.assertEqual(len(files), 1, files)
        self.assertTrue(files[0].endswith(".pt.trace.json.gz"))
        self.assertEqual(int(FILE_NAME.match(files[0]).group(2)), pids[1])
        self.assertEqual(json.loads(load(os.path.join(out, files[0])))["distributedInfo"]["rank"], 1)

    def test_bad_selections_are_named(self):
        self.two_ranks()
        for args, message in ((["--window", "3:2"], "END (2) is not after START (3)"),
                              (["--window", "nvtx:step"], "nvtx:NAME#N"),
                              (["--pid", "x"], "'x' is not an integer"),
                              (["--rank", "7"], "--rank 7: no process has rank 7 (ranks: 0, 1)"),
                              (["--window", "nvtx:step#41"], "the selected processes have 40 ranges named 'step', not 41"),
                              (["--window", "nvtx:nope#1"], "no NVTX range named 'nope'")):
            with self.subTest(args=args):
                proc, _, files = self.export(*args, expect=2)
                self.assertIn(message, proc.stderr)
                self.assertEqual(files, [])
        proc = self.run_trainprof(["export", "--format", "kineto", self.out], check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("trainprof: error: --format kineto needs -o DIR", proc.stderr)


def hta_breakdowns_ranks(test, trace_dir):
    proc = subprocess.run([MODERN_PYTHON, "-c",
                           "import sys, logging; logging.disable(logging.WARNING)\n"
                           "from hta.trace_analysis import TraceAnalysis\n"
                           "print(sorted(TraceAnalysis(trace_dir=sys.argv[1]).t.traces))", trace_dir],
                          capture_output=True, text=True, timeout=300)
    test.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
    return json.loads(proc.stdout)


class ChromeSelectionTest(TraceTest):
    """--window, --pid and --rank on the Chrome export of a two-rank run of tests/programs/nvtx_workload."""

    def setUp(self):
        super().setUp()
        prog = program("nvtx_workload")
        self.profile(["sh", "-c", 'RANK=0 WORLD_SIZE=2 "$0" & RANK=1 WORLD_SIZE=2 "$0" & wait', prog])
        processes = json.loads(self.run_trainprof(["report", "--format", "json", self.out]).stdout)["processes"]
        self.pids = {p["rank"]: p["pid"] for p in processes if p["role"] == "rank %d" % (p["rank"] or 0)}
        self.rank_pids = {r: {p["pid"] for p in processes if p["rank"] == r} for r in (0, 1)}

    def chrome(self, *args):
        path = os.path.join(self.out, "t.json")
        self.run_trainprof(["export", "-o", path] + list(args) + [self.out])
        with open(path) as f:
            return json.load(f)

    def steps(self, doc):
        return sorted((e["pid"], e["ts"], e["ts"] + e["dur"]) for e in doc["traceEvents"]
                      if e["ph"] == "X" and e["name"] == "step")

    def test_pid_and_rank(self):
        everything = self.steps(self.chrome())
        self.assertEqual(len(everything), 40)
        by_pid = self.steps(self.chrome("--pid", str(self.pids[1])))
        self.assertEqual(by_pid, [s for s in everything if s[0] == self.pids[1]])
        self.assertEqual(self.steps(self.chrome("--rank", "1")), by_pid)
        self.assertEqual(self.steps(self.chrome("--rank", "0,1")), everything)
        self.assertEqual(self.steps(self.chrome("--rank", "0", "--rank", "1")), everything)
        pids_written = {e["pid"] for e in self.chrome("--rank", "0")["traceEvents"]}
        self.assertEqual(pids_written, self.rank_pids[0])  # the rank's process and its forked child

    def test_window_by_seconds_and_by_nvtx_range(self):
        everything = self.steps(self.chrome())
        # The 5th "step" of rank 0: exactly the events that overlap it.
        rank0 = [s for s in everything if s[0] == self.pids[0]]
        fifth = rank0[4]
        doc = self.chrome("--rank", "0", "--window", "nvtx:step#5")
        self.assertEqual(self.steps(doc), [fifth])
        for e in doc["traceEvents"]:
            if e["ph"] == "X":
                self.assertLess(e["ts"], fifth[2])
                self.assertGreaterEqual(e["ts"] + e["dur"], fifth[1])
        # Seconds: the steps overlapping [START, END).
        by_start = sorted(everything, key=lambda s: s[1])
        # The window as given on the command line, to the ns (ts are µs with 3 decimals): a bound
        # rounded to the µs could fall between a step's end and the next one's start.
        start_txt, end_txt = "%.9f" % (by_start[10][1] / 1e6), "%.9f" % (by_start[20][1] / 1e6 + 1e-3)
        windowed = self.steps(self.chrome("--window", start_txt + ":" + end_txt))
        start_us, end_us = round(float(start_txt) * 1e9) / 1e3, round(float(end_txt) * 1e9) / 1e3
        expected = [s for s in everything if round(s[1] * 1e3) < round(end_us * 1e3) and round(s[2] * 1e3) > round(start_us * 1e3)]
        self.assertEqual(windowed, expected)
        self.assertLess(len(windowed), len(everything))


class KinetoCudaTest(TraceTest):
    """The stand-in-CUPTI CUDA run (tests/programs/cupti_fake_workload.cc, mode exit) exported:
    Kineto's categories and args, and HTA's breakdowns of it equal to trainprof's report."""

    def setUp(self):
        super().setUp()
        self.fake = os.path.join(PROGRAMS, "libfake_cupti.so")
        if not os.path.exists(self.fake) or not os.access(program("cupti_fake_workload"), os.X_OK):
            self.skipTest("the fake CUPTI was not built (no CUPTI headers)")
        env = dict(os.environ, TRAINPROF_CUPTI_PATH=self.fake, TRAINPROF_GPU_FLUSH_MS="50")
        env.pop("TRAINPROF_CUDA_QUIET", None)
        self.run_trainprof(["run", "-o", self.out, "--", program("cupti_fake_workload"), "exit"], env=env, timeout=60)

    def test_events_and_hta_breakdowns_equal_trainprofs(self):
        report = json.loads(self.run_trainprof(["report", "--format", "json", "--top", "100", self.out]).stdout)
        out = os.path.join(self.out, "kineto")
        self.run_trainprof(["export", "--format", "kineto", "-o", out, self.out])
        [f] = os.listdir(out)
        doc = json.loads(load(os.path.join(out, f)))
        cats = {}
        for e in doc["traceEvents"]:
            cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
        self.assertEqual(doc["deviceProperties"][0]["name"], "Fake GPU")
        self.assertNotIn("distributedInfo", doc)  # no rank: one file for the process
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        self.assertEqual(len(kernels), sum(k["instances"] for k in report["gpu_kernels"]))
        for k in kernels:
            self.assertEqual(sorted(k["args"]), sorted(["External id", "device", "context", "stream", "correlation",
                                                        "registers per thread", "shared memory", "grid", "block"]))
        self.assertIn("graphKernel(float*)", {k["name"] for k in kernels})  # demangled, as Kineto's
        self.assertEqual(cats.get("gpu_memcpy"), 2)
        self.assertEqual(cats.get("gpu_memset"), 1)
        self.assertEqual(cats.get("cuda_sync"), 1)
        self.assertEqual(cats.get("ac2g", 0) % 2, 0)
        self.assertGreater(cats.get("cuda_runtime", 0), 0)

        need_hta(self)
        hta = hta_breakdowns(self, out)
        self.assertEqual(hta["ranks"], [0])
        # Per kernel: HTA's totals and counts are trainprof's kernel table (names: HTA's are the
        # demangled ones, trainprof's table shows them shortened). Totals within 1%, or 1 µs per
        # kernel: HTA rounds the times of a nanosecond trace to whole µs, start up and end down
        # (hta/common/trace_parser.py, round_down_time_stamps), so a 1 µs kernel can become 0.
        theirs = {n: v for n, v in hta["kernels"]["0"].items() if not n.startswith(("Memcpy", "Memset"))}
        ours = report["gpu_kernels"]
        self.assertEqual(len(theirs), len(ours), (sorted(theirs), [k["name"] for k in ours]))
        # HTA puts cuda_sync events on the stream's track beside the kernels and, where two events of
        # a track overlap, cuts the earlier short at the later one's start. The stand-in CUPTI times
        # its sync from the host's clock, so on a loaded machine it can overlap a kernel of its
        # stream (trainprof keeps the kernel whole: a sync is the host waiting, not GPU work). Such
        # kernels: HTA's total at most trainprof's.
        ops = sorted((e["args"].get("stream"), e["ts"], e["ts"] + e["dur"], e["name"]) for e in doc["traceEvents"]
                     if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"))
        overlapping = {n for a, b in zip(ops, ops[1:]) if a[0] == b[0] and b[1] < a[2] for n in (a[3], b[3])}
        for k in ours:
            [name] = [n for n in theirs if n.startswith(k["name"]) or n == k["mangled"][:len(n)]]
            if name in overlapping:
                self.assertLessEqual(theirs[name]["sum_us"], k["total_ns"] / 1000.0 + k["instances"])
            else:
                self.assertAlmostEqual(theirs[name]["sum_us"], k["total_ns"] / 1000.0,
                                       delta=max(k["total_ns"] / 1000.0 * 0.01, k["instances"]),
                                       msg="%s; GPU ops of the export by stream: %s" % (name, ops))
            self.assertEqual(theirs[name]["count"], k["instances"], name)
        # Temporal: HTA's span (first to last GPU event) is trainprof's active span; its compute time
        # the union of the kernels (trainprof's kernel_ns), within 0.5 point of the span.
        [device] = report["devices"]
        t = hta["temporal"]["0"]
        span_us = (device["active_end_ns"] - device["active_begin_ns"]) / 1000.0
        self.assertAlmostEqual(t["kernel_us"], span_us, delta=2.0)
        self.assertAlmostEqual(t["compute_pctg"], 100.0 * device["kernel_ns"] / 1000.0 / span_us, delta=0.5)
        self.assertAlmostEqual(t["idle_pctg"] + t["compute_pctg"] + t["non_compute_pctg"], 100.0, delta=0.05)
        print("stand-in CUDA run: HTA compute %.4f%% idle %.4f%% non-compute %.4f%% of %.1f us; trainprof kernel "
              "%.4f%%, busy %.4f%% of the active span" % (t["compute_pctg"], t["idle_pctg"], t["non_compute_pctg"],
                                                        t["kernel_us"], 100.0 * device["kernel_ns"] / 1000.0 / span_us,
                                                        device["active_busy_percent"]))


class KinetoRoundTripTest(TraceTest):
    """export(T) of each imported shared GPU trace T: `report` gives the same tables, and HTA's
    breakdowns of export(T) equal its breakdowns of T within 0.5 point."""

    def setUp(self):
        super().setUp()
        if not os.path.isdir(SHARED):
            self.skipTest("no shared Kineto traces at " + SHARED)

    def exported(self, name):
        path = os.path.join(SHARED, name + ".json.gz")
        out = os.path.join(self.out, name, "export")
        self.run_trainprof(["export", "--format", "kineto", "-o", out, path])
        return path, out

    @staticmethod
    def comparable(report):
        """The JSON report without what names the input (paths, sizes) and the raw time axis of the
        image (Kineto's ts origin: times since the epoch in T, since baseTimeNanoseconds in export(T)),
        threads by tid (the reader lists them in the order of their first event, which the export
        does not keep)."""
        report = json.loads(json.dumps(report))
        for f in report["files"]:
            f.pop("path"), f.pop("bytes"), f.pop("bytes_read")
        for p in report["processes"]:
            p.pop("files"), p.pop("start_ns"), p.pop("end_ns")
            p["threads"] = sorted(p["threads"], key=lambda t: (t["tid"], t.get("name") or ""))
        for d in report["devices"] + [d for p in report["processes"] for d in p.get("devices", [])]:
            d["active_ns"] = d.pop("active_end_ns") - d.pop("active_begin_ns")
        return report

    def test_report_of_the_export_gives_the_same_tables(self):
        for name in SHARED_TRACES:
            with self.subTest(trace=name):
                path, out = self.exported(name)
                [f] = os.listdir(out)
                doc = json.loads(load(os.path.join(out, f)))
                self.assertEqual(doc["distributedInfo"]["rank"], 0)
                text = [self.run_trainprof(["report", p]).stdout for p in (path, out)]
                self.assertEqual(text[0], text[1])
                reports = [self.comparable(self.report(p)) for p in (path, out)]
                self.assertEqual(reports[0], reports[1])

    def test_hta_breakdowns_of_the_export_equal_those_of_the_trace(self):
        need_hta(self)
        for name in SHARED_TRACES:
            with self.subTest(trace=name):
                path, out = self.exported(name)
                original = os.path.join(self.out, name, "original")
                os.makedirs(original)
                os.symlink(path, os.path.join(original, name + ".json.gz"))
                theirs, ours = hta_breakdowns(self, original), hta_breakdowns(self, out)
                self.assertEqual(ours["ranks"], theirs["ranks"])
                for key in ("idle_pctg", "compute_pctg", "non_compute_pctg"):
                    self.assertAlmostEqual(ours["temporal"]["0"][key], theirs["temporal"]["0"][key], delta=0.5)
                self.assertEqual(sorted(ours["kernel_types"]), sorted(theirs["kernel_types"]))
                for kind, percent in theirs["kernel_types"].items():
                    self.assertAlmostEqual(ours["kernel_types"][kind], percent, delta=0.5)
                self.assertEqual({n: v["count"] for n, v in ours["kernels"]["0"].items()},
                                 {n: v["count"] for n, v in theirs["kernels"]["0"].items()})
                print("%s: HTA idle/compute/non-compute %% of T %s, of export(T) %s" % (
                    name, [theirs["temporal"]["0"][k] for k in ("idle_pctg", "compute_pctg", "non_compute_pctg")],
                    [ours["temporal"]["0"][k] for k in ("idle_pctg", "compute_pctg", "non_compute_pctg")]))


if __name__ == "__main__":
    unittest.main()
