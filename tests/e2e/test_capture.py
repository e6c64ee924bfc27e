"""Capture ranges: `trainprof run --capture-range/--capture-range-end/--delay/--duration` with the
planted workload tests/programs/capture.cc (its comment lists what each mode does)."""

import os
import time
import unittest

from common import PYTHON, WORKLOADS, TraceTest, by_pid, exit_of, program, ranges

CAPTURE = program("capture")


def calls(process):
    """{range display name: calls} of a process, without the <pop without push> row."""
    return {name: row["calls"] for name, row in ranges(process["nvtx_ranges"]).items() if row["calls"] > 0}


def marks(report):
    return {m["name"]: m["count"] for m in report["nvtx_marks"]}


def capture_notes(report):
    return [w for w in report["warnings"] if "recording limited" in w]


class NvtxCaptureTest(TraceTest):
    def run_nvtx(self, end):
        self.profile([CAPTURE, "nvtx"], follow=False,
                     extra=["--capture-range=nvtx:step", "--capture-range-end=" + end])
        rep = self.report()
        self.assertEqual(len(rep["processes"]), 1)
        return rep, rep["processes"][0]

    def test_stop_records_only_the_first_step_range_with_whole_ranges(self):
        rep, main = self.run_nvtx("stop")
        # The first "step" (and the one nested in it), what ran inside, "worker" pushed inside and
        # popped after the capture, "async_cross" started inside and ended after. Nothing from
        # before (setup, epoch, early, async_early, before_mark) or after (between, late, step 1-2).
        self.assertEqual(calls(main), {"step": 2, "inner": 3, "worker": 1, "async_cross": 1})
        self.assertEqual(marks(rep), {"tick": 1})
        # Only the pop with nothing pushed is unbalanced: no half-recorded range.
        self.assertEqual(main["unbalanced_ranges"], 1)
        notes = capture_notes(rep)
        self.assertEqual(len(notes), 1, rep["warnings"])
        self.assertIn("(--capture-range=nvtx:step --capture-range-end=stop): 1 interval captured", notes[0])

    def test_domain_and_name_as_the_report_shows_them(self):
        # nvtx:capture_test:step is "step" in the domain capture_test (as the report names it):
        # only step 2, the one pushed in that domain.
        self.profile([CAPTURE, "nvtx"], follow=False, extra=["--capture-range=nvtx:capture_test:step"])
        rep = self.report()
        main = rep["processes"][0]
        self.assertEqual(calls(main), {"capture_test:step": 1, "inner": 2})
        self.assertEqual(marks(rep), {"tick": 1})
        self.assertIn("1 interval captured", capture_notes(rep)[0])

    def test_repeat_records_every_step_range_in_any_domain(self):
        rep, main = self.run_nvtx("repeat")
        self.assertEqual(calls(main), {"step": 3, "capture_test:step": 1, "inner": 7, "worker": 1,
                                       "async_cross": 1})
        self.assertEqual(marks(rep), {"tick": 3})
        self.assertEqual(main["unbalanced_ranges"], 1)
        self.assertIn("3 intervals captured", capture_notes(rep)[0])

    def test_without_capture_everything_is_recorded(self):
        self.profile([CAPTURE, "nvtx"], follow=False)
        rep = self.report()
        main = rep["processes"][0]
        self.assertEqual(calls(main)["step"], 3)
        self.assertEqual(calls(main)["epoch"], 1)
        self.assertEqual(capture_notes(rep), [])

    def test_a_name_that_never_occurs_records_no_event(self):
        self.profile([CAPTURE, "nvtx"], follow=False, extra=["--capture-range=nvtx:nothing_named_so"])
        rep = self.report()
        main = rep["processes"][0]
        self.assertEqual(calls(main), {})
        self.assertEqual(main["unbalanced_ranges"], 1)  # the misuse is still visible
        self.assertEqual(exit_of(main), ("exit", 0))
        self.assertIn("nothing captured", capture_notes(rep)[0])


class CudaProfilerApiTest(TraceTest):
    """cudaProfilerStart/Stop as the CUPTI layer reports them (OnCudaProfilerApi), called through
    the library's trainprof_cuda_profiler_api, so no GPU is needed."""

    def run_cuda(self, extra):
        proc = self.profile([CAPTURE, "cuda"], follow=False, extra=extra)
        rep = self.report()
        return proc, rep, rep["processes"][0]

    def test_stop_records_the_first_start_stop_window(self):
        proc, rep, main = self.run_cuda(["--capture-range=cudaProfilerApi"])
        self.assertIn("api=1", proc.stdout)
        self.assertEqual(calls(main), {"first": 2})
        self.assertIn("1 interval captured", capture_notes(rep)[0])

    def test_repeat_records_every_window(self):
        _, rep, main = self.run_cuda(["--capture-range=cudaProfilerApi", "--capture-range-end=repeat"])
        self.assertEqual(calls(main), {"first": 2, "second": 3})
        self.assertIn("2 intervals captured", capture_notes(rep)[0])

    def test_without_the_option_the_calls_change_nothing(self):
        proc, rep, main = self.run_cuda([])
        self.assertIn("api=0", proc.stdout)
        self.assertEqual(calls(main), {"main_start": 1, "before": 1, "first": 2, "gap": 1, "second": 3,
                                       "after": 1})


