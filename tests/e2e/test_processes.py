"""Process handling: exit statuses, fork under load, the program's output left alone."""

import os
import unittest

from common import TraceTest, by_pid, program, ranges, exit_of


class ProcessTest(TraceTest):
    def test_fork_in_a_loop_while_threads_record_does_not_deadlock(self):
        proc = self.profile([program("fork_stress"), "200", "4"], timeout=240)
        self.assertIn("done forks=200 failed=0", proc.stdout)
        rep = self.report()
        procs = by_pid(rep)
        self.assertEqual(len(procs), 201)
        parent = [p for p in procs.values() if p["ppid"] not in procs][0]
        parent_ranges = ranges(parent["nvtx_ranges"])
        recorded = sum(parent_ranges[n]["calls"] for n in ("worker_0", "worker_1"))
        printed = int(proc.stdout.split("worker_ranges=")[1])
        self.assertEqual(recorded, printed)  # no parent record lost to a fork
        for p in procs.values():
            if p is parent:
                continue
            self.assertEqual(ranges(p["nvtx_ranges"])["child"]["calls"], 1)
            self.assertNotIn("worker_0", ranges(p["nvtx_ranges"]))
            self.assertEqual(exit_of(p), ("exit", 0))
        self.assertEqual(rep.get("warnings", []), [])

    def test_exit_status_and_output_pass_through_with_the_library_loaded(self):
        proc = self.profile(["sh", "-c", "echo out; echo err >&2; exit 7"], expect_status=7)
        self.assertEqual(proc.stdout, "out\n")
        self.assertTrue(proc.stderr.startswith("err\n"), proc.stderr)
        rep = self.report()
        self.assertEqual(exit_of(rep["processes"][0]), ("exit", 7))

    def test_death_by_signal_is_reported(self):
        self.profile(["sh", "-c", "kill -KILL $$"], expect_status=137)
        rep = self.report()
        self.assertEqual(exit_of(rep["processes"][0]), ("signal", 9))

    def test_unwritable_output_directory_leaves_the_program_running(self):
        if os.geteuid() == 0:
            # root writes anywhere: use a path under a regular file instead
            blocker = os.path.join(self.out, "file")
            open(blocker, "w").close()
            target = os.path.join(blocker, "sub")
        else:
            target = "/proc/trainprof-cannot-write"
        proc = self.run_trainprof(["run", "-o", target, "--", "sh", "-c", "echo still-runs; exit 4"], check=False)
        self.assertEqual(proc.stdout, "still-runs\n")
        self.assertEqual(proc.returncode, 4)


if __name__ == "__main__":
    unittest.main()
