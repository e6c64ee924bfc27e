"""Process handling: exit statuses, fork under load, the program's output left alone."""

import os
import shutil
import subprocess
import tempfile
import unittest

from common import (SANITIZER, TRAINPROF, TraceTest, by_pid, exit_of, file_size_limit, program, ranges,
                    skip_in_sanitizer_build)

# LeakSanitizer stops with "LeakSanitizer has encountered a fatal error" (exit 1, a report file) at
# the exit of a process in a new pid namespace whose /proc is the parent's, and of a setuid one: it
# cannot find or suspend its threads there. The normal and TSan builds run these tests.
LSAN_CANNOT = "LeakSanitizer fails at exit in a pid namespace and in setuid processes"
from trace_decode import read_trace


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
            with self.fresh_subtest(mode=mode):
                self.check(mode, as_child=False)

    def test_each_way_to_end_as_a_child(self):
        for mode in self.CASES:
            with self.fresh_subtest(mode=mode):
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


def _can_unshare_pid():
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class IdentityTest(TraceTest):
    """Two processes with one pid are two processes; a child that left no trace is still shown."""

    @skip_in_sanitizer_build("address", LSAN_CANNOT)
    def test_ranks_in_separate_pid_namespaces_sharing_a_directory_stay_apart(self):
        if not _can_unshare_pid():
            self.skipTest("unshare --pid --fork is not permitted here")
        # Both ranks are pid 1 of their own namespace, on one host, writing into one directory.
        script = ('RANK=0 WORLD_SIZE=2 unshare --pid --fork "$1" rank 5 & '
                  'RANK=1 WORLD_SIZE=2 unshare --pid --fork "$1" rank 7 & wait')
        proc = self.profile(["sh", "-c", script, "sh", program("identity")])
        self.assertEqual(proc.stdout.count("pid 1\n"), 2, proc.stdout)
        ranks = {p["rank"]: p for p in self.report()["processes"] if p["pid"] == 1}
        self.assertEqual(sorted(ranks), [0, 1])  # was: one process pid 1, rank 1, 12 ranges
        self.assertEqual(ranges(ranks[0]["nvtx_ranges"])["rank_step"]["calls"], 5)
        self.assertEqual(ranges(ranks[1]["nvtx_ranges"])["rank_step"]["calls"], 7)
        for p in ranks.values():
            self.assertEqual(exit_of(p), ("exit", 0))
            self.assertEqual(p["recorded"], "yes")
        # Each rank hangs under the unshare that forked it into its namespace.
        procs = self.report()["processes"]
        for p in ranks.values():
            parent = [q for q in procs if q["pid"] == p["parent_pid"]]
            self.assertEqual(len(parent), 1, p)
            self.assertIn("unshare", parent[0]["command"])
        self.assertNotIn("(not recorded)", self.run_trainprof(["report", self.out]).stdout)

    @skip_in_sanitizer_build("address", LSAN_CANNOT)
    def test_a_pid_reused_within_one_run_is_two_processes(self):
        if not _can_unshare_pid():
            self.skipTest("unshare --pid --fork is not permitted here")
        proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--", "unshare", "--pid", "--fork",
                                   program("identity"), "reuse"], check=False)
        if proc.returncode == 77:
            self.skipTest("ns_last_pid did not give the pid again: " + proc.stdout)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        pid = int(proc.stdout.split("reused ")[1])
        same = [p for p in self.report()["processes"] if p["pid"] == pid]
        self.assertEqual(len(same), 2, same)  # was: one process with both children's ranges
        first, second = sorted(same, key=lambda p: p["start_ns"])
        self.assertEqual(set(ranges(first["nvtx_ranges"])), {"first_child"})
        self.assertEqual(ranges(first["nvtx_ranges"])["first_child"]["calls"], 2)
        self.assertEqual(set(ranges(second["nvtx_ranges"])), {"second_child"})
        self.assertEqual(ranges(second["nvtx_ranges"])["second_child"]["calls"], 5)
        self.assertEqual(exit_of(first), ("exit", 3))
        self.assertEqual(exit_of(second), ("exit", 4))

    def test_exit_statuses_are_the_low_eight_bits_as_waitpid_reports_them(self):
        proc = self.profile([program("identity"), "exits"])
        self.assertIn("statuses 0 255 232", proc.stdout)
        children = [p for p in self.report()["processes"] if p["parent_pid"] is not None]
        self.assertEqual(sorted(exit_of(p)[1] for p in children), [0, 232, 255])  # was 256, -1, 1000
        self.assertTrue(all(exit_of(p)[0] == "exit" for p in children))

    @skip_in_sanitizer_build("address", LSAN_CANNOT)
    def test_children_that_leave_no_trace_are_in_the_process_table(self):
        static = program("static_exit")
        if not os.path.exists(static):
            self.skipTest("tp_static_exit was not built (no static C library)")
        # A setuid copy of a dynamic program, owned by another user: the loader ignores LD_PRELOAD.
        setuid_dir = tempfile.mkdtemp(prefix="trainprof-setuid-")
        self.addCleanup(shutil.rmtree, setuid_dir, True)
        setuid = os.path.join(setuid_dir, "tp_identity_setuid")
        shutil.copy(program("identity"), setuid)
        if os.geteuid() != 0:
            self.skipTest("making a setuid program needs root")
        os.chown(setuid, 65534, 65534)
        os.chmod(setuid, 0o4755)
        os.chmod(setuid_dir, 0o755)
        proc = self.profile([program("identity"), "children", static, setuid])
        words = [line for line in proc.stdout.splitlines() if line.startswith("forked_static ")][0].split()
        pids = {words[i]: (int(words[i + 1]), int(words[i + 2])) for i in range(0, len(words), 3)}
        self.assertEqual(pids["forked_static"][1], 7)
        self.assertEqual(pids["spawned_static"][1], 7)
        self.assertEqual(pids["missing"][1], 127)
        rep = self.report()
        procs = by_pid(rep)
        root = [p for p in rep["processes"] if p["parent_pid"] is None][0]
        # posix_spawn of a static program: no file at all, shown from the parent's records.
        spawned = procs[pids["spawned_static"][0]]
        self.assertEqual(spawned["recorded"], "no")
        self.assertEqual(spawned["files"], [])
        self.assertEqual(spawned["parent_pid"], root["pid"])
        self.assertEqual(exit_of(spawned), ("exit", 7))
        # fork + exec of a static or a setuid program: recorded up to the exec.
        for name, code in (("forked_static", 7), ("setuid", 0)):
            p = procs[pids[name][0]]
            self.assertEqual(p["recorded"], "until_exec", name)
            self.assertEqual(p["unrecorded_exec"], static if name == "forked_static" else setuid, name)
            self.assertEqual(exit_of(p), ("exit", code), name)  # was ("exec", null)
        # An exec that failed: the child recorded, and exited 127.
        self.assertEqual(procs[pids["missing"][0]]["recorded"], "yes")
        self.assertEqual(exit_of(procs[pids["missing"][0]]), ("exit", 127))
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("(not recorded)", text)
        self.assertIn("(not recorded after exec of tp_static_exit) ", text)
        self.assertIn("no trace of the process", text)
        csv_dir = os.path.join(self.out, "csv")
        os.mkdir(csv_dir)
        self.run_trainprof(["report", "--format", "csv", "-o", csv_dir, self.out])
        with open(os.path.join(csv_dir, "processes.csv")) as f:
            header, *rows = [line.rstrip("\n").split(",") for line in f]
        col = header.index("recorded")
        self.assertEqual(sorted(r[col] for r in rows).count("no"), 1)

    @skip_in_sanitizer_build("address", LSAN_CANNOT)
    def test_children_python_starts_by_vfork_that_leave_no_trace_are_in_the_process_table(self):
        # Python's subprocess starts children with vfork (no FORK record): a setgid copy of a
        # dynamic program (the loader drops LD_PRELOAD) and a static program left no trace, and
        # were nowhere in the report ("1 process"); the parent's CHILD_EXIT records name them.
        if os.geteuid() != 0:
            self.skipTest("making a setgid program needs root")
        secure_dir = tempfile.mkdtemp(prefix="trainprof-setgid-")
        self.addCleanup(shutil.rmtree, secure_dir, True)
        setgid = os.path.join(secure_dir, "tp_identity_setgid")
        shutil.copy(program("identity"), setgid)
        os.chown(setgid, 0, 65534)
        os.chmod(setgid, 0o2755)
        os.chmod(secure_dir, 0o755)
        static = program("static_exit")
        script = ("import subprocess, sys\n"
                  "codes = [subprocess.run([p], stdout=subprocess.DEVNULL).returncode for p in sys.argv[1:]]\n"
                  "print('codes', *codes)\n")
        children = [setgid] + ([static] if os.path.exists(static) else [])
        proc = self.profile(["/usr/bin/python3", "-c", script] + children)
        codes = [int(c) for c in proc.stdout.split("codes")[1].split()]
        rep = self.report()
        root = [p for p in rep["processes"] if p["parent_pid"] is None]
        self.assertEqual(len(root), 1, rep["processes"])
        if SANITIZER == "thread":
            # TSan's runtime makes every vfork a fork: the children are forked copies of Python that
            # record until their exec, and the table names what they exec'd and how they ended.
            forked = sorted((p for p in rep["processes"] if p["parent_pid"] == root[0]["pid"]),
                            key=lambda p: p["end_ns"])
            self.assertEqual([p["recorded"] for p in forked], ["until_exec"] * len(children), rep["processes"])
            self.assertEqual([p["unrecorded_exec"] for p in forked], children)
            self.assertEqual([exit_of(p) for p in forked], [("exit", c) for c in codes])
            self.assertIn("(not recorded after exec of", self.run_trainprof(["report", self.out]).stdout)
            return
        lost = [p for p in rep["processes"] if p["recorded"] == "no"]
        self.assertEqual(len(lost), len(children), rep["processes"])  # was 0
        for p, code in zip(sorted(lost, key=lambda p: p["end_ns"]), codes):
            self.assertEqual(p["parent_pid"], root[0]["pid"])
            self.assertEqual(exit_of(p), ("exit", code))
            self.assertEqual(p["exit"]["source"], "parent_wait")
            self.assertFalse(p["start_known"])
            self.assertIsNone(p["wall_ns"])
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn("(not recorded)", text)
        self.assertIn("a setuid, setgid or\n  file-capability program (the loader drops LD_PRELOAD)", text)
        self.assertIn('Start and Wall "-": a child started by vfork or clone', text)
        # The same program without --follow-children: its children were not meant to record.
        shutil.rmtree(self.out)
        os.mkdir(self.out)
        self.profile(["/usr/bin/python3", "-c", script] + children, follow=False)
        self.assertEqual([p["recorded"] for p in self.report()["processes"]], ["yes"])

    def test_no_not_recorded_rows_without_follow_children(self):
        self.profile([program("identity"), "exits"], follow=False)
        rep = self.report()
        self.assertEqual(len(rep["processes"]), 1)
        self.assertEqual(rep["processes"][0]["recorded"], "yes")


