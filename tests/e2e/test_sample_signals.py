"""The sampler's signal never reaches a thread that blocks it (`trainprof run --sample=HZ`,
issue 35): threads that block every signal and wait with sigwaitinfo, sigtimedwait, sigwait, a
signalfd, sigsuspend, or Python's signal.sigwait/sigwaitinfo get the signal they waited for, and
the threads that do not block it are still sampled.

tests/programs/sample_blocked_wait.cc and tests/workloads/py_blocked_wait.py spin on the CPU
before and while every signal is blocked (at 1000 Hz the sampler's timer fires many times
meanwhile), then wait; a second thread that never blocks the real-time signals spins meanwhile."""

import os
import re
import resource
import unittest

from common import PYTHON, WORKLOADS, TraceTest, _limit_file_size, program, skip_in_sanitizer_build
from trace_decode import of, read_trace

HZ = 1000
NO_INTERPOSITION = ("the sanitizer builds do not interpose pthread_sigmask and the sigwait family "
                    "(inject/stacks/sample_mask.h): their runtimes intercept them first")


def printed(stdout, key):
    """{name: int} of the program's "KEY NAME N" lines."""
    return {name: int(float(v)) for name, v in re.findall(r"^%s (\w+) ([\d.]+)$" % key, stdout, re.M)}


@skip_in_sanitizer_build("thread", NO_INTERPOSITION)
@skip_in_sanitizer_build("address", NO_INTERPOSITION)
class BlockedSampleSignalTest(TraceTest):
    def samples_by_tid(self, pid=None):
        """{tid: SAMPLE count} of the trace of `pid` (the only one when None)."""
        traces = [read_trace(os.path.join(self.out, f)) for f in self.trace_files()]
        if pid is not None:
            traces = [t for t in traces if t["header"]["pid"] == pid]
        self.assertEqual(len(traces), 1, self.trace_files())
        counts = {}
        for s in of(traces[0], "SAMPLE"):
            counts[s["tid"]] = counts.get(s["tid"], 0) + 1
        return counts

    def check_samples(self, proc, inherited):
        tids, cpu = printed(proc.stdout, "tid"), printed(proc.stdout, "cpu")
        counts = self.samples_by_tid(pid=tids["main"])
        # The waiter's CPU time with the signal blocked is not sampled, and the report says how
        # much (SAMPLE_PAUSED; the sender threads made while everything was blocked add little).
        blocked_ms = self.report()["stats"]["samples_blocked_cpu_ms"]
        self.assertGreaterEqual(blocked_ms, cpu["waiter_blocked"] - 2, cpu)
        self.assertLessEqual(blocked_ms, cpu["waiter_blocked"] + 50, cpu)
        # The thread that never blocks the signal: sampled (150 ms of CPU time: ~150 samples; the
        # kernel delivers fewer on a loaded machine).
        self.assertGreater(counts.get(tids["free"], 0), 15, (counts, tids))
        if inherited:
            # Made with every signal blocked and never unblocking: never sampled.
            self.assertEqual(counts.get(tids["waiter"], 0), 0, (counts, tids))
            self.assertGreater(counts.get(tids["main"], 0), 15, (counts, tids))
        else:
            # Sampled while it does not block the signal; its CPU time while blocked is not (the
            # timer is stopped), nor written at the unblock as the periods since its last sample.
            unblocked_ms = cpu["main_total"] - cpu["waiter_blocked"]
            self.assertGreater(counts.get(tids["main"], 0), 15, (counts, tids))
            self.assertLessEqual(counts.get(tids["main"], 0), 1.3 * unblocked_ms * HZ / 1000 + 10, (counts, cpu))

    def test_native_waits_get_the_signal_they_wait_for(self):
        cases = [(m, False) for m in ("sigwaitinfo", "sigtimedwait", "sigwait", "signalfd", "signalfd-thread",
                                      "sigsuspend", "sigsuspend-classic")]
        # Threads made with every signal already blocked (pthread_create inherits the mask).
        cases += [(m, True) for m in ("sigwaitinfo", "signalfd-thread", "sigsuspend-classic")]
        for mode, inherited in cases:
            with self.fresh_subtest(mode=mode, inherited=inherited):
                proc = self.profile([program("sample_blocked_wait"), mode] + (["inherited"] if inherited else []),
                                    expect_status=0, timeout=120, extra=["--sample=%d" % HZ])
                self.assertIn("%s ok" % mode, proc.stdout)
                self.check_samples(proc, inherited)

    def test_python_sigwait_gets_sigalrm(self):
        script = os.path.join(WORKLOADS, "py_blocked_wait.py")
        for mode in ("sigwait-alarm", "sigwait-all", "sigwaitinfo-all"):
            with self.fresh_subtest(mode=mode):
                proc = self.profile([PYTHON, script, mode], follow=False, timeout=120, extra=["--sample=%d" % HZ])
                self.assertIn("%s ok" % mode, proc.stdout)
                tids = printed(proc.stdout, "tid")
                counts = self.samples_by_tid()
                self.assertGreater(counts.get(tids["free"], 0), 15, (counts, tids))
                self.assertGreater(counts.get(tids["main"], 0), 15, (counts, tids))


