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
        self.assertIn("RLIMIT_SIGPENDING (ulimit -i) is 16", proc.stderr)
        counts = {}
        for f in self.trace_files():
            for s in of(read_trace(os.path.join(self.out, f)), "SAMPLE"):
                counts[s["tid"]] = counts.get(s["tid"], 0) + 1
        # Some threads sampled (at most 8 timers; fewer where the user's other processes hold some).
        self.assertGreater(len(counts), 0)
        self.assertLessEqual(len(counts), 8, counts)


if __name__ == "__main__":
    unittest.main()