class NvtxDomainsTest(TraceTest):
    def test_three_hundred_domains_keep_their_names_and_nesting(self):
        self.profile([program("identity"), "domains", "300"])
        rep = self.report(extra=["--top", "0"])
        rows = {(r["domain"], r["name"]): r for r in rep["nvtx_ranges"]}
        for i in range(300):
            outer = [r for (d, n), r in rows.items() if d == "dom%d" % i and n.endswith("outer%d" % i)]
            inner = [r for (d, n), r in rows.items() if d == "dom%d" % i and n.endswith("inner")]
            self.assertEqual(len(outer), 1, "dom%d" % i)  # was: domains 255..299 merged into one
            self.assertEqual(outer[0]["calls"], 1)
            self.assertEqual(len(inner), 1, "dom%d" % i)
            self.assertEqual(inner[0]["calls"], 2)
        p = rep["processes"][0]
        self.assertEqual(p["unbalanced_ranges"], 0)
        self.assertEqual(p["nvtx_misuse"]["total"], 0)


class OutputPathTest(TraceTest):
    def test_an_output_path_too_long_for_trace_files_is_said_once(self):
        # Components of at most 200 bytes, 4085 bytes in all: the directory can be made (under
        # PATH_MAX, 4096), DIR/pid-N.trace in it cannot.
        target = self.out
        while len(target) < 4085:
            target += "/" + "d" * min(200, 4085 - len(target) - 1)
        self.assertEqual(len(target), 4085)
        proc = self.run_trainprof(["run", "-o", target, "--follow-children", "--", "sh", "-c", "echo ran; sh -c true"],
                                  check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "ran\n")
        self.assertEqual(proc.stderr.count("trainprof: "), 1, proc.stderr)
        self.assertIn("too long for trace files", proc.stderr)
        self.assertIn("PATH_MAX", proc.stderr)
        self.assertNotIn("statically linked", proc.stderr)
        for root, _, files in os.walk(self.out):
            self.assertEqual(files, [], root)  # was: a file "pid-N.tr" with its suffix cut

    def test_a_file_size_limit_under_one_header_is_named_not_static_linking(self):
        proc = self.run_trainprof(["run", "-o", self.out, "--", "sh", "-c", "exit 0"], check=False,
                                  preexec_fn=file_size_limit(8192))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("no trace file was written", proc.stderr)
        self.assertIn("RLIMIT_FSIZE", proc.stderr)
        self.assertNotIn("statically linked", proc.stderr)


    def test_a_full_file_system_is_named_not_static_linking(self):
        mnt = self.tmpfs_mount_point()
        # Fill the tmpfs, then run: no trace file fits at all.
        script = """mount -t tmpfs -o size=1m none "$1"
dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
"$2" run -o "$1/out" -- sh -c 'exit 0' >"$3/run.out" 2>"$3/run.err"
echo $? >"$3/run.rc"
"""
        subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", mnt, os.path.abspath(TRAINPROF), self.out],
                       timeout=120, check=True)
        with open(os.path.join(self.out, "run.err")) as f:
            err = f.read()
        with open(os.path.join(self.out, "run.rc")) as f:
            self.assertEqual(f.read(), "0\n", err)
        self.assertIn("no trace file was written", err)
        self.assertIn("its file system is full", err)
        self.assertNotIn("statically linked", err)


