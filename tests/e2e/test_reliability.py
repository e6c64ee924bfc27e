"""Reliability: what the traces hold and what the report says when a process is killed, stopped
the way torchrun and Slurm stop ranks, starts children in unusual ways, runs out of disk, finds
things planted at its trace's name, or uses NVTX wrongly. Programs: tests/programs/{stress,spawn,
plant,misuse,ends}.cc."""

import itertools
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest

from common import (PROGRAMS, PYTHON, SANITIZER, TRAINPROF, TraceTest, by_pid, exit_of, file_size_limit, program,
                    ranges, skip_in_sanitizer_build, _limit_file_size)
from trace_decode import of, read_trace


def read_counts(path):
    """The counts tp_stress publishes (tests/programs/stress.cc, struct Counts)."""
    with open(path, "rb") as f:
        data = f.read()
    threads, sigterm_seen, term_marked = struct.unpack_from("<QQQ", data, 0)
    slots = [struct.unpack_from("<QQ", data, 64 + 64 * i) for i in range(threads)]
    return {"sigterm_seen": sigterm_seen, "term_marked": term_marked, "slots": slots}


def alive(pid):
    """Whether pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def nvtx_rows(entries):
    """{(display name, style): row} of an nvtx_ranges list."""
    return {(r["name"], r["style"]): r for r in entries}


def trainprof_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("trainprof:")]


class StressTest(TraceTest):
    """tp_stress under `trainprof run`, stopped from outside while its threads record."""

    def start_stress(self, threads, extra=()):
        counts = os.path.join(self.out, "counts.bin")
        # Own session: a "Slurm" stop signals the whole group (trainprof and the program), not us.
        proc = subprocess.Popen([TRAINPROF, "run", "-o", self.out, "--", program("stress"), str(threads), counts]
                                + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=_limit_file_size, start_new_session=True)
        self.addCleanup(self.stop_group, proc)
        line = b""
        deadline = time.monotonic() + 60
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(proc.stdout.fileno(), 1) if ready else b""
            if not chunk:
                self.fail("tp_stress did not get ready: %r" % line)
            line += chunk
        self.assertTrue(line.startswith(b"pid=") and line.endswith(b" ready\n"), line)
        return proc, int(line[4:].split()[0]), counts

    @staticmethod
    def stop_group(proc):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate(timeout=60)

    def finish(self, proc):
        out, err = proc.communicate(timeout=60)
        return proc.returncode, err.decode()

    def check_threads(self, process, counts, before=None):
        """Per thread: the trace holds every NVTX call that had returned (the count the thread
        published), and at most one more (a call whose record was committed, killed before it
        returned). Returns (written, read) summed over the threads."""
        threads = {t["tid"]: t for t in process["threads"]}
        rows = ranges(process["nvtx_ranges"])
        written = read = 0
        for i, (tid, calls) in enumerate(counts["slots"]):
            row = rows["range_%d" % i]
            in_trace = 2 * row["calls"] + row["unbalanced"]  # completed pairs, and an open push
            self.assertLessEqual(row["unbalanced"], 1)
            # Its records: STRING "w<i>" (its name), THREAD_NAME, STRING "range_<i>", then the calls.
            self.assertEqual(threads[tid]["events"], in_trace + 3, "thread %d" % i)
            self.assertGreaterEqual(in_trace, calls, "thread %d lost records" % i)
            self.assertLessEqual(in_trace, calls + 1, "thread %d" % i)
            if before is not None:
                self.assertGreaterEqual(in_trace, before["slots"][i][1], "thread %d lost records from before SIGTERM" % i)
            written += calls
            read += in_trace
        return written, read

    def test_sigkill_at_a_random_moment_loses_at_most_the_call_in_progress(self):
        threads = 32
        delay = random.uniform(0.2, 1.2)
        proc, pid, counts_path = self.start_stress(threads)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        status, err = self.finish(proc)
        self.assertEqual(status, 137, err)
        counts = read_counts(counts_path)
        rep = self.report(extra=["--strict"])  # exit 0: no file damaged, nothing truncated
        self.assertEqual(len(rep["processes"]), 1)
        p = rep["processes"][0]
        for f in rep["files"]:
            self.assertEqual((f["errors"], f["truncated"], f["bytes_read"]), ([], False, f["bytes"]))
        self.assertEqual(exit_of(p), ("signal", 9))
        self.assertEqual(p["dropped_records"], 0)
        self.assertEqual(len(p["threads"]), threads)
        written, read = self.check_threads(p, counts)
        self.assertEqual(p["events"], read + 3 * threads)
        sys.stderr.write("\n  SIGKILL after %.2f s: %d threads, %d NVTX calls written, %d read\n"
                         % (delay, threads, written, read))

    def stop(self, handler, group, grace=0.4):
        """Stops tp_stress (4 threads) with SIGTERM, then SIGKILL if it still runs after `grace` s.
        group: both go to the process group of trainprof and the program (Slurm's scancel, a
        batch system's kill); else to the program alone (torchrun stopping its worker), trainprof
        stays and reaps it. Returns (trainprof's status, its stderr, counts before SIGTERM, counts
        at the end, the report)."""
        proc, pid, counts_path = self.start_stress(4, ["term_handler"] if handler else [])
        time.sleep(0.3)
        before = read_counts(counts_path)
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (alive(pid) or (group and proc.poll() is None)):
            time.sleep(0.01)
        if alive(pid) or (group and proc.poll() is None):
            if group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        status, err = self.finish(proc)
        after = read_counts(counts_path)
        rep = self.report(extra=["--strict"])
        self.assertEqual(len(rep["processes"]), 1)
        p = rep["processes"][0]
        self.check_threads(p, after, before)
        self.assertEqual(p["dropped_records"], 0)
        marks = {m["name"]: m["count"] for m in rep["nvtx_marks"]}
        self.assertEqual(marks.get("after_sigterm", 0), after["term_marked"])
        if handler:
            self.assertGreaterEqual(after["sigterm_seen"], 1)
            self.assertEqual(after["term_marked"], 1)  # it kept running after the SIGTERM
        return status, err, rep

    def text_report(self):
        return self.run_trainprof(["report", self.out]).stdout

    def test_sigterm_without_handler_to_the_program(self):
        status, err, rep = self.stop(handler=False, group=False)
        self.assertEqual(status, 143, err)
        self.assertEqual(exit_of(rep["processes"][0]), ("signal", 15))
        self.assertIn("signal 15 (SIGTERM)", self.text_report())

    def test_sigterm_with_a_handler_that_keeps_running_then_sigkill_to_the_program(self):
        status, err, rep = self.stop(handler=True, group=False)
        self.assertEqual(status, 137, err)
        self.assertEqual(exit_of(rep["processes"][0]), ("signal", 9))
        self.assertIn("signal 9 (SIGKILL)", self.text_report())

    def test_sigterm_without_handler_to_the_process_group(self):
        # trainprof gets the SIGTERM too: it forwards it, reaps the program and records its end.
        status, err, rep = self.stop(handler=False, group=True)
        self.assertEqual(status, 143, err)
        self.assertEqual(exit_of(rep["processes"][0]), ("signal", 15))

    def test_sigterm_with_a_handler_then_sigkill_to_the_process_group(self):
        # The SIGKILL ends trainprof too: nobody is left to see how the program ended, and the
        # report says so.
        status, err, rep = self.stop(handler=True, group=True)
        self.assertEqual(status, -signal.SIGKILL, err)
        p = rep["processes"][0]
        self.assertEqual(p["exit"], {"kind": "unknown", "code": None, "source": None})
        self.assertIn("pid %d: no exit record (killed?)" % p["pid"], rep["warnings"])
        text = self.text_report()
        self.assertIn("pid %d: no exit record (killed?)" % p["pid"], text)
        self.assertIn('Exit "unknown": no exit record (killed?)', text)


class SpawnTest(TraceTest):
    """Children started with posix_spawn[p], vfork+execve and the exec family, with an inherited,
    a NULL and an explicit environment without trainprof's variables (tests/programs/spawn.cc)."""

    HOWS = ("posix_spawn", "posix_spawnp", "vfork_execve", "fork_execve", "fork_execle", "fork_execvpe",
            "fork_execveat")
    ENVS = ("inherit", "null", "explicit")

    def spawn_env(self):
        env = dict(os.environ)
        env["PATH"] = os.path.abspath(PROGRAMS) + ":" + env.get("PATH", "/usr/bin:/bin")
        return env

    def child_for(self, how):
        # The PATH-searching variants find tp_nvtx_child by its name.
        return "tp_nvtx_child" if how in ("posix_spawnp", "fork_execvpe") else program("nvtx_child")

    def run_spawn(self, how, env, child, follow):
        args = ["run", "-o", self.out] + (["--follow-children"] if follow else []) + [
            "--", program("spawn"), how, env] + child
        return self.run_trainprof(args, check=False, timeout=60, env=self.spawn_env())

    def spawn_the_child(self, how, env, follow):
        """Runs spawn.cc with the NVTX child for `how`: both must run as without trainprof."""
        proc = self.run_spawn(how, env, [self.child_for(how)], follow=follow)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "%s %s: exit=3\nenviron unchanged\n" % (how, env))

    def test_children_are_traced_and_linked_to_their_parent(self):
        for how, env in itertools.product(self.HOWS, self.ENVS):
            with self.fresh_subtest(how=how, env=env):
                self.spawn_the_child(how, env, follow=True)
                rep = self.report(extra=["--strict"])
                procs = by_pid(rep)
                self.assertEqual(len(procs), 2, [p["command"] for p in procs.values()])
                parent = [p for p in procs.values() if p["parent_pid"] is None][0]
                child = [p for p in procs.values() if p["parent_pid"] == parent["pid"]][0]
                self.assertTrue(parent["command"].startswith(program("spawn")))
                self.assertTrue(child["command"].endswith("tp_nvtx_child"), child["command"])
                self.assertEqual(exit_of(child), ("exit", 3))
                self.assertEqual(ranges(child["nvtx_ranges"])["exec_work"]["calls"], 7)
                # fork + exec: the forked image and the exec'd one, merged into one process. (The
                # TSan runtime turns vfork into fork, so there vfork + exec is fork + exec too.)
                forked = how.startswith("fork_") or (how == "vfork_execve" and SANITIZER == "thread")
                self.assertEqual(len(child["files"]), 2 if forked else 1)
                # Reaped once (after two waitid(WNOWAIT) peeks): one CHILD_EXIT record.
                [parent_file] = [f for f in parent["files"]]
                exits = [r for r in of(read_trace(parent_file), "CHILD_EXIT") if r["pid"] == child["pid"]]
                self.assertEqual(len(exits), 1, exits)

    def test_without_follow_children_no_child_records(self):
        for how, env in itertools.product(self.HOWS, self.ENVS):
            with self.fresh_subtest(how=how, env=env):
                self.spawn_the_child(how, env, follow=False)
                self.assertEqual(len(self.trace_files()), 1, self.trace_files())

    def test_a_huge_environment_from_a_thread_with_a_small_stack(self):
        # tests/programs/big_env.cc: 60,000 variables (about 1.4 MB with the pointers), none of
        # trainprof's, given to posix_spawn / execve from a thread with a 256 KiB stack. The wrapper
        # must not put the rewritten environment on that stack (it crashed), and must still put
        # our variables back so that the child is followed.
        for how in ("posix_spawn", "fork_execve", "vfork_execve"):
            with self.fresh_subtest(how=how):
                proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--", program("big_env"), how,
                                           "60000", program("nvtx_child")], check=False, timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertEqual(proc.stdout, "%s 60000: exit=3\n" % how)
                self.assertEqual([l for l in proc.stderr.splitlines() if "environment" in l], [], proc.stderr)
                rep = self.report(extra=["--strict"])
                procs = by_pid(rep)
                self.assertEqual(len(procs), 2, [p["command"] for p in procs.values()])
                child = [p for p in procs.values() if p["parent_pid"] is not None][0]
                self.assertTrue(child["command"].endswith("tp_nvtx_child"), child["command"])
                self.assertEqual(exit_of(child), ("exit", 3))
                self.assertEqual(ranges(child["nvtx_ranges"])["exec_work"]["calls"], 7)

    def test_a_thread_or_signal_handler_with_a_small_stack_execs_as_without_trainprof(self):
        # 1,000 variables from a 16 KiB stack (a thread's, or a sigaltstack a handler runs on): fine
        # unprofiled; the rewrite put up to 16 KiB on that stack and crashed it (SIGSEGV).
        for how in ("posix_spawn", "fork_execve", "vfork_execve", "signal_fork_execve"):
            with self.fresh_subtest(how=how):
                args = [program("big_env"), how, "1000", program("nvtx_child"), "stack=16384"]
                plain = subprocess.run(args, capture_output=True, text=True, timeout=60)
                self.assertEqual((plain.returncode, plain.stdout), (0, "%s 1000: exit=3\n" % how), plain.stderr)
                proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--"] + args, check=False)
                self.assertEqual((proc.returncode, proc.stdout), (0, "%s 1000: exit=3\n" % how), proc.stderr)
                self.assertEqual(len(by_pid(self.report())), 2)

    def test_vfork_children_with_a_huge_environment_leave_no_memory_behind(self):
        # A vfork child shares its parent's memory and its exec does not return: a rewrite region
        # mapped per call would stay in the parent each time (about 600 kB here); the vforking
        # thread's region is reused instead.
        proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--", program("big_env"),
                                   "vfork_execve_20", "60000", program("nvtx_child")], check=False, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "vfork_execve_20 60000: exit=3\naddress space grew by 0 kB\n")
        self.assertEqual(len(by_pid(self.report())), 21)

    # RLIMIT_AS a little above the program's current use: the sanitizer runtimes map shadow memory and
    # allocate beside the program as it goes, so there they fail first, not our rewrite.
    @skip_in_sanitizer_build("address", "the sanitizer runtime needs address space the tight RLIMIT_AS leaves none of")
    @skip_in_sanitizer_build("thread", "the sanitizer runtime needs address space the tight RLIMIT_AS leaves none of")
    def test_no_memory_for_the_environment_rewrite_makes_the_call_unchanged(self):
        # big_env ... tight: RLIMIT_AS leaves no room for the rewrite's copy of 60,000 pointers. The
        # program's own call still happens, with its environment as given (so the child is not
        # followed: our variables are not in it), and one trainprof: line says so.
        for how in ("posix_spawn", "vfork_execve"):
            with self.fresh_subtest(how=how):
                proc = self.run_trainprof(["run", "-o", self.out, "--follow-children", "--", program("big_env"), how,
                                           "60000", program("nvtx_child"), "tight"], check=False, timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertEqual(proc.stdout, "%s 60000: exit=3\n" % how)
                said = [l for l in proc.stderr.splitlines() if "environment" in l]
                self.assertEqual(len(said), 1, proc.stderr)
                self.assertRegex(said[0], r"^trainprof: no memory to rewrite a child's environment \(60001 variables, "
                                          r"\d+ bytes\): the child gets it unchanged, without trainprof's variables "
                                          r"re-added \(it may run unprofiled\)$")
                # Only the program recorded; the child is still in the process table, marked as not
                # recorded: a posix_spawn child from the parent's fork record, a vfork child (no fork
                # record) from the parent's record of reaping it, with its exit status.
                procs = self.report()["processes"]
                self.assertEqual([p["recorded"] for p in procs], ["yes", "no"], procs)
                self.assertEqual(procs[1]["exit"]["code"], 3, procs[1])

    # The children here are other people's programs (dash, the g++ driver). Followed in the ASan
    # build, they get the runtime trainprof preloads for its sanitized library, and LeakSanitizer
    # reports the g++ driver's own leaks. The normal and TSan builds run this test.
    @skip_in_sanitizer_build("address", "LeakSanitizer reports leaks of the uninstrumented g++ driver")
    def test_children_that_record_nothing_run_as_without_trainprof(self):
        commands = (["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], ["/usr/bin/c++", "--version"])
        for cmd, how, env in itertools.product(commands, ("posix_spawn", "vfork_execve", "fork_execle"), self.ENVS):
            with self.fresh_subtest(cmd=cmd[0], how=how, env=env):
                plain = subprocess.run([program("spawn"), how, env] + cmd, capture_output=True, text=True,
                                       timeout=60, env=self.spawn_env())
                self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
                for follow in (True, False):
                    traced = self.run_spawn(how, env, cmd, follow=follow)
                    self.assertEqual(traced.stdout, plain.stdout)
                    self.assertEqual(traced.returncode, plain.returncode)
                    ours = [l for l in traced.stderr.splitlines(True) if not l.startswith("trainprof:")]
                    self.assertEqual("".join(ours), plain.stderr)
                    # The child records too (its own trace) only with --follow-children.
                    files = len(self.trace_files())
                    self.assertTrue(files >= 2 if follow else files == 1, (follow, self.trace_files()))
                    shutil.rmtree(self.out)


class FullDiskTest(TraceTest):
    """No room for the trace: the program runs on, trainprof says it once, the trace stays
    readable up to what was recorded."""

    N = 200000  # tp_ends: 400000 push/pop records, about 1.6 MB
    # Records tp_ends tries to write: THREAD_NAME and the STRINGs of its name, "done" and
    # "open_at_end", 2 * N, the open push and PROCESS_END.
    RECORDS = 2 * N + 6

    def check_report(self, rep, stopped_files):
        p = [p for p in rep["processes"] if p["command"].startswith(program("ends"))]
        self.assertTrue(p)
        for q in p:
            self.assertEqual(exit_of(q), ("exit", 4))
            self.assertFalse(q["truncated"])
            self.assertGreater(q["dropped_records"], 0)
            self.assertGreater(ranges(q["nvtx_ranges"])["done"]["calls"], 1000)
            # Every record is either in the trace or counted as dropped (a child of sh also has
            # the records of its forked image, before the exec).
            if len(q["files"]) == 1:
                self.assertEqual(q["events"] + q["dropped_records"], self.RECORDS)
            else:
                self.assertGreater(q["events"] + q["dropped_records"], self.RECORDS)
            self.assertIn("pid %d: recording stopped early (no space or I/O error): %s holds what was "
                          "recorded until then" % (q["pid"], q["files"][-1]), rep["warnings"])
        for f in rep["files"]:  # no damage: what is there is whole
            self.assertEqual((f["errors"], f["truncated"]), ([], False), f)
        stopped = len([w for w in rep["warnings"] if "recording stopped early" in w])
        if stopped_files is not None:
            self.assertEqual(stopped, stopped_files)

    def check_said_once(self, stderr, reason):
        lines = trainprof_lines(stderr)
        failures = [l for l in lines if "next: trainprof report" not in l]
        self.assertEqual(len(failures), 1, stderr)
        self.assertRegex(failures[0], "^trainprof: recording stopped: cannot extend the trace file .*pid-.*trace: %s; "
                         "the program runs on" % reason)

    def test_file_size_limit(self):
        proc = self.run_trainprof(["run", "-o", self.out, "--", program("ends"), "exit", str(self.N)],
                                  check=False, preexec_fn=file_size_limit(100 * 1024))
        self.assertEqual((proc.returncode, proc.stdout), (4, "recorded %d\n" % self.N), proc.stderr)
        self.check_said_once(proc.stderr, "File too large")
        report = self.run_trainprof(["report", "--format", "json", self.out])  # exit 0
        rep = json.loads(report.stdout)
        self.check_report(rep, 1)
        for f in self.trace_files():
            self.assertLessEqual(os.path.getsize(os.path.join(self.out, f)), 100 * 1024)
        text = self.run_trainprof(["report", self.out]).stdout
        q = rep["processes"][0]
        self.assertIn("\n  pid %d: %d records dropped (not in the trace)\n" % (q["pid"], q["dropped_records"]), text)
        self.assertIn("\n  pid %d: recording stopped early (no space or I/O error): %s holds what was recorded "
                      "until then\n" % (q["pid"], q["files"][0]), text)
        self.assertRegex(text, r"\n  %d +\d+ .* exit 4 +%d +0  no +%d\n" % (q["pid"], q["events"], q["dropped_records"]))

    def test_file_size_limit_hit_by_several_processes_at_once_is_said_once(self):
        ends = "%s exit %d" % (program("ends"), self.N)
        proc = self.run_trainprof(["run", "--follow-children", "-o", self.out, "--", "sh", "-c",
                                   "%s & %s & %s; wait" % (ends, ends, ends)],
                                  check=False, preexec_fn=file_size_limit(100 * 1024))
        self.assertEqual((proc.returncode, proc.stdout), (0, "recorded %d\n" % self.N * 3), proc.stderr)
        self.check_said_once(proc.stderr, "File too large")
        rep = json.loads(self.run_trainprof(["report", "--format", "json", self.out]).stdout)
        self.check_report(rep, 3)

    def test_full_tmpfs(self):
        mnt = self.tmpfs_mount_point()
        # The mount lives as long as the namespace: run and report inside it, results outside.
        script = """set -u
mount -t tmpfs -o size=1m none "$1"
"$2" run --follow-children -o "$1/out" -- sh -c "$3 exit $4; echo saved > '$1/own.txt' && cat '$1/own.txt'" \
  >"$5/run.out" 2>"$5/run.err"
echo $? >"$5/run.rc"
"$2" report --format json "$1/out" >"$5/report.json" 2>"$5/report.err"
echo $? >"$5/report.rc"
"""
        subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", mnt, os.path.abspath(TRAINPROF), program("ends"),
                        str(self.N), self.out], timeout=120, check=True, preexec_fn=_limit_file_size)
        def read(name):
            with open(os.path.join(self.out, name)) as f:
                return f.read()

        # The program's own file still fits: the library leaves room on the file system.
        self.assertEqual(read("run.out"), "recorded %d\nsaved\n" % self.N)
        self.assertEqual(read("run.rc"), "0\n")
        self.check_said_once(read("run.err"), "No space left on device")
        self.assertEqual(read("report.rc"), "0\n", read("report.err"))
        # The shell around it may find no room left for its own first chunk either.
        self.check_report(json.loads(read("report.json")), None)


class PlantedTraceNameTest(TraceTest):
    def test_symlinks_and_files_at_the_trace_name_are_left_alone(self):
        victim = os.path.join(self.out, "victim.txt")
        with open(victim, "w") as f:
            f.write("victim\n")
        out = os.path.join(self.out, "traces")
        proc = self.run_trainprof(["run", "-o", out, "--", program("plant"), out, victim])
        pid = int(proc.stdout.split("execd pid=")[1])
        self.assertEqual(proc.stdout, "planted pid=%d\nexecd pid=%d\n" % (pid, pid))
        prefix = os.path.join(out, "pid-%d" % pid)
        with open(victim) as f:
            self.assertEqual(f.read(), "victim\n")
        self.assertEqual(os.readlink(prefix + ".1.trace"), victim)
        with open(prefix + ".2.trace") as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.readlink(prefix + ".3.trace"), os.path.join(out, "created-through-symlink"))
        self.assertFalse(os.path.lexists(os.path.join(out, "created-through-symlink")))
        self.assertEqual(sorted(os.listdir(out)), sorted("pid-%d%s.trace" % (pid, s) for s in ("", ".1", ".2", ".3", ".4")))
        rep = self.report(out)  # the planted names are reported as not traces, and skipped
        p = by_pid(rep)[pid]
        self.assertEqual(p["files"], [prefix + ".trace", prefix + ".4.trace"])
        self.assertEqual(ranges(p["nvtx_ranges"])["after_exec"]["calls"], 10)
        self.assertEqual(exit_of(p), ("exit", 0))  # the launcher patched the real trace
        self.assertEqual(p["exit"]["source"], "header")


