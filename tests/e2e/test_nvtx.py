"""The planted NVTX workload (tests/programs/nvtx_workload.cc) under `trainprof run`."""

import gzip
import json
import os
import shutil
import stat
import tempfile
import threading
import unittest

from common import TraceTest, by_pid, program, ranges, exit_of


class ExportTest(TraceTest):
    def test_chrome_export_has_every_planted_range(self):
        self.profile([program("nvtx_workload"), program("nvtx_child")], follow=True)
        out = os.path.join(self.out, "trace.json.gz")
        proc = self.run_trainprof(["export", "--format", "chrome", "-o", out, self.out])
        self.assertIn("written to " + out, proc.stderr)
        with gzip.open(out, "rt") as f:
            doc = json.load(f)
        events = doc["traceEvents"]
        complete = [e for e in events if e["ph"] == "X"]
        by_name = {}
        for e in complete:
            by_name.setdefault(e["name"], []).append(e)
        self.assertEqual(len(by_name["step"]), 20)
        self.assertEqual(len(by_name["inner"]), 20)
        self.assertEqual(len(by_name["io"]), 5)
        self.assertEqual({e["cat"] for e in by_name["io"]}, {"trainprof_test"})
        self.assertEqual(len([e for e in events if e["ph"] == "b" and e["name"] == "async_copy"]), 4)
        self.assertEqual(len([e for e in events if e["ph"] == "e"]), 4)
        # Three processes, each named; each inner range lies inside a step of the same thread.
        self.assertEqual(len({e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}), 3)
        for inner in by_name["inner"]:
            self.assertTrue(any(s["tid"] == inner["tid"] and s["ts"] <= inner["ts"] and
                                inner["ts"] + inner["dur"] <= s["ts"] + s["dur"] for s in by_name["step"]))
        # stdout export equals the file export
        plain = self.run_trainprof(["export", "-o", "-", self.out]).stdout
        self.assertEqual(json.loads(plain)["traceEvents"], events)

    def test_output_into_a_fifo_or_through_a_symlink_keeps_them(self):
        # -o never replaces what is there with a regular file: a FIFO is written in place (a reader
        # gets the output), a symlink is written through; `report -o -` is stdout, as for export.
        self.profile([program("nvtx_workload")])
        report = self.run_trainprof(["report", "--format", "json", "-o", "-", self.out]).stdout
        self.assertIn("nvtx_ranges", json.loads(report))
        scratch = tempfile.mkdtemp(prefix="trainprof-e2e-outputs-")
        self.addCleanup(shutil.rmtree, scratch, True)
        target = os.path.join(scratch, "target.json")
        with open(target, "w") as f:
            f.write("old")
        link = os.path.join(scratch, "link.json")
        os.symlink("target.json", link)
        for command in (["report", "--format", "json"], ["export"]):
            self.run_trainprof(command + ["-o", link, self.out])
            self.assertTrue(os.path.islink(link))
            with open(target) as f:
                self.assertIn("{", f.read(1))
            fifo = os.path.join(scratch, "fifo")
            os.mkfifo(fifo)
            got = []
            def read_fifo():
                with open(fifo, "rb") as f:
                    got.append(f.read())
            reader = threading.Thread(target=read_fifo)
            reader.start()
            self.run_trainprof(command + ["-o", fifo, self.out])
            reader.join(30)
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
            self.assertIn(b"traceEvents" if command == ["export"] else b"nvtx_ranges", got[0])
            os.remove(fifo)
        # CSV into a FIFO: the tables as stdout would get them, in place; no files named after it.
        fifo = os.path.join(scratch, "csv-fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        self.run_trainprof(["report", "--format", "csv", "-o", fifo, self.out])
        reader.join(30)
        self.assertIn(b"# nvtx_ranges.csv", got[0])
        self.assertEqual(sorted(os.listdir(scratch)), ["csv-fifo", "link.json", "target.json"])


    def test_csv_output_is_a_directory_unless_it_is_a_prefix(self):
        # `-o results` is a directory (made), as users expect; `-o run1-` a file name prefix;
        # `-o results.csv` cannot hold several tables: a usage error that names both forms.
        self.profile([program("nvtx_workload")])
        scratch = tempfile.mkdtemp(prefix="trainprof-e2e-csv-")
        self.addCleanup(shutil.rmtree, scratch, True)
        results = os.path.join(scratch, "results")
        proc = self.run_trainprof(["report", "--format", "csv", "-o", results, self.out])
        self.assertIn("nvtx_ranges.csv", os.listdir(results))
        self.assertIn(os.path.join(results, "files.csv"), proc.stderr)
        self.run_trainprof(["report", "--format", "csv", "-o", os.path.join(scratch, "run1-"), self.out])
        self.assertIn("run1-nvtx_ranges.csv", os.listdir(scratch))
        before = sorted(os.listdir(scratch))
        proc = self.run_trainprof(["report", "--format", "csv", "-o", os.path.join(scratch, "out.csv"), self.out],
                                  check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("-o %s: --format csv writes one file per table; give a directory (%s/) or a file name "
                      "prefix (%s-)" % ((os.path.join(scratch, "out.csv"),) + (os.path.join(scratch, "out"),) * 2),
                      proc.stderr)
        self.assertEqual(sorted(os.listdir(scratch)), before)

class NvtxWorkloadTest(TraceTest):
    def run_workload(self, follow):
        proc = self.profile([program("nvtx_workload"), program("nvtx_child")], follow=follow)
        return proc, self.report()

    def test_follow_children_gives_three_linked_processes_with_planted_counts(self):
        proc, rep = self.run_workload(follow=True)
        # NVTX return values as the NVTX docs define them: 0-based level started / ended, <0 on error.
        self.assertIn("levels push=0,1 pop=1,0 empty_pop=-1", proc.stdout)
        self.assertIn("forked child exit=0 exec child exit=3", proc.stdout)

        procs = by_pid(rep)
        self.assertEqual(len(procs), 3, procs)
        roots = [p for p in procs.values() if p["ppid"] not in procs]
        self.assertEqual(len(roots), 1)
        main = roots[0]
        children = [p for p in procs.values() if p["ppid"] == main["pid"]]
        self.assertEqual(len(children), 2)
        self.assertEqual(exit_of(main), ("exit", 0))

        main_ranges = ranges(main["nvtx_ranges"])
        self.assertEqual(main_ranges["step"]["calls"], 20)
        self.assertEqual(main_ranges["inner"]["calls"], 20)
        self.assertEqual(main_ranges["trainprof_test:io"]["calls"], 5)
        self.assertEqual(main_ranges["trainprof_test:io"]["domain"], "trainprof_test")
        self.assertEqual(main_ranges["async_copy"]["calls"], 4)
        self.assertEqual(main_ranges["async_copy"]["style"], "start/end")
        # 19 steps of 4+1 ms sleeps and one of 5 ms: mean ~5 ms; wide margins for busy machines.
        self.assertGreater(main_ranges["step"]["mean_ns"], 4.5e6)
        self.assertLess(main_ranges["step"]["mean_ns"], 60e6)
        self.assertGreater(main_ranges["inner"]["mean_ns"], 0.9e6)
        self.assertGreaterEqual(main_ranges["step"]["min_ns"], main_ranges["inner"]["min_ns"])
        self.assertGreater(main_ranges["async_copy"]["mean_ns"], 2.5e6)
        # One pop on an empty stack and one range never closed.
        self.assertEqual(main["unbalanced_ranges"], 2)

        marks = {m["name"]: m for m in rep["nvtx_marks"]}
        self.assertEqual(marks["checkpoint"]["count"], 3)

        forked = [p for p in children if "child_work" in ranges(p["nvtx_ranges"])]
        execd = [p for p in children if "exec_work" in ranges(p["nvtx_ranges"])]
        self.assertEqual(len(forked), 1)
        self.assertEqual(len(execd), 1)
        self.assertEqual(ranges(forked[0]["nvtx_ranges"])["child_work"]["calls"], 10)
        self.assertEqual(exit_of(forked[0]), ("exit", 0))
        self.assertNotIn("step", ranges(forked[0]["nvtx_ranges"]))  # parent's records not copied
        self.assertEqual(ranges(execd[0]["nvtx_ranges"])["exec_work"]["calls"], 7)
        self.assertEqual(exit_of(execd[0]), ("exit", 3))
        self.assertTrue(execd[0]["command"].endswith("tp_nvtx_child"), execd[0]["command"])
        for p in procs.values():
            self.assertFalse(p["truncated"])
            self.assertEqual(p["dropped_records"], 0)

        merged = ranges(rep["nvtx_ranges"])
        self.assertEqual(merged["step"]["calls"], 20)
        self.assertEqual(merged["child_work"]["calls"], 10)

    def test_without_follow_children_only_the_launched_process_records(self):
        proc, rep = self.run_workload(follow=False)
        self.assertIn("forked child exit=0 exec child exit=3", proc.stdout)
        self.assertEqual(len(self.trace_files()), 1, self.trace_files())
        self.assertEqual(len(rep["processes"]), 1)
        self.assertEqual(ranges(rep["processes"][0]["nvtx_ranges"])["step"]["calls"], 20)

    def test_text_report_lists_processes_and_ranges(self):
        self.profile([program("nvtx_workload"), program("nvtx_child")])
        text = self.run_trainprof(["report", self.out]).stdout
        for needle in ("step", "inner", "child_work", "exec_work", "trainprof_test:io", "tp_nvtx_workload"):
            self.assertIn(needle, text)


class ReusedNameBufferTest(TraceTest):
    """A name formatted into one buffer each step (snprintf(name, ..., "step %d", i)), the way C++
    loops name their ranges: the buffer's address is the same each time, its bytes are not. The
    library's by-address name cache (inject/string_table.h) must tell every name apart, at each
    length around its 16-byte limit."""

    def test_every_name_at_one_address_is_its_own(self):
        n = 150
        for pattern in ("s%d", "%014d", "%015d", "%016d", "step %d of the epoch"):
            with self.subTest(pattern=pattern):
                shutil.rmtree(self.out, ignore_errors=True)
                os.makedirs(self.out)
                self.profile([program("many_names"), str(n), pattern], follow=False)
                rows = ranges(self.report(extra=["--no-group-names", "--top", "0"])["nvtx_ranges"])
                names = [pattern % i for i in range(n)]
                self.assertEqual(sorted(r for r in rows if r != "inner"), sorted(names))
                self.assertEqual({rows[name]["calls"] for name in names}, {1})
                self.assertEqual(rows["inner"]["calls"], n)


if __name__ == "__main__":
    unittest.main()