class WindowTest(TraceTest):
    """Phases "a", "b", "c" at about 0 s, 1 s and 2 s after the launch: margins of ~0.5 s."""

    def test_delay_and_duration(self):
        self.profile([CAPTURE, "window"], follow=False, extra=["--delay", "0.5", "--duration", "1"])
        rep = self.report()
        self.assertEqual(calls(rep["processes"][0]), {"b": 1, "tick": 3})
        note = capture_notes(rep)[0]
        self.assertIn("(--delay/--duration window): 1 interval captured", note)

    def test_delay_combined_with_a_capture_range(self):
        self.profile([CAPTURE, "window"], follow=False, extra=["--delay=0.5", "--capture-range=nvtx:c"])
        rep = self.report()
        self.assertEqual(calls(rep["processes"][0]), {"c": 1, "tick": 3})

    def test_a_range_before_the_delay_does_not_start_the_capture(self):
        self.profile([CAPTURE, "window"], follow=False, extra=["--delay=0.5", "--capture-range=nvtx:a"])
        self.assertEqual(calls(self.report()["processes"][0]), {})


class ShutdownTest(TraceTest):
    def timed_profile(self, command, **kwargs):
        start = time.monotonic()
        proc = self.profile(command, **kwargs)
        return proc, time.monotonic() - start

    def test_stop_shutdown_ends_the_program_with_sigterm(self):
        proc, elapsed = self.timed_profile(
            [CAPTURE, "nvtx", "linger"], follow=False, expect_status=143,
            extra=["--capture-range=nvtx:step", "--capture-range-end=stop-shutdown"])
        self.assertLess(elapsed, 30)  # the program lingers 60 s
        self.assertIn("the capture range ended in pid", proc.stderr)
        self.assertIn("was ended by trainprof after the capture", proc.stderr)
        self.assertIn("SIGTERM): exit status 143", proc.stderr)
        self.assertNotIn("SIGKILL (pid", proc.stderr)
        rep = self.report()
        main = rep["processes"][0]
        self.assertEqual(exit_of(main), ("signal", 15))
        # SIGTERM may come before "worker" and "async_cross" end (right after the capture).
        got = calls(main)
        self.assertEqual({k: got[k] for k in ("step", "inner")}, {"step": 2, "inner": 3})
        self.assertLessEqual(set(got), {"step", "inner", "worker", "async_cross"})

    def test_stop_shutdown_kills_what_ignores_sigterm_after_the_grace_period(self):
        proc, elapsed = self.timed_profile(
            [CAPTURE, "nvtx", "fork", "ignore-term", "linger"], follow=True, expect_status=137,
            extra=["--capture-range=nvtx:step", "--capture-range-end=stop-shutdown"])
        self.assertGreater(elapsed, 4.5)  # SIGKILL 5 s after SIGTERM
        self.assertLess(elapsed, 40)
        self.assertIn("SIGTERM sent to 2 processes", proc.stderr)
        self.assertIn("2 processes still running 5 s after SIGTERM: sent SIGKILL", proc.stderr)
        self.assertIn("SIGKILL after the grace period): exit status 137", proc.stderr)
        procs = self.report()["processes"]
        self.assertEqual(len(procs), 2)
        for p in procs:
            self.assertEqual(exit_of(p), ("signal", 9))

    def test_duration_with_stop_shutdown_ends_the_program(self):
        proc, elapsed = self.timed_profile(
            [CAPTURE, "window", "linger"], follow=False, expect_status=143,
            extra=["--duration", "0.5", "--capture-range-end=stop-shutdown"])
        self.assertLess(elapsed, 30)
        self.assertIn("--duration ended (--capture-range-end=stop-shutdown)", proc.stderr)
        self.assertEqual(calls(self.report()["processes"][0]), {"main_start": 1, "a": 1, "tick": 3})

    def test_stop_keeps_the_program_running(self):
        proc = self.profile([CAPTURE, "nvtx"], follow=False, extra=["--capture-range=nvtx:step"])
        self.assertIn("nvtx done", proc.stdout)
        self.assertNotIn("ended by trainprof", proc.stderr)


class PythonShimTest(TraceTest):
    """Ranges the Python shim pushes through the library's C API start captures too."""

    def test_optimizer_step_ranges_only(self):
        # By its name, and by the name the report shows ("trainprof:" is the shim's NVTX domain).
        for name in ("Optimizer.step#SGD.step", "trainprof:Optimizer.step#SGD.step"):
            with self.fresh_subtest(name=name):
                self.profile([PYTHON, os.path.join(WORKLOADS, "dataloader_train.py"), "--workers", "1",
                              "--batches", "6"], follow=False,
                             extra=["--capture-range=nvtx:" + name, "--capture-range-end=repeat"], timeout=300)
                rep = self.report()
                main = rep["processes"][0]
                self.assertEqual(calls(main), {"trainprof:Optimizer.step#SGD.step": 6})
                self.assertIn("6 intervals captured", capture_notes(rep)[0])


class UsageTest(TraceTest):
    def usage_error(self, options):
        marker = os.path.join(self.out, "ran")
        proc = self.run_trainprof(["run", "-o", self.out] + options + ["--", "touch", marker], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertFalse(os.path.exists(marker))  # COMMAND did not run
        return proc.stderr

    def test_bad_options_are_usage_errors(self):
        self.assertIn("--capture-range: unknown value 'cuda'", self.usage_error(["--capture-range=cuda"]))
        self.assertIn("needs the name", self.usage_error(["--capture-range=nvtx"]))
        self.assertIn("unknown value 'loop'", self.usage_error(["--capture-range=nvtx:a", "--capture-range-end=loop"]))
        self.assertIn("needs --capture-range", self.usage_error(["--capture-range-end=repeat"]))
        self.assertIn("--delay: '-1'", self.usage_error(["--delay=-1"]))
        self.assertIn("--duration: '0'", self.usage_error(["--duration", "0"]))
        self.assertIn("needs CUDA tracing", self.usage_error(["--capture-range=cudaProfilerApi", "--trace=nvtx"]))


if __name__ == "__main__":
    unittest.main()
