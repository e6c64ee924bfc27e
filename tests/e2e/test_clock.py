"""The recording clock (docs/trace-format.md, "Time"): TSC-stamped records converted to
CLOCK_MONOTONIC ns agree with clock_gettime samples taken in the same run, and an ordered handoff
between threads is never reversed (tests/programs/clock_marks.cc). Checked through the independent
decoder (trace_decode.py) and the collector (`trainprof export`)."""

import json
import os
import unittest

from common import TraceTest, program
import trace_decode

TOLERANCE_NS = 1000  # the target: converted TSC times within 1 µs of clock_gettime


def tsc_expected():
    """Whether the library should pick the TSC here: invariant TSC and the tsc clocksource."""
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            if f.read().strip() != "tsc":
                return False
        with open("/proc/cpuinfo") as f:
            flags = next((l for l in f if l.startswith("flags")), "").split()
        return "constant_tsc" in flags and "nonstop_tsc" in flags  # Linux's names for CPUID's invariant TSC
    except OSError:
        return False


class ClockTest(TraceTest):
    MARKS = 1500
    HANDOFFS = 2000

    def record(self, clock=None):
        env = self.child_env()
        if clock is not None:
            env["TRAINPROF_CLOCK"] = clock
        args = ["run", "-o", self.out, "--", program("clock_marks"), str(self.MARKS), str(self.HANDOFFS)]
        proc = self.run_trainprof(args, env=env)
        self.assertIn("clock_marks done", proc.stdout)
        samples = [tuple(int(x) for x in line.split()[1:]) for line in proc.stdout.splitlines()
                   if line.startswith("mark ")]
        self.assertEqual(len(samples), self.MARKS)
        [path] = [os.path.join(self.out, f) for f in self.trace_files()]
        return trace_decode.read_trace(path), samples

    def check_marks(self, trace, samples):
        self.assertEqual(trace["errors"], [])
        strings = trace["strings"]
        times = {}
        for name, rec in trace["records"]:
            if name == "MARK" and strings.get(rec["name"], "").startswith("clock ") and rec["name"] != 0:
                text = strings[rec["name"]]
                if text != "clock start":
                    times[int(text.split()[1])] = rec["t"]
        self.assertEqual(len(times), self.MARKS)
        worst = 0
        for before, after in samples:
            t = times[before]
            # The mark was taken between the two clock_gettime reads.
            err = max(before - t, t - after, 0)
            worst = max(worst, err)
        self.assertLessEqual(worst, TOLERANCE_NS, "a converted mark lies %d ns outside its clock_gettime bracket" % worst)

    def check_handoffs(self, trace):
        strings = trace["strings"]
        start, end, thread = {}, {}, {}
        for name, rec in trace["records"]:
            if name == "RANGE_START" and strings.get(rec["name"], "").startswith("turn "):
                i = int(strings[rec["name"]].split()[1])
                start[i] = (rec["t"], rec["range_id"])
                thread[i] = rec["tid"]
            elif name == "RANGE_END":
                end[rec["range_id"]] = rec["t"]
        self.assertEqual(len(start), self.HANDOFFS)
        reversed_ = []
        for i in range(self.HANDOFFS - 1):
            self.assertNotEqual(thread[i], thread[i + 1])
            ended = end[start[i][1]]
            if ended > start[i + 1][0]:
                reversed_.append((i, ended - start[i + 1][0]))
        self.assertEqual(reversed_, [], "turn i ended after turn i + 1 started (by ns)")

    def test_tsc_times_match_clock_gettime_and_handoffs_keep_their_order(self):
        trace, samples = self.record()
        self.assertEqual(trace["header"]["clock"], "tsc" if tsc_expected() else "monotonic")
        # A TSC file is version 4, so older readers refuse it; a CLOCK_MONOTONIC file stays 3.
        self.assertEqual(trace["header"]["version"], 4 if tsc_expected() else 3)
        if trace["header"]["clock"] == "tsc":
            self.assertGreater(trace["header"]["tsc_khz"], 100000)  # a TSC of at least 100 MHz
            self.assertGreaterEqual(len(trace["header"]["clock_pairs"]), 2)  # start, and the end
        self.check_marks(trace, samples)
        self.check_handoffs(trace)

    def test_collector_converts_as_the_decoder_does(self):
        trace, samples = self.record()
        out = os.path.join(self.out, "trace.json")
        self.run_trainprof(["export", "--format", "chrome", "-o", out, self.out])
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        marks = {e["name"]: e["ts"] for e in events if e.get("ph") in ("i", "I", "R") and e["name"].startswith("clock ")}
        marks.pop("clock start", None)
        self.assertEqual(len(marks), self.MARKS)
        # Chrome's µs timestamps: the export's axis starts somewhere; compare differences of marks
        # against differences of the clock_gettime brackets (each within 1 µs plus rounding).
        first_before = samples[0][0]
        first_ts = marks["clock %d" % first_before]
        for before, after in samples:
            ts = marks["clock %d" % before]
            delta_ns = (ts - first_ts) * 1000.0
            self.assertGreaterEqual(delta_ns, before - samples[0][1] - TOLERANCE_NS - 2)
            self.assertLessEqual(delta_ns, after - first_before + TOLERANCE_NS + 2)

    def test_monotonic_clock_on_request(self):
        trace, samples = self.record(clock="monotonic")
        self.assertEqual(trace["header"]["clock"], "monotonic")
        self.assertEqual(trace["header"]["tsc_khz"], 0)
        self.check_marks(trace, samples)
        self.check_handoffs(trace)


if __name__ == "__main__":
    unittest.main()
