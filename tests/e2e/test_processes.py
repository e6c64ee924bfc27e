"""Process handling: exit statuses, fork under load, the program's output left alone."""

import os
import subprocess
import unittest

from common import TRAINPROF, TraceTest, by_pid, program, ranges, exit_of


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

    def test_killed_command_ends_when_it_died_not_when_its_descendants_did(self):
        # The shell is killed at once; its background child runs 1.5 s more (--wait=all waits).
        self.profile(["sh", "-c", "sleep 1.5 & kill -TERM $$"], expect_status=143)
        procs = by_pid(self.report())
        root = [p for p in procs.values() if p["ppid"] not in procs][0]
        self.assertEqual(exit_of(root), ("signal", 15))
        self.assertLess(root["wall_ns"], 500e6)  # was 1.5 s: the time trainprof stopped waiting
        sleeper = [p for p in procs.values() if p is not root][0]
        self.assertGreater(sleeper["wall_ns"], 1.4e9)

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


class EndingsTest(TraceTest):
    """However a process ends, every completed record is in its trace and the report says how."""

    CASES = {  # mode: (trainprof's exit status, expected exit in the report)
        "exit": (4, ("exit", 4)),
        "_exit": (5, ("exit", 5)),
        "abort": (134, ("signal", 6)),
        "segv": (139, ("signal", 11)),
        "sigkill": (137, ("signal", 9)),
        "sigterm": (143, ("signal", 15)),
        "throw": (134, ("signal", 6)),
        "thread_exit": (6, ("exit", 6)),
    }

    def check(self, mode, as_child):
        status, exit_ = self.CASES[mode]
        n = 5000
        if as_child:  # reaped by a shell, not by trainprof: the shell's waitpid() tells the status
            self.profile(["sh", "-c", "%s %s %d; true" % (program("ends"), mode, n)])
        else:
            self.profile([program("ends"), mode, str(n)], expect_status=status)
        rep = self.report(extra=["--strict"])  # no file may be damaged
        p = [p for p in rep["processes"] if p["command"].startswith(program("ends"))][0]
        self.assertEqual(ranges(p["nvtx_ranges"])["done"]["calls"], n)
        self.assertEqual(ranges(p["nvtx_ranges"])["open_at_end"]["unbalanced"], 1)
        self.assertEqual(exit_of(p), exit_)

    def test_each_way_to_end_as_the_launched_process(self):
        for mode in self.CASES:
            with self.subTest(mode=mode):
                self.tearDown()
                self.setUp()
                self.check(mode, as_child=False)

    def test_each_way_to_end_as_a_child(self):
        for mode in self.CASES:
            with self.subTest(mode=mode):
                self.tearDown()
                self.setUp()
                self.check(mode, as_child=True)


class HostileProgramTest(TraceTest):
    """Programs that are hard on a preloaded profiler (tests/programs/hostile.cc)."""

    def test_a_program_that_closes_every_fd_keeps_its_own_files(self):
        mine = os.path.join(self.out, "mine.txt")
        proc = self.profile([program("hostile"), "closefd", mine, "100000"], follow=False)
        self.assertIn("closefd fd=3 pairs=100000", proc.stdout)  # its fd numbering is unchanged
        with open(mine, "rb") as f:
            self.assertEqual(f.read(), b"hello\n")  # not a byte of trace in it
        rep = self.report(extra=["--strict"])
        self.assertEqual(ranges(rep["processes"][0]["nvtx_ranges"])["after_close"]["calls"], 100000)

    def test_nvtx_from_a_signal_handler_neither_hangs_nor_damages_the_trace(self):
        proc = self.profile([program("hostile"), "signals", "1500"], follow=False, timeout=60)
        pairs = int(proc.stdout.split("pairs=")[1].split()[0])
        handler_runs = int(proc.stdout.split("handler_runs=")[1].split()[0])
        rep = self.report(extra=["--strict"])
        p = rep["processes"][0]
        main_calls = sum(r["calls"] for r in p["nvtx_ranges"] if r["name"].startswith("main_"))
        self.assertEqual(main_calls, pairs)  # the interrupted thread's own records are all there
        # A handler that interrupted the interning of a new name records its range unnamed.
        in_handler = sum(ranges(p["nvtx_ranges"]).get(n, {"calls": 0})["calls"] for n in ("in_handler", "<unnamed>"))
        # A handler that interrupted the library mid-record drops its 3 records, counted as dropped.
        self.assertEqual(in_handler + p["dropped_records"] // 3, handler_runs)
        self.assertEqual(p["unbalanced_ranges"], 0)

    def test_library_loaded_late_with_dlopen_records(self):
        lib = os.path.join(os.path.dirname(TRAINPROF), "..", "inject", "libtrainprof_inject.so")
        proc = subprocess.run([program("late_dlopen"), os.path.abspath(lib), self.out, "1000"],
                              capture_output=True, text=True, timeout=60, env=self.child_env())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("1000 ranges", proc.stdout)
        rep = self.report(extra=["--strict"])
        self.assertEqual(ranges(rep["processes"][0]["nvtx_ranges"])["late"]["calls"], 1000)

    def test_forked_children_that_exit_normally_leave_nothing_behind(self):
        # Each child abandons its parent's library state (the parent's threads' buffers) and ends
        # with exit(): in the address sanitizer build LeakSanitizer checks it there.
        proc = self.profile([program("hostile"), "forkexit", "3"])
        self.assertIn("forkexit depth=3 failed=0", proc.stdout)
        rep = self.report(extra=["--strict"])
        children = [p for p in rep["processes"] if "child" in ranges(p["nvtx_ranges"])]
        self.assertEqual(len(children), 3)
        for p in children:
            self.assertEqual(ranges(p["nvtx_ranges"])["child"]["calls"], 1)
            self.assertNotIn("worker", ranges(p["nvtx_ranges"]))
            self.assertEqual(exit_of(p), ("exit", 0))

    def test_short_lived_threads_do_not_fill_the_disk(self):
        self.profile([program("hostile"), "threads", "1000"], follow=False)
        rep = self.report()
        self.assertEqual(ranges(rep["processes"][0]["nvtx_ranges"])["short_thread"]["calls"], 1000)
        on_disk = sum(os.stat(os.path.join(self.out, f)).st_blocks * 512 for f in self.trace_files())
        # Each exited thread keeps the pages it wrote, not its whole 64 KiB chunk.
        self.assertLess(on_disk, 1000 * 16 * 1024)


if __name__ == "__main__":
    unittest.main()
