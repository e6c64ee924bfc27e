"""Memory of `trainprof report` bounded by what it reports, not by what was recorded.

- Range names: a program that formats the step into the name ("step %d") makes one distinct name
  per range. The report may cost at most 256 bytes per distinct name plus 64 MiB (peak RSS), in
  text, JSON and CSV alike, with and without --no-group-names (docs/report.md, "Memory"); so
  may the Chrome export of the same trace.
- A forged file naming a new undefined string id in every record costs at most 8 times its size
  (plus the baseline of the binary), and the undefined ids count as damage.
Peak RSS is the report's own (os.wait4 in a fresh helper), so the harness's memory does not count.
"""

import json
import os
import subprocess
import sys
import unittest

from common import TRAINPROF, TraceTest, program, skip_in_sanitizer_build

# Peak RSS is the tool's own only without a sanitizer: ASan's shadow memory and quarantine and
# TSan's shadow multiply it; the functional checks of grouping run in every build.
NOT_SANITIZED = "the sanitizer runtime's own memory would be measured, not trainprof's"

NAMES = 200_000
PER_NAME = 256
FIXED = 64 << 20


# Started by a fresh, small Python: a child's peak RSS counts the process it was forked from (Linux
# keeps the high-water mark across fork and exec), and this harness may hold a big parsed report.
_MEASURE = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(p.pid, 0)
sys.stderr.write("\\nPEAK_RSS_KB %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(args):
    """Runs trainprof with args; returns (returncode, stdout, stderr, peak RSS in bytes)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, TRAINPROF] + args, capture_output=True, text=True,
                          errors="replace")
    err, _, peak = proc.stderr.rpartition("\nPEAK_RSS_KB ")
    return proc.returncode, proc.stdout, err, int(peak) * 1024


class ManyNames(TraceTest):
    def setUp(self):
        super().setUp()
        self.profile([program("many_names"), str(NAMES)], follow=False)

    @skip_in_sanitizer_build("address", NOT_SANITIZED)
    @skip_in_sanitizer_build("thread", NOT_SANITIZED)
    def test_report_memory_per_distinct_name(self):
        bound = PER_NAME * NAMES + FIXED
        for extra in ([], ["--no-group-names"]):
            for fmt, output in (("text", "/dev/null"), ("json", os.path.join(self.out, "r.json")),
                                ("csv", os.path.join(self.out, "csv") + "/")):
                rc, _, err, peak = run_measured(["report", "--format", fmt, "-o", output] + extra + [self.out])
                self.assertEqual(rc, 0, err)
                self.assertLessEqual(peak, bound, "%s %s: peak RSS %d MiB for %d names (bound %d MiB)"
                                     % (fmt, extra, peak >> 20, NAMES, bound >> 20))

    @skip_in_sanitizer_build("address", NOT_SANITIZED)
    @skip_in_sanitizer_build("thread", NOT_SANITIZED)
    def test_export_memory_per_distinct_name(self):
        # export keeps every event (2 per name here) and streams them out: the same bound holds.
        rc, _, err, peak = run_measured(["export", "-o", os.path.join(self.out, "t.json"), self.out])
        self.assertEqual(rc, 0, err)
        bound = PER_NAME * NAMES + FIXED
        self.assertLessEqual(peak, bound, "export: peak RSS %d MiB for %d names (bound %d MiB)"
                             % (peak >> 20, NAMES, bound >> 20))

    def test_names_that_differ_in_numbers_are_grouped(self):
        path = os.path.join(self.out, "r.json")
        rc, _, err, _ = run_measured(["report", "--format", "json", "-o", path, self.out])
        self.assertEqual(rc, 0, err)
        with open(path) as f:
            report = json.load(f)
        rows = {r["name"]: r for r in report["nvtx_ranges"]}
        self.assertEqual(set(rows), {"step <N>", "inner"})
        self.assertEqual(rows["step <N>"]["names"], NAMES)
        self.assertEqual(rows["step <N>"]["calls"], NAMES)
        self.assertEqual(rows["inner"]["names"], 1)
        self.assertEqual(rows["inner"]["calls"], NAMES)
        # The per-process table groups the same way.
        self.assertEqual({r["name"] for r in report["processes"][0]["nvtx_ranges"]}, {"step <N>", "inner"})
        rc, text, err, _ = run_measured(["report", "--top", "5", self.out])
        self.assertEqual(rc, 0, err)
        self.assertIn("step <N> (%d names)" % NAMES, text)

    def test_no_group_names_shows_every_name(self):
        path = os.path.join(self.out, "r.json")
        rc, _, err, _ = run_measured(["report", "--format", "json", "--no-group-names", "-o", path, self.out])
        self.assertEqual(rc, 0, err)
        with open(path) as f:
            report = json.load(f)
        rows = report["nvtx_ranges"]
        self.assertEqual(len(rows), NAMES + 1)
        names = {r["name"] for r in rows}
        self.assertIn("step 0", names)
        self.assertIn("step %d" % (NAMES - 1), names)
        self.assertTrue(all(r["names"] == 1 for r in rows))


class ForgedFile(TraceTest):
    @skip_in_sanitizer_build("address", NOT_SANITIZED)
    @skip_in_sanitizer_build("thread", NOT_SANITIZED)
    def test_undefined_string_ids_cost_a_small_multiple_of_the_file(self):
        proc = subprocess.run([program("forge_undefined"), self.out, str(8 << 20)], capture_output=True, text=True,
                              check=True)
        path = proc.stdout.strip()
        size = os.path.getsize(path)
        # The binary's baseline: the report of a tiny trace.
        small = os.path.join(self.out, "small")
        os.mkdir(small)
        subprocess.run([program("forge_undefined"), small, "1000"], check=True, capture_output=True)
        rc, _, err, baseline = run_measured(["report", "-o", "/dev/null", small])
        self.assertEqual(rc, 0, err)
        json_path = os.path.join(self.out, "r.json")
        rc, _, err, peak = run_measured(["report", "--format", "json", "-o", json_path, path])
        self.assertEqual(rc, 0, err)
        self.assertLessEqual(peak, 8 * size + baseline,
                             "peak RSS %d MiB for a %d MiB forged file (baseline %d MiB)"
                             % (peak >> 20, size >> 20, baseline >> 20))
        with open(json_path) as f:
            report = json.load(f)
        errors = " ".join(report["files"][0]["errors"])
        self.assertIn("string ids used before any definition", errors)
        self.assertEqual(report["summary"]["damaged_files"], 1)
        names = {r["name"] for r in report["nvtx_ranges"]}
        self.assertIn("<undefined strings>", names)
        self.assertEqual(sum(r["calls"] for r in report["nvtx_ranges"]), (8 << 20) // 9)


if __name__ == "__main__":
    unittest.main()