@skip_in_sanitizer_build("thread", NO_INTERPOSITION)
@skip_in_sanitizer_build("address", NO_INTERPOSITION)
class SignalQueueLimitTest(TraceTest):
    def test_low_rlimit_sigpending_leaves_the_program_its_queued_signals(self):
        # `ulimit -i 16`: each sampled thread's timer holds one of the user's queued-signal slots;
        # 32 sampled threads took them all, and the program's own timer_create and sigqueue failed
        # with EAGAIN. The sampler keeps to half of the limit (inject/stacks/sample_budget.h).
        def low_limit():
            _limit_file_size()
            resource.setrlimit(resource.RLIMIT_SIGPENDING, (16, resource.getrlimit(resource.RLIMIT_SIGPENDING)[1]))

        proc = self.run_trainprof(["run", "-o", self.out, "--sample=%d" % HZ, "--", program("sample_sigpending")],
                                  check=False, preexec_fn=low_limit, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("sigpending ok", proc.stdout)
        self.assertRegex(proc.stderr, r"trainprof: \d+ of 33 threads of pid \d+ were not sampled \(no CPU timer\): "
                                      r"\d+ because the user's queued signals had reached half of "
                                      r"RLIMIT_SIGPENDING \(ulimit -i 16;")
        counts, lost = {}, set()
        for f in self.trace_files():
            trace = read_trace(os.path.join(self.out, f))
            for s in of(trace, "SAMPLE"):
                counts[s["tid"]] = counts.get(s["tid"], 0) + 1
            lost |= {r["tid"] for r in of(trace, "SAMPLE_THREAD_LOST")}
        # At most 8 timers (none where the user's other processes hold 8 queued signals already);
        # each thread without one says so.
        self.assertLessEqual(len(counts), 8, counts)
        self.assertGreaterEqual(len(lost), 33 - 8, lost)
        self.assertFalse(set(counts) & lost, (counts, lost))


def low_sigpending(n):
    """A preexec_fn: RLIMIT_SIGPENDING's soft limit n (`ulimit -i n`), the file size capped."""
    def set_limit():
        _limit_file_size()
        resource.setrlimit(resource.RLIMIT_SIGPENDING, (n, resource.getrlimit(resource.RLIMIT_SIGPENDING)[1]))
    return set_limit


@skip_in_sanitizer_build("thread", NO_INTERPOSITION)
@skip_in_sanitizer_build("address", NO_INTERPOSITION)
class ThreadsNotSampledTest(TraceTest):
    """Threads that get no CPU timer (`ulimit -i 8`, 32 busy threads: the hostile pass's case, where
    4 threads were sampled and nothing said how many were not) are counted in the trace
    (SAMPLE_THREAD_LOST), the report (stats.threads_not_sampled, its warning, the function table's
    title) and the `trainprof:` line at the end, with the cause."""

    def run_busy(self, limit, *args):
        proc = self.run_trainprof(["run", "-o", self.out, "--sample=%d" % HZ, "--", program("sample_busy_threads"), "32",
                                   "60"] + list(args), check=False, preexec_fn=low_sigpending(limit), timeout=180)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("busy ok", proc.stdout)
        traces = [read_trace(os.path.join(self.out, f)) for f in self.trace_files()]
        self.assertEqual(len(traces), 1, self.trace_files())
        trace = traces[0]
        self.assertEqual(trace["header"]["version"], 5)  # a sampling process's: readers before 5 refuse it
        sampled = {s["tid"] for s in of(trace, "SAMPLE")}
        lost = {r["tid"]: r for r in of(trace, "SAMPLE_THREAD_LOST")}
        threads = {int(t) for t in re.findall(r"^(?:main|worker) (\d+)$", proc.stdout, re.M)}
        self.assertEqual(len(threads), 33, proc.stdout)
        # Threads without a timer say so, once each; a thread with one has samples (on a loaded
        # machine the kernel now and then signals a thread with a timer not at all in its 60 ms).
        self.assertLessEqual(set(lost), threads, lost)
        self.assertEqual(len(lost), len(list(of(trace, "SAMPLE_THREAD_LOST"))))
        self.assertFalse(sampled & set(lost), (sampled, lost))
        report = self.report()
        self.assertEqual(report["stats"]["threads_not_sampled"], len(lost), report["stats"])
        pid = trace["header"]["pid"]
        return proc, trace, lost, report, pid

    def test_ulimit_i_8_with_32_busy_threads(self):
        self.check_share(8)

    def test_limit_above_the_users_queued_signals(self):
        # A limit whose half is a few slots above what the user's processes hold now (the
        # machine's other processes hold some): a few threads sampled, the others not.
        with open("/proc/self/status") as f:
            queued = int(re.search(r"^SigQ:\s*(\d+)/", f.read(), re.M).group(1))
        self.check_share(2 * (queued + 6))

    def check_share(self, limit):
        proc, trace, lost, report, pid = self.run_busy(limit)
        # At most limit/2 timers (fewer where the user's other processes hold some slots).
        self.assertGreaterEqual(len(lost), 33 - limit // 2, lost)
        self.assertEqual({r["reason"] for r in lost.values()}, {1}, lost)
        self.assertEqual({r["limit"] for r in lost.values()}, {limit}, lost)
        self.assertTrue(all(r["queued"] >= limit // 2 for r in lost.values()), lost)
        n = len(lost)
        cause = ("%d because the user's queued signals had reached half of RLIMIT_SIGPENDING (ulimit -i %d), the "
                 "sampler's share" % (n, limit))
        in_trace = len({fields["tid"] for _, fields in trace["records"]})  # threads with a record
        if n < in_trace:
            warning = ("pid %d: %d of the %d threads in its trace were not sampled (no CPU timer: %s): the function "
                       "table counts the others" % (pid, n, in_trace, cause))
        else:  # the user's other processes held half of the limit already
            warning = "pid %d: none of the %d threads in its trace was sampled (no CPU timer: %s)" % (pid, in_trace, cause)
        self.assertIn(warning, report["warnings"])
        self.assertIn("trainprof: %d of 33 threads of pid %d were not sampled (no CPU timer): %d because the user's "
                      "queued signals had reached half of RLIMIT_SIGPENDING (ulimit -i %d; the sampler leaves the other "
                      "half to the program); the trace counts them (the report's threads_not_sampled), a higher "
                      "`ulimit -i` samples them\n" % (n, pid, n, limit), proc.stderr)
        self.assertEqual(proc.stderr.count("not sampled"), 1, proc.stderr)
        text = self.run_trainprof(["report", self.out]).stdout
        self.assertIn(warning[len("pid %d: " % pid):], text)
        if n < in_trace:  # a function table (of the sampled threads' samples), titled with what it lacks
            self.assertIn("; not in it: %d threads never sampled (see the warnings)" % n, text)

    def test_timer_create_fails_with_eagain(self):
        # The program fills the user's signal queue first: the first threads are far below the
        # sampler's share check (1/16 of the limit), and their timer_create fails with EAGAIN.
        proc, trace, lost, report, pid = self.run_busy(64, "fill")
        self.assertIn("queued", proc.stdout)
        self.assertGreaterEqual(len(lost), 30, lost)
        self.assertIn(2, {r["reason"] for r in lost.values()}, lost)
        self.assertEqual({r["error"] for r in lost.values() if r["reason"] == 2}, {11}, lost)
        create = sum(1 for r in lost.values() if r["reason"] == 2)
        self.assertTrue(any("%d because timer_create failed with EAGAIN (RLIMIT_SIGPENDING, ulimit -i 64, reached)"
                            % create in w for w in report["warnings"]), report["warnings"])
        self.assertIn("%d because timer_create failed (errno 11, EAGAIN: the user's queued signals had reached "
                      "RLIMIT_SIGPENDING, ulimit -i 64)" % create, proc.stderr)


if __name__ == "__main__":
    unittest.main()