class ConcurrentRunsTest(TraceTest):
    def test_two_runs_into_one_directory_count_their_own_files(self):
        cmd = lambda n: [TRAINPROF, "run", "-o", self.out, "--follow-children", "--", program("identity"), "sleepy",
                         str(n), "600"]
        env = self.child_env()
        a = subprocess.Popen(cmd(2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        b = subprocess.Popen(cmd(3), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        out_a, err_a = a.communicate(timeout=120)
        out_b, err_b = b.communicate(timeout=120)
        self.assertEqual((a.returncode, b.returncode), (0, 0), err_a + err_b)
        # Each summary counts its own run only: the parent and its children.
        self.assertIn("3 trace files, 3 processes", err_a)  # was: 7 files, or as many as had appeared
        self.assertIn("4 trace files, 4 processes", err_b)
        self.assertEqual(len(self.trace_files()), 7)
        rep = self.report()
        runs = [w for w in rep["warnings"] if w.startswith(self.out + " holds the trace files of 2 runs")]
        self.assertEqual(len(runs), 1, rep["warnings"])
        self.assertIn("3 files", runs[0])
        self.assertIn("4 files", runs[0])
        # The headers, read independently of the collector: two run ids, 3 and 4 files each; every
        # file has its process's identity.
        headers = [read_trace(os.path.join(self.out, f))["header"] for f in self.trace_files()]
        per_run = {}
        for h in headers:
            per_run[h["run_id"]] = per_run.get(h["run_id"], 0) + 1
            self.assertNotEqual(h["pid_namespace"], 0)
            self.assertNotEqual(h["start_ticks"], 0)
            self.assertEqual(len(h["boot_id"]), 32)
        self.assertEqual(sorted(per_run.values()), [3, 4])
        self.assertTrue(all(len(r) == 32 for r in per_run))