class NvtxMisuseTest(TraceTest):
    def test_misuse_is_counted_and_names_are_rendered_safely(self):
        plain = subprocess.run([program("misuse")], capture_output=True, timeout=60)
        self.assertEqual((plain.returncode, plain.stdout, plain.stderr), (5, b"misuse done\n", b""))
        traced = self.profile([program("misuse")], follow=False, expect_status=5)
        self.assertEqual(traced.stdout, "misuse done\n")
        self.assertEqual(len(trainprof_lines(traced.stderr)), len(traced.stderr.splitlines()), traced.stderr)

        def report(*args):
            proc = subprocess.run([TRAINPROF, "report"] + list(args) + [self.out], capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return proc.stdout.decode("utf-8")  # strict: a name with invalid UTF-8 must not leak through

        rep = json.loads(report("--format", "json", "--strict"))
        p = rep["processes"][0]
        self.assertEqual(exit_of(p), ("exit", 5))
        self.assertEqual(p["nvtx_misuse"], {"null_names": 6, "names_cut": 4, "bad_attributes": 0, "other": 0,
                                            "domains_over_limit": 0, "undefined_names": 0, "undefined_domains": 0,
                                            "total": 10})
        self.assertEqual(rep["summary"]["nvtx_misuse"]["total"], 10)
        self.assertIn("pid %d: NVTX misuse: 6 NULL names, 4 names cut at 4096 bytes" % p["pid"], rep["warnings"])
        rows = nvtx_rows(p["nvtx_ranges"])
        self.assertEqual(p["unbalanced_ranges"], 8)
        expect_unbalanced = {("<pop without push>", "push/pop"): 3, ("<end without start>", "start/end"): 2,
                             ("never_closed", "push/pop"): 2, ("never_ended", "start/end"): 1}
        for key, n in expect_unbalanced.items():
            self.assertEqual((rows[key]["calls"], rows[key]["unbalanced"]), (0, n), key)
        expect_calls = {("<unnamed>", "push/pop"): 3, ("<unnamed>", "start/end"): 1,
                        ("bad\ufffd\ufffd name", "push/pop"): 1, ("cut \ufffd", "push/pop"): 1,
                        ("ctrl\x01\x1b[31m\n", "push/pop"): 1, ("ws\ufffd", "push/pop"): 1,
                        ("a" * 4096, "push/pop"): 1, ("w" * 4096, "push/pop"): 1}
        for key, n in expect_calls.items():
            self.assertEqual((rows[key]["calls"], rows[key]["unbalanced"]), (n, 0), key[0][:20])
        self.assertEqual(len(rows), len(expect_unbalanced) + len(expect_calls))
        marks = {m["name"]: m["count"] for m in rep["nvtx_marks"]}
        self.assertEqual(marks, {"<unnamed>": 2, "wb\ufffd": 1, "a" * 4096: 1, "w" * 4096: 1})

        text = report()
        self.assertIn("ctrl\\x01\\x1b[31m\\n", text)  # control characters escaped
        self.assertIn("bad\ufffd\ufffd name", text)
        for c in "\x01\x1b":
            self.assertNotIn(c, text)
        self.assertIn("pid %d: NVTX misuse: 6 NULL names, 4 names cut at 4096 bytes" % p["pid"], text)
        self.assertIn("<pop without push>", text)
        csv = report("--format", "csv")
        self.assertIn("misuse", csv)

class NonRegularTraceNameTest(TraceTest):
    """A FIFO, a unix socket or a character device (/dev/zero's 1,5: read, it never ends) named
    *.trace, planted in the output directory before the run or made by the command during it,
    never hangs `trainprof run` (its summary line, --report), `report` or `export`: each is
    skipped with a warning that names it. Symbolic link loops given as PATH, or named *.trace in
    a directory, are warnings too, and the other paths are still reported."""

    KINDS = (("fifo", "a FIFO"), ("socket", "a socket"), ("chardev", "a character device"))

    def make(self, kind, path):
        """Makes a `kind` at path; False if this system does not allow it (mknod in a container)."""
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "socket":
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(path)
            self.addCleanup(sock.close)
        else:
            try:
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
            except PermissionError:
                return False
        return True

    def warning(self, path, what):
        return "trainprof: warning: %s: %s, not a trace file: skipped" % (path, what)

    def check_reports(self, path, what):
        """report and export of the directory, and of the path given explicitly with a trace file."""
        traces = [os.path.join(self.out, f) for f in self.trace_files() if f != os.path.basename(path)]
        for args in (["report", self.out], ["report", "--format", "json", path] + traces,
                     ["export", "-o", os.path.join(self.scratch, "out.json"), self.out]):
            proc = self.run_trainprof(args, timeout=30)
            self.assertIn(self.warning(path, what), proc.stderr.splitlines(), args)
        rep = json.loads(self.run_trainprof(["report", "--format", "json", path] + traces, timeout=30).stdout)
        self.assertEqual(ranges(rep["processes"][0]["nvtx_ranges"])["exec_work"]["calls"], 7)
        self.assertIn("%s: %s, not a trace file: skipped" % (path, what), rep["warnings"])

    def setUp(self):
        super().setUp()
        self.scratch = tempfile.mkdtemp(prefix="trainprof-e2e-scratch-")
        self.addCleanup(shutil.rmtree, self.scratch, True)

    def test_planted_before_the_run(self):
        for kind, what in self.KINDS:
            with self.fresh_subtest(kind=kind):
                path = os.path.join(self.out, "planted.trace")
                if not self.make(kind, path):
                    continue
                for report in ([], ["--report"]):
                    proc = self.profile([program("nvtx_child")], follow=False, expect_status=3, timeout=60,
                                        extra=report)
                    lines = proc.stderr.splitlines()
                    self.assertEqual(lines.count(self.warning(path, what)), 1, proc.stderr)
                    self.assertTrue(any("1 trace file" in l for l in lines) or report, proc.stderr)
                    for f in self.trace_files():
                        if f != "planted.trace":
                            os.remove(os.path.join(self.out, f))
                self.profile([program("nvtx_child")], follow=False, expect_status=3, timeout=60)
                self.check_reports(path, what)

    def test_made_by_the_command_during_the_run(self):
        for kind, what in self.KINDS:
            with self.fresh_subtest(kind=kind):
                path = os.path.join(self.out, "made.trace")
                if kind == "chardev" and not self.make(kind, os.path.join(self.scratch, "probe")):
                    continue
                # The command makes it (a socket stays bound while it runs: made by a child that
                # outlives nothing, it is still a socket file), then execs the NVTX program.
                code = ("import os, socket, stat, sys\n"
                        "p = sys.argv[1]\n"
                        "k = sys.argv[2]\n"
                        "if k == 'fifo': os.mkfifo(p)\n"
                        "elif k == 'socket': socket.socket(socket.AF_UNIX).bind(p)\n"
                        "else: os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5))\n"
                        "os.execv(sys.argv[3], [sys.argv[3]])\n")
                proc = self.profile([PYTHON, "-c", code, path, kind, program("nvtx_child")], follow=False,
                                    expect_status=3, timeout=60, extra=["--report"])
                self.assertEqual(proc.stderr.splitlines().count(self.warning(path, what)), 1, proc.stderr)
                self.assertIn("exec_work", proc.stdout)
                self.check_reports(path, what)

    def test_symbolic_link_loops(self):
        self.profile([program("nvtx_child")], follow=False, expect_status=3, timeout=60)
        [trace] = self.trace_files()
        trace = os.path.join(self.out, trace)
        loop = os.path.join(self.scratch, "loop")
        os.symlink(loop, loop)
        inside = os.path.join(self.out, "loop.trace")
        os.symlink(inside, inside)
        for args in (["report", loop, trace], ["report", self.out], ["report", loop, self.out],
                     ["export", "-o", os.path.join(self.scratch, "out.json"), loop, trace]):
            proc = self.run_trainprof(args, timeout=30)
            lines = proc.stderr.splitlines()
            for l in (loop, inside):
                if l in args or (l == inside and self.out in args):
                    self.assertIn("trainprof: warning: %s: a symbolic link loop (Too many levels of symbolic links):"
                                  " skipped" % l, lines, args)
            if args[0] == "report":
                self.assertIn("exec_work", proc.stdout)


class DamageTest(TraceTest):
    def test_a_truncated_trace_is_read_up_to_its_last_complete_record(self):
        self.profile([program("ends"), "exit", "5000"], follow=False, expect_status=4)
        name = self.trace_files()[0]
        path = os.path.join(self.out, name)
        os.truncate(path, 20000)  # inside chunk 0, which starts at 16384
        proc = self.run_trainprof(["report", "--format", "json", self.out])  # exit 0, warning on stderr
        self.assertIn("trainprof: warning: %s: chunk 0 truncated at byte 20000" % path, proc.stderr)
        rep = json.loads(proc.stdout)
        f = rep["files"][0]
        self.assertTrue(f["truncated"])
        self.assertEqual(f["bytes"], 20000)
        self.assertGreater(f["bytes_read"], 19000)
        self.assertTrue(f["errors"][0].startswith("chunk 0 truncated at byte 20000"), f["errors"])
        p = rep["processes"][0]
        self.assertTrue(p["truncated"])
        self.assertEqual(exit_of(p), ("exit", 4))
        done = ranges(p["nvtx_ranges"])["done"]["calls"]
        self.assertGreater(done, 100)
        self.assertLess(done, 5000)
        strict = self.run_trainprof(["report", "--strict", self.out], check=False)
        self.assertEqual(strict.returncode, 2)
        self.assertRegex(strict.stdout, r"\n  %d +\d+ .* exit 4 +\d+ +\d+  yes +0\n" % p["pid"])
        self.assertIn("\n  %s: chunk 0 truncated at byte 20000 (its records end at byte " % path, strict.stdout)

class SignalFirstCallTest(TraceTest):
    """tests/programs/signal_first_call.cc: a thread's first NVTX call is made by a signal handler
    that interrupted malloc (the thread loops on malloc/free past the tcache); 100 new threads in a
    row, each signalled until its handler ran 3 times and then while it exits. A library that
    allocates or takes a lock there (its thread state, TLS, a pthread key) deadlocks."""

    THREADS = 100

    @skip_in_sanitizer_build("thread", "tp_signal_first_call dies of SIGSEGV under TSan (signals delivered at "
                                       "TSan's own points; not yet diagnosed); the normal and ASan builds run it")
    def test_first_nvtx_call_of_a_thread_in_a_handler_that_interrupted_malloc(self):
        proc = self.run_or_fail_if_hung(["run", "-o", self.out, "--", program("signal_first_call"), str(self.THREADS), "3"],
                                        "a handler's first NVTX call of a thread deadlocked")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        m = re.search(r"handler ranges: (\d+)", proc.stdout)
        self.assertIsNotNone(m, proc.stdout)
        handled = int(m.group(1))
        self.assertGreaterEqual(handled, 3 * self.THREADS)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)  # the summary line only
        p = self.report()["processes"][0]
        rows = ranges(p["nvtx_ranges"])
        self.assertEqual(rows["handler"]["calls"], handled)  # every handler's range recorded
        self.assertEqual(rows["main"]["calls"], 1)
        trace = read_trace(os.path.join(self.out, self.trace_files()[0]))
        self.assertEqual(trace["header"]["records_dropped"], 0)
        name = [i for i, s in trace["strings"].items() if s == "handler"]
        pushes = [r for r in of(trace, "RANGE_PUSH") if r["name"] in name]
        self.assertEqual(len(pushes), handled)
        self.assertEqual(len({r["tid"] for r in pushes}), self.THREADS)  # each worker's first calls


def only_root(test):
    """Planting another user's file, or a setuid program, needs root (as the CI and dev machines run)."""
    return unittest.skipIf(os.geteuid() != 0, "needs root to plant files owned by another user")(test)


NOBODY = 65534   # owns what "another local user" planted
STRANGER = 12345  # a second user with no name, who runs the setuid programs


class SharedDirectoryTest(TraceTest):
    """Output in directories other users can write (/tmp, a shared scratch folder): nothing another
    user planted makes trainprof write somewhere else (docs/cli.md, "Files trainprof writes")."""

    def setUp(self):
        TraceTest.setUp(self)  # also SharedDirectoryAttackTest.setUp
        self.traces = os.path.join(self.out, "traces")
        proc = self.run_trainprof(["run", "-o", self.traces, "--", program("ends"), "exit", "100"], check=False)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.victim = os.path.join(self.out, "victim.txt")
        with open(self.victim, "w") as f:
            f.write("victim\n")
        self.shared = os.path.join(self.out, "shared")  # like /tmp: sticky, world-writable
        os.mkdir(self.shared)
        os.chmod(self.shared, 0o1777)

    def victim_intact(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), "victim\n")

    def plant(self, path, target):
        """A symlink at `path` to `target`, owned by another user."""
        os.symlink(target, path)
        os.lchown(path, NOBODY, NOBODY)

    def test_a_symlink_at_the_old_predictable_temporary_name_is_not_written_through(self):
        # The old code staged at <target>.tmp.<pid>, opened without O_EXCL. The shell plants the
        # link at that name for its own pid, which trainprof keeps when exec'd.
        plant_and_exec = 'ln -s "$1" "$2.tmp.$$" && exec "$3" "$4" --format "$5" -o "$2" "$6"'
        for sub, fmt, name in (("report", "json", "report.json"), ("report", "text", "report.txt"),
                               ("export", "chrome", "trace.json")):
            target = os.path.join(self.shared, name)
            args = ["sh", "-c", plant_and_exec, "sh", self.victim, target, TRAINPROF, sub, fmt, self.traces]
            proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.victim_intact()
            self.assertFalse(os.path.islink(target), name)
            with open(target) as f:
                self.assertIn("done", f.read())  # the range name: a real report or export
        # The CSV tables, one staged file per table.
        prefix = os.path.join(self.shared, "csv-")
        proc = subprocess.run(["sh", "-c", 'ln -s "$1" "$2nvtx_ranges.csv.tmp.$$" && exec "$3" report --format csv '
                               '-o "$2" "$4"', "sh", self.victim, prefix, TRAINPROF, self.traces],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.victim_intact()
        self.assertFalse(os.path.islink(prefix + "nvtx_ranges.csv"))
        with open(prefix + "nvtx_ranges.csv") as f:
            self.assertIn("done", f.read())
        leftovers = [n for n in os.listdir(self.shared) if ".tmp-" in n or n.startswith(".trainprof-")]
        self.assertEqual(leftovers, [])

    @only_root
    def test_another_users_symlink_at_the_target_in_a_sticky_directory_is_refused(self):
        target = os.path.join(self.shared, "report.json")
        self.plant(target, self.victim)
        refused = "%s is a symlink owned by uid %d in the sticky world-writable directory %s" % (
            target, NOBODY, self.shared)
        for args in (["report", "--format", "json", "-o", target, self.traces],
                     ["report", "-o", target, self.traces],
                     ["export", "-o", target, self.traces],
                     ["export", "--gzip", "-o", target, self.traces]):
            proc = self.run_trainprof(args, check=False)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("trainprof: error: cannot write %s: %s" % (target, refused), proc.stderr)
            self.victim_intact()
            self.assertEqual(os.readlink(target), self.victim)
        # A CSV table planted under its name (prefix form), and a planted directory (directory form).
        prefix = os.path.join(self.shared, "csv-")
        self.plant(prefix + "gpu_kernels.csv", self.victim)
        proc = self.run_trainprof(["report", "--format", "csv", "-o", prefix, self.traces], check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("is a symlink owned by uid %d" % NOBODY, proc.stderr)
        self.victim_intact()
        victim_dir = os.path.join(self.out, "victim-dir")
        os.mkdir(victim_dir)
        self.plant(os.path.join(self.shared, "tables"), victim_dir)
        proc = self.run_trainprof(["report", "--format", "csv", "-o", os.path.join(self.shared, "tables") + "/",
                                   self.traces], check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("trainprof: error: cannot write the CSV tables to %s/tables/: %s/tables is a symlink owned by "
                      "uid %d" % (self.shared, self.shared, NOBODY), proc.stderr)
        self.assertEqual(os.listdir(victim_dir), [])
        # Our own link there is followed: the file it points to is replaced, the link stays.
        os.lchown(target, os.geteuid(), os.getegid())
        self.run_trainprof(["report", "--format", "json", "-o", target, self.traces])
        self.assertEqual(os.readlink(target), self.victim)
        with open(self.victim) as f:
            self.assertEqual(json.loads(f.read())["processes"][0]["exit"]["code"], 4)

    @only_root
    def test_run_into_another_users_symlink_in_a_sticky_directory_is_refused(self):
        victim_dir = os.path.join(self.out, "victim-dir")
        os.mkdir(victim_dir)
        self.plant(os.path.join(self.shared, "run"), victim_dir)
        for pattern in ("run", "run/%p", "run/sub"):
            out = os.path.join(self.shared, pattern)
            proc = self.run_trainprof(["run", "-o", out, "--", program("ends"), "exit", "100"], check=False)
            # The command runs, unprofiled, as when the directory cannot be created.
            self.assertEqual((proc.returncode, proc.stdout), (4, "recorded 100\n"), proc.stderr)
            self.assertRegex(proc.stderr, r"^trainprof: cannot create output directory %s: %s is a symlink owned by "
                             r"uid %d in the sticky world-writable directory %s .*; running %s without profiling\n$"
                             % (re.escape(out).replace("%p", r"\d+"), re.escape(os.path.join(self.shared, "run")),
                                NOBODY, re.escape(self.shared), re.escape(program("ends"))))
            self.assertEqual(os.listdir(victim_dir), [])

    def test_trace_directory_and_files_are_private_unless_umask_says_otherwise(self):
        def modes(d):
            files = sorted(f for f in os.listdir(d) if f.endswith(".trace"))
            return (os.stat(d).st_mode & 0o7777, {os.stat(os.path.join(d, f)).st_mode & 0o7777 for f in files}, len(files))

        # Every process of the run, forked or exec'd, one that set its own umask 0 included.
        ends = program("ends") + " exit 10"
        command = ["sh", "-c", "%s; (umask 0; %s); %s & wait" % (ends, ends, ends)]
        for extra, want in (([], (0o700, {0o600})), (["--umask", "027"], (0o750, {0o640})),
                            (["--umask=0"], (0o777, {0o666}))):
            out = os.path.join(self.out, "modes-%d" % len(os.listdir(self.out)))
            proc = self.run_trainprof(["run", "--follow-children", "-o", out] + extra + ["--"] + command, check=False)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(modes(out)[:2], want, extra)
            self.assertGreaterEqual(modes(out)[2], 4, extra)  # sh, its subshell, three tp_ends
        # A directory that exists keeps its mode; %p directories are made by the child.
        os.chmod(self.traces, 0o755)
        self.run_trainprof(["run", "-o", self.traces, "--", "true"])
        self.assertEqual(os.stat(self.traces).st_mode & 0o7777, 0o755)
        proc = self.run_trainprof(["run", "-o", os.path.join(self.out, "p-%p", "d"), "--", program("ends"), "exit", "1"],
                                  check=False)
        [pdir] = [d for d in os.listdir(self.out) if d.startswith("p-")]
        self.assertEqual(os.stat(os.path.join(self.out, pdir)).st_mode & 0o7777, 0o700)
        self.assertEqual(modes(os.path.join(self.out, pdir, "d"))[:2], (0o700, {0o600}))
        proc = self.run_trainprof(["run", "--umask", "8", "--", "true"], check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--umask: '8' is not an octal mask", proc.stderr)

    def test_an_environment_value_in_the_pattern_stays_inside_the_directory(self):
        runs = os.path.join(self.out, "runs")
        os.mkdir(runs)
        for value, name in (("../escaped", ".._escaped"), ("a/b", "a_b"), ("..", "__")):
            env = dict(self.child_env(), TP_JOB=value)
            proc = self.run_trainprof(["run", "-o", os.path.join(runs, "%q{TP_JOB}"), "--", program("ends"), "exit",
                                       "10"], check=False, env=env)
            self.assertEqual(proc.returncode, 4, proc.stderr)
            self.assertIn("trainprof: note: ", proc.stderr)
            self.assertIn("1 trace file, 1 process", proc.stderr)
            self.assertEqual(len([f for f in os.listdir(os.path.join(runs, name)) if f.endswith(".trace")]), 1)
        self.assertFalse(os.path.exists(os.path.join(self.out, "escaped")))
        self.assertFalse(os.path.exists(os.path.join(runs, "a")))
        self.assertEqual(sorted(os.listdir(self.out)), sorted(["runs", "shared", "traces", "victim.txt"]))


class SharedDirectoryAttackTest(TraceTest):
    """What another local user can do to a shared directory during or before a run, and the
    names trainprof is given (docs/cli.md, "Files trainprof writes")."""

    setUp = SharedDirectoryTest.setUp
    victim_intact = SharedDirectoryTest.victim_intact
    plant = SharedDirectoryTest.plant

    @only_root
    def test_a_link_swapped_in_for_the_run_directory_during_the_run_is_not_written_through(self):
        # Another user's directory in /tmp, renamed away during the run and replaced by their link
        # to a directory of ours: the processes started after that must not write through it.
        run1 = os.path.join(self.shared, "run1")
        os.mkdir(run1)
        os.chmod(run1, 0o777)
        os.chown(run1, NOBODY, NOBODY)
        victim_dir = os.path.join(self.out, "victim-dir")
        os.mkdir(victim_dir)
        # One process does the swap (no process of the run starts in between), then starts one.
        swap = ("import os, subprocess, sys; r, v, p = sys.argv[1:]; os.rename(r, r + '.away'); os.symlink(v, r); "
                "os.lchown(r, %d, %d); sys.exit(subprocess.call([p, 'exit', '10']))" % (NOBODY, NOBODY))
        proc = self.run_trainprof(["run", "--follow-children", "-o", run1, "--", sys.executable, "-c", swap, run1,
                                   victim_dir, program("ends")], check=False)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertEqual(os.listdir(victim_dir), [], proc.stderr)
        self.assertIn("is a symlink owned by uid %d in the sticky world-writable directory %s" % (NOBODY, self.shared),
                      proc.stderr)
        self.assertIn("trainprof: warning: output directory %s is owned by uid %d, who can read and replace the traces"
                      % (run1, NOBODY), proc.stderr)

    def test_the_library_recreates_a_removed_directory_with_the_runs_mode(self):
        d = os.path.join(self.out, "md")
        proc = self.run_trainprof(["run", "--umask", "022", "--follow-children", "-o", d, "--", "sh", "-c",
                                   'rm -rf "$1"; umask 077; "$2" exit 10', "sh", d, program("ends")], check=False)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o755)
        # tp_ends' file, and in the TSan build also sh's fork child for it (vfork is fork there).
        traces = [f for f in os.listdir(d) if f.endswith(".trace")]
        self.assertGreaterEqual(len(traces), 1)
        self.assertEqual({stat.S_IMODE(os.stat(os.path.join(d, f)).st_mode) for f in traces}, {0o644})

    def test_a_fifo_at_the_output_name_is_never_waited_for(self):
        fifo = os.path.join(self.shared, "report.txt")
        os.mkfifo(fifo, 0o666)
        for args in (["report", "-o", fifo, self.traces], ["export", "-o", fifo, self.traces],
                     ["report", "--format", "csv", "-o", fifo, self.traces]):
            proc = self.run_trainprof(args, check=False, timeout=60)  # the old code hung here
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("trainprof: error: cannot write %s: it is a FIFO that nothing reads from" % fifo, proc.stderr)
        if os.geteuid() == 0:
            os.chown(fifo, NOBODY, NOBODY)
            reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            try:
                proc = self.run_trainprof(["report", "-o", fifo, self.traces], check=False, timeout=60)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn("it is a FIFO owned by uid %d in the sticky world-writable directory %s" % (
                    NOBODY, self.shared), proc.stderr)
                self.assertEqual(os.read(reader, 100), b"")
            finally:
                os.close(reader)

    def test_dev_stdout_is_the_redirected_stream_written_in_place(self):
        log = os.path.join(self.out, "log.txt")
        with open(log, "w") as f:
            f.write("first\n")
        ino = os.stat(log).st_ino
        script = '{ echo before; "$1" report -o /dev/stdout "$2"; "$1" report --format csv -o /dev/stdout "$2"; ' \
                 '"$1" report --format json -o /dev/stderr "$2"; echo after; } >> "$3" 2>&1'
        proc = subprocess.run(["sh", "-c", script, "sh", TRAINPROF, self.traces, log], capture_output=True, text=True,
                              timeout=120, env=self.child_env())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(os.stat(log).st_ino, ino)
        with open(log) as f:
            text = f.read()
        self.assertTrue(text.startswith("first\nbefore\n"), text[:200])
        self.assertTrue(text.endswith("}\nafter\n"), text[-200:])
        self.assertIn("# nvtx_ranges.csv", text)
        self.assertIn('"processes"', text)
        self.assertEqual([n for n in os.listdir("/dev") if n.startswith("stdout") and n != "stdout"], [])

    def test_a_name_ending_in_a_slash_is_a_directory_and_long_names_work(self):
        for sub in ("report", "export"):
            target = os.path.join(self.out, "new-" + sub) + "/"
            proc = self.run_trainprof([sub, "-o", target, self.traces], check=False)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("cannot write %s: Is a directory" % target, proc.stderr)
            self.assertFalse(os.path.exists(target[:-1]))
        long_name = os.path.join(self.out, "r" * 250)
        self.run_trainprof(["report", "-o", long_name, self.traces])
        with open(long_name) as f:
            self.assertIn("done", f.read())

    @only_root
    def test_one_refused_csv_table_leaves_no_table_written(self):
        prefix = os.path.join(self.shared, "t-")
        self.plant(prefix + "threads.csv", self.victim)
        proc = self.run_trainprof(["report", "--format", "csv", "-o", prefix, self.traces], check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("no CSV table was written", proc.stderr)
        self.assertEqual(sorted(os.listdir(self.shared)), ["t-threads.csv"])
        self.victim_intact()

    def test_an_unusable_umask_is_a_usage_error(self):
        for mask in ("777", "200", "100"):
            d = os.path.join(self.out, "u" + mask)
            proc = self.run_trainprof(["run", "--umask", mask, "-o", d, "--", "true"], check=False)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("--umask: '%s' takes the owner's own permissions away" % mask, proc.stderr)
            self.assertFalse(os.path.exists(d))

    def test_an_empty_value_keeps_a_relative_pattern_relative(self):
        env = self.child_env()
        env.pop("TP_UNSET_JOB", None)
        proc = self.run_trainprof(["run", "-o", "%q{TP_UNSET_JOB}/tpq-escape", "--", program("ends"), "exit", "10"],
                                  check=False, env=env, cwd=self.out)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertEqual(len([f for f in os.listdir(os.path.join(self.out, "tpq-escape")) if f.endswith(".trace")]), 1)
        self.assertFalse(os.path.exists("/tpq-escape"))

    @only_root
    def test_the_default_name_moves_past_another_users_dangling_link(self):
        # Links at the names of the next seconds, as another user can plant in a shared directory.
        now = time.time()
        for t in range(-1, 8):
            name = os.path.join(self.shared, time.strftime("trainprof-%Y%m%d-%H%M%S", time.localtime(now + t)))
            self.plant(name, "/nonexistent-%d" % t)
        proc = self.run_trainprof(["run", "--", program("ends"), "exit", "10"], check=False, cwd=self.shared)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertRegex(proc.stderr, r"1 trace file, 1 process, .* in %s/trainprof-\d{8}-\d{6}-2 " % re.escape(self.shared))

    def test_control_bytes_from_a_value_are_escaped_in_messages(self):
        env = dict(self.child_env(), TP_JOB="a\x1b[2Jb")
        proc = self.run_trainprof(["run", "-o", os.path.join(self.out, "%q{TP_JOB}"), "--", program("ends"), "exit",
                                   "10"], check=False, env=env)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertNotIn("\x1b", proc.stderr)
        self.assertIn("a\\x1b[2Jb", proc.stderr)

    @only_root
    def test_refusals_to_replace_a_file_say_why(self):
        ro = os.path.join(self.out, "ro")
        os.mkdir(ro, 0o755)
        target = os.path.join(ro, "report.txt")
        with open(target, "w") as f:
            f.write("old")
        os.chmod(target, 0o666)
        for d, _, files in os.walk(self.out):
            os.chmod(d, os.stat(d).st_mode | 0o755)
            for n in files:
                os.chmod(os.path.join(d, n), os.stat(os.path.join(d, n)).st_mode | 0o644)
        theirs = os.path.join(self.shared, "theirs.txt")
        with open(theirs, "w") as f:
            f.write("theirs")
        os.chown(theirs, 12345, 12345)
        os.chmod(theirs, 0o666)
        def as_nobody():
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
        for path, why in ((target, "the directory %s is not writable (the file is written as a new file in it, then "
                                   "renamed onto report.txt): Permission denied" % ro),
                          (theirs, "it is owned by uid 12345 in the sticky directory %s: only its owner, the "
                                   "directory's owner or root may replace it" % self.shared)):
            proc = self.run_trainprof(["report", "-o", path, self.traces], check=False, preexec_fn=as_nobody)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("trainprof: error: cannot write %s: %s" % (path, why), proc.stderr)


class SecureExecutionTest(TraceTest):
    """A setuid program, or one with file capabilities, run by another user under trainprof: the
    loader ignores LD_PRELOAD there, but NVTX dlopens NVTX_INJECTION64_PATH on its first call. The
    library must then do nothing: no trace file, the program's output unchanged, at most one line."""

    @only_root
    @skip_in_sanitizer_build("address", "the loader ignores the sanitizer runtime's LD_PRELOAD in a setuid "
                             "program, and a sanitized library dlopened without it aborts the program")
    @skip_in_sanitizer_build("thread", "as in the address build")
    def test_secure_execution_records_nothing(self):
        if shutil.which("setpriv") is None:
            self.skipTest("no setpriv to run as another user")
        os.chmod(self.out, 0o755)
        bin_dir = os.path.join(self.out, "bin")
        os.mkdir(bin_dir, 0o755)
        variants = []
        setuid = os.path.join(bin_dir, "tp_ends_setuid")
        shutil.copy(program("ends"), setuid)
        os.chown(setuid, NOBODY, NOBODY)
        os.chmod(setuid, 0o4755)
        variants.append(setuid)
        if shutil.which("setcap") is not None:
            cap = os.path.join(bin_dir, "tp_ends_cap")
            shutil.copy(program("ends"), cap)
            os.chmod(cap, 0o755)
            if subprocess.run(["setcap", "cap_net_bind_service=ep", cap], capture_output=True).returncode == 0:
                variants.append(cap)
        as_stranger = ["setpriv", "--reuid=%d" % STRANGER, "--regid=%d" % STRANGER, "--clear-groups", "--"]
        for prog in variants:
            traces = os.path.join(self.out, "traces-" + os.path.basename(prog))
            os.mkdir(traces)
            os.chmod(traces, 0o777)  # writable by whoever the program runs as: only the library's choice stops it
            plain = subprocess.run(as_stranger + [prog, "exit", "100"], capture_output=True, text=True, timeout=60,
                                   cwd=self.out)
            self.assertEqual((plain.returncode, plain.stdout, plain.stderr), (4, "recorded 100\n", ""))
            proc = subprocess.run(as_stranger + [TRAINPROF, "run", "-o", traces, "--", prog, "exit", "100"],
                                  capture_output=True, text=True, timeout=60, cwd=self.out, env=self.child_env())
            self.assertEqual((proc.returncode, proc.stdout), (4, "recorded 100\n"), proc.stderr)
            self.assertEqual(os.listdir(traces), [], proc.stderr)  # nothing, not even an empty file
            library_lines = [l for l in proc.stderr.splitlines() if "is not recorded" in l]
            self.assertEqual(len(library_lines), 1, proc.stderr)
            self.assertRegex(library_lines[0], r"^trainprof: pid \d+ is not recorded: it runs setuid, setgid or with "
                             r"file capabilities \(secure execution\)$")
            self.assertEqual(trainprof_lines(proc.stderr), proc.stderr.splitlines(), proc.stderr)
        # The same program without the setuid bit or capability, as the same user, is recorded.
        plain_copy = os.path.join(bin_dir, "tp_ends_plain")
        shutil.copy(program("ends"), plain_copy)
        os.chmod(plain_copy, 0o755)
        traces = os.path.join(self.out, "traces-plain")
        os.mkdir(traces)
        os.chmod(traces, 0o777)
        proc = subprocess.run(as_stranger + [TRAINPROF, "run", "-o", traces, "--", plain_copy, "exit", "100"],
                              capture_output=True, text=True, timeout=60, cwd=self.out, env=self.child_env())
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertEqual(len(os.listdir(traces)), 1, proc.stderr)



class InputsAndOutputsTest(TraceTest):
    """An output never replaces an input (report -o, export -o in every format, the CSV tables,
    stdout), and a Kineto export kept beside its traces is not counted a second time (docs/cli.md,
    "Files trainprof writes", "Kineto files trainprof exported")."""

    def setUp(self):
        TraceTest.setUp(self)
        self.traces = os.path.join(self.out, "run")
        # Three processes: sh and two tp_ends children, one after the other.
        proc = self.run_trainprof(["run", "--follow-children", "-o", self.traces, "--", "sh", "-c",
                                   '"$1" exit 0; "$1" exit 0; exit 0', "sh", program("ends")], check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.files = sorted(os.path.join(self.traces, f) for f in os.listdir(self.traces) if f.endswith(".trace"))
        self.assertGreaterEqual(len(self.files), 2)
        self.before = self.report()

    def snapshot(self, files=None):
        out = {}
        for f in files or self.files:
            with open(f, "rb") as fh:
                out[f] = fh.read()
        return out

    def report(self, *paths):
        proc = self.run_trainprof(["report", "--format", "json"] + list(paths or [self.traces]))
        return json.loads(proc.stdout), proc.stderr

    def test_an_output_that_is_one_of_the_inputs_is_refused_and_nothing_written(self):
        victim = self.files[-1]
        sym, hard = os.path.join(self.out, "link.trace"), os.path.join(self.out, "hard.txt")
        os.symlink(victim, sym)
        os.link(victim, hard)
        kept = self.snapshot()
        for target in (victim, sym, hard):
            for args in (["report", "-o", target, self.traces],
                         ["report", "--format", "json", "-o", target, self.traces],
                         ["export", "-o", target, self.traces],
                         ["export", "--gzip", "-o", target, self.traces],
                         ["export", "--format", "folded", "-o", target, self.traces],
                         ["report", "-o", target, victim]):  # the input named, not found in a directory
                proc = self.run_trainprof(args, check=False)
                self.assertEqual(proc.returncode, 2, (args, proc.stderr))
                self.assertIn("trainprof: error: -o %s is the input file %s (device " % (target, victim), proc.stderr)
                self.assertIn("nothing was written", proc.stderr)
        # The CSV tables: a table's name landing on an input given by that name.
        csv_input = os.path.join(self.out, "t-files.csv")
        os.link(victim, csv_input)
        proc = self.run_trainprof(["report", "--format", "csv", "-o", os.path.join(self.out, "t-"), self.traces,
                                   csv_input], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("the CSV table %s is the input file" % csv_input, proc.stderr)
        self.assertEqual([n for n in os.listdir(self.out) if n.startswith("t-")], ["t-files.csv"])
        # stdout appended onto an input (the shell opens it before trainprof runs).
        for sub in ("report", "export -o -", "export --format folded"):
            proc = subprocess.run(["sh", "-c", '"$1" %s "$2" >> "$3"' % sub, "sh", TRAINPROF, self.traces, victim],
                                  capture_output=True, text=True, timeout=120, env=self.child_env())
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("trainprof: error: stdout is the input file %s" % victim, proc.stderr)
        # The Kineto files: an export into the directory of the Kineto traces it reads.
        kineto = os.path.join(self.out, "kineto")
        self.run_trainprof(["export", "--format", "kineto", "-o", kineto, self.traces])
        copies = self.snapshot([os.path.join(kineto, f) for f in os.listdir(kineto)])
        proc = self.run_trainprof(["export", "--format", "kineto", "-o", kineto, kineto], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("trainprof: error: the Kineto file %s/" % kineto, proc.stderr)
        self.assertEqual(self.snapshot([os.path.join(kineto, f) for f in os.listdir(kineto)]), copies)
        self.assertEqual(self.snapshot(), kept)
        self.assertEqual(os.path.islink(sym), True)
        self.assertEqual(self.report()[0]["processes"], self.before[0]["processes"])
        self.assertEqual([n for n in os.listdir(self.traces) if n.startswith(".trainprof-")], [])
        # A new file, or a file that is not an input, is written as before.
        self.run_trainprof(["report", "-o", os.path.join(self.traces, "report.txt"), self.traces])

    def test_a_kineto_export_beside_its_traces_is_counted_once(self):
        kineto = os.path.join(self.traces, "kineto")  # docs/cli.md's example: under the run's directory
        self.run_trainprof(["export", "--format", "kineto", "-o", kineto, self.traces])
        copies = sorted(os.path.join(kineto, f) for f in os.listdir(kineto))
        self.assertEqual(len(copies), len(self.before[0]["processes"]))  # no ranks: one file per process
        report, err = self.report()
        self.assertEqual(report["processes"], self.before[0]["processes"])
        self.assertEqual(report["nvtx_ranges"], self.before[0]["nvtx_ranges"])
        self.assertEqual(report["stats"]["exported_copies"], len(copies))
        said = [w for w in report["warnings"] if "left out: trainprof exported it from" in w]
        self.assertEqual(sorted(w.split(": left out")[0] for w in said), copies)
        for copy in copies:
            self.assertEqual(err.count("trainprof: warning: %s: left out: trainprof exported it from %s/pid-" % (
                copy, self.traces)), 1, err)
        # The text report says it too; an export reads each process once as well.
        text = self.run_trainprof(["report", self.traces]).stdout
        self.assertEqual(text.count("left out: trainprof exported it from"), len(copies))
        proc = self.run_trainprof(["export", "-o", "-", self.traces])
        pids = {e["pid"] for e in json.loads(proc.stdout)["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name"}
        self.assertEqual(len(pids), len(self.before[0]["processes"]))
        # Exported again into the same directory: the copies are not inputs, they are replaced.
        self.run_trainprof(["export", "--format", "kineto", "-o", kineto, self.traces])
        # The copies alone are read as any Kineto trace.
        alone, err = self.report(kineto)
        self.assertEqual(len(alone["processes"]), len(copies))
        self.assertEqual(alone["stats"]["exported_copies"], 0)
        self.assertNotIn("left out", err)

if __name__ == "__main__":
    unittest.main()
