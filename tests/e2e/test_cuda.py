"""CUDA tracing on a machine without a GPU (or without a driver): nothing of ours may change what a
CUDA program does, CUPTI is loaded only by cuInit's InitializeInjection, and when CUPTI cannot be
used the process says so once, records GPU_STATUS unavailable, and records everything else.

The traces are read with trace_decode.py (the format, independently of the collector)."""

import json
import os
import subprocess
import unittest

from common import PROGRAMS, PYTHON, SANITIZER, TRAINPROF, TraceTest, program
from trace_decode import GPU_STATE, MEMCPY_KIND, MEMORY_KIND, SYNC_TYPE, of, read_trace, string

CUDA_HOME = os.environ.get("TRAINPROF_TEST_CUDA_HOME", "/usr/local/cuda")
CUDA_LINE = "trainprof: CUDA tracing unavailable"
CUPTI_ERROR_NOT_INITIALIZED = 15


def our_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("trainprof:")]


def without_our_lines(stderr):
    return "".join(l + "\n" for l in stderr.splitlines() if not l.startswith("trainprof:"))


def toolkit_cupti():
    for sub in ("lib64", "lib", "extras/CUPTI/lib64"):
        path = os.path.join(CUDA_HOME, sub, "libcupti.so")
        if os.path.exists(path):
            return path
    return None


class CudaProgramTest(TraceTest):
    """tests/programs/cuda_workload.cu (built when CMake finds nvcc)."""

    def setUp(self):
        super().setUp()
        if not os.access(program("cuda_workload"), os.X_OK):
            self.skipTest("no tp_cuda_workload: nvcc was not found when building")

    def compare(self, args, extra=()):
        direct = subprocess.run([program("cuda_workload")] + args, capture_output=True, text=True, timeout=120)
        proc = self.run_trainprof(["run", "-o", self.out] + list(extra) + ["--", program("cuda_workload")] + args,
                                  check=False, timeout=120)
        self.assertEqual(proc.stdout, direct.stdout)
        self.assertEqual(proc.returncode, direct.returncode, proc.stderr)
        self.assertEqual(without_our_lines(proc.stderr), direct.stderr)
        return direct, proc

    def test_output_and_status_are_the_same_under_trainprof(self):
        for args in (["basic"], ["full", "2"]):
            for extra in ((), ("--trace=-cuda",), ("--follow-children",)):
                with self.fresh_subtest(args=args, extra=extra):
                    direct, _ = self.compare(args, extra)
                    self.assertIn("cudaGetDeviceCount:", direct.stdout)

    def test_without_a_driver_nothing_of_ours_runs(self):
        if os.path.exists("/dev/nvidiactl"):
            self.skipTest("this machine has an NVIDIA driver")
        direct, proc = self.compare(["basic"])
        self.assertNotEqual(direct.returncode, 0, direct.stdout)  # CUDA said it cannot run
        self.assertEqual([l for l in our_lines(proc.stderr) if "CUDA" in l], [])
        for f in self.trace_files():
            trace = read_trace(os.path.join(self.out, f))
            self.assertEqual(trace["errors"], [])
            self.assertEqual(of(trace, "GPU_STATUS"), [])  # cuInit never reached InitializeInjection


class NoCuptiInNonCudaProcessesTest(TraceTest):
    """libcupti is loaded by InitializeInjection (cuInit) only: never at library load."""

    def assert_not_mapped(self, maps):
        self.assertIn("libtrainprof_inject", maps)  # the library is there...
        self.assertNotIn("libcupti", maps)         # ...CUPTI is not
        self.assertNotIn("libcuda.so", maps)

    def test_a_program_that_does_not_use_cuda(self):
        proc = self.profile(["cat", "/proc/self/maps"], follow=False)
        self.assert_not_mapped(proc.stdout)

    def test_python_with_nvtx_and_children(self):
        code = ("import os, subprocess, sys\n"
                "sys.stdout.write(open('/proc/self/maps').read())\n"
                "sys.stdout.flush()\n"
                "subprocess.run(['cat', '/proc/self/maps'])\n")
        proc = self.profile([PYTHON, "-c", code], follow=True)
        self.assert_not_mapped(proc.stdout)

    def test_nvtx_program(self):
        # NVTX (our NVTX injection) but no CUDA: InitializeInjection is never called.
        if not os.access(program("cuda_inject_by_hand"), os.X_OK):
            self.skipTest("test programs not built")
        proc = self.profile([program("cuda_inject_by_hand"), "20", "noinit"], follow=False)
        self.assertIn("libcupti mapped: no", proc.stdout)
        [f] = self.trace_files()
        trace = read_trace(os.path.join(self.out, f))
        self.assertEqual(len(of(trace, "RANGE_PUSH")), 40)  # NVTX was recorded
        self.assertEqual(of(trace, "GPU_STATUS"), [])


class InjectionByHandTest(TraceTest):
    """tests/programs/cuda_inject_by_hand.cc calls InitializeInjection itself (twice), as cuInit
    would, between two groups of NVTX ranges."""

    N = 50

    def setUp(self):
        super().setUp()
        if not os.access(program("cuda_inject_by_hand"), os.X_OK):
            self.skipTest("test programs not built")

    def run_by_hand(self, env_extra, args=(), follow=False, extra=()):
        env = dict(os.environ)
        env.pop("TRAINPROF_CUDA_QUIET", None)
        env.update(env_extra)
        proc = self.run_trainprof(["run", "-o", self.out] + (["--follow-children"] if follow else []) +
                                  list(extra) + ["--", program("cuda_inject_by_hand"), str(self.N)] + list(args),
                                  env=env, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("InitializeInjection returned 1 1", proc.stdout)  # never a failure for cuInit
        return proc

    def traces(self):
        return [read_trace(os.path.join(self.out, f)) for f in self.trace_files()]

    def check_nvtx_intact(self, trace):
        self.assertEqual(trace["errors"], [])
        names = [string(trace, r["name"]) for r in of(trace, "RANGE_PUSH")]
        self.assertEqual(names.count("before"), self.N)
        self.assertEqual(names.count("after"), self.N)
        self.assertEqual(len(of(trace, "RANGE_POP")), 2 * self.N)
        self.assertEqual(trace["header"]["records_dropped"], 0)

    def test_missing_cupti_says_so_once_and_records_the_rest(self):
        missing = os.path.join(self.out, "nowhere", "libcupti.so.13")
        proc = self.run_by_hand({"TRAINPROF_CUPTI_PATH": missing})
        cuda_lines = [l for l in our_lines(proc.stderr) if "CUDA" in l]
        self.assertEqual(len(cuda_lines), 1, proc.stderr)
        reason = "cannot load CUPTI: TRAINPROF_CUPTI_PATH=%s: no such file" % missing
        self.assertIn(reason, cuda_lines[0])
        self.assertIn("CUPTI API version unknown", cuda_lines[0])
        self.assertIn("libcupti mapped: no", proc.stdout)
        [trace] = self.traces()
        status = of(trace, "GPU_STATUS")
        self.assertEqual(len(status), 1)  # the second InitializeInjection did nothing
        self.assertEqual(GPU_STATE[status[0]["state"]], "unavailable")
        self.assertEqual(status[0]["result"], CUPTI_ERROR_NOT_INITIALIZED)
        self.assertEqual(status[0]["cupti_version"], 0)
        self.assertEqual(string(trace, status[0]["message"]), reason)
        self.check_nvtx_intact(trace)
        # In time order: after the "before" ranges, before the "after" ones.
        pushes = of(trace, "RANGE_PUSH")
        self.assertLess(pushes[self.N - 1]["t"], status[0]["t"])
        self.assertLess(status[0]["t"], pushes[self.N]["t"])

    def test_real_libcupti(self):
        lib = toolkit_cupti()
        if lib is None:
            self.skipTest("no libcupti under %s" % CUDA_HOME)
        proc = self.run_by_hand({"TRAINPROF_CUPTI_PATH": lib})
        [trace] = self.traces()
        self.check_nvtx_intact(trace)
        status = of(trace, "GPU_STATUS")
        self.assertGreaterEqual(len(status), 1)
        state = GPU_STATE[status[0]["state"]]
        self.assertGreater(status[0]["cupti_version"], 0)  # CUPTI was loaded and asked
        self.assertIn("libcupti mapped: yes", proc.stdout)
        cuda_lines = [l for l in our_lines(proc.stderr) if "CUDA" in l]
        if state == "unavailable":  # no driver or no GPU: CUPTI cannot subscribe
            self.assertEqual(len(status), 1)
            self.assertEqual(len(cuda_lines), 1, proc.stderr)
            message = string(trace, status[0]["message"])
            self.assertTrue(message.startswith("cuptiSubscribe: CUPTI_ERROR_"), message)
            self.assertIn(message, cuda_lines[0])
            self.assertIn("[CUPTI API version %d, " % status[0]["cupti_version"], cuda_lines[0])
            self.assertNotEqual(status[0]["result"], 0)
        else:  # a machine with a GPU: tracing on, flushed at exit, nothing said
            self.assertEqual(state, "on")
            self.assertIn("libcupti", string(trace, status[0]["message"]))  # the library it loaded
            self.assertEqual(GPU_STATE[status[-1]["state"]], "flushed")
            self.assertEqual(cuda_lines, [])

    def test_said_once_per_process_tree(self):
        # The second process is exec'd by a shell that system() started: it learns that the line
        # was said from TRAINPROF_CUDA_QUIET.
        missing = os.path.join(self.out, "nowhere", "libcupti.so")
        proc = self.run_by_hand({"TRAINPROF_CUPTI_PATH": missing}, args=["spawn"], follow=True)
        self.assertIn("child status 0", proc.stdout)
        self.assertEqual(proc.stdout.count("InitializeInjection returned 1 1"), 2)
        self.assertEqual(len([l for l in our_lines(proc.stderr) if "CUDA" in l]), 1, proc.stderr)
        by_hand = [t for t in self.traces() if of(t, "RANGE_PUSH")]
        self.assertEqual(len(by_hand), 2)
        for trace in by_hand:
            self.check_nvtx_intact(trace)
            [status] = of(trace, "GPU_STATUS")  # each process records why, silently or not
            self.assertEqual(GPU_STATE[status["state"]], "unavailable")

    def test_trace_without_cuda_never_loads_cupti(self):
        lib = toolkit_cupti() or "/nonexistent/libcupti.so"
        proc = self.run_by_hand({"TRAINPROF_CUPTI_PATH": lib}, extra=["--trace=-cuda"])
        self.assertIn("libcupti mapped: no", proc.stdout)
        self.assertEqual([l for l in our_lines(proc.stderr) if "CUDA" in l], [])
        [trace] = self.traces()
        self.check_nvtx_intact(trace)
        self.assertEqual(of(trace, "GPU_STATUS"), [])
        self.assertEqual(of(trace, "CUDA_API_ENTER"), [])


class FakeCuptiTest(TraceTest):
    """The live CUPTI path — subscription, callbacks on program threads, activity buffers, the flush
    thread, the exit flush, fork children, failures — against libfake_cupti.so
    (tests/programs/fake_cupti.cc), a stand-in that behaves as the CUPTI documentation says, driven
    by tests/programs/cupti_fake_workload.cc."""

    FLUSH_MS = 50

    def setUp(self):
        super().setUp()
        self.fake = os.path.join(PROGRAMS, "libfake_cupti.so")
        if not os.path.exists(self.fake) or not os.access(program("cupti_fake_workload"), os.X_OK):
            self.skipTest("the fake CUPTI was not built (no CUPTI headers)")

    def run_fake(self, mode, env_extra=None, lib=None, follow=False, expect_status=0, extra=(), args=()):
        env = dict(os.environ)
        env.pop("TRAINPROF_CUDA_QUIET", None)
        env.update({"TRAINPROF_CUPTI_PATH": lib or self.fake, "TRAINPROF_GPU_FLUSH_MS": str(self.FLUSH_MS)})
        env.update(env_extra or {})
        proc = self.run_trainprof(["run", "-o", self.out] + (["--follow-children"] if follow else []) +
                                  list(extra) + ["--", program("cupti_fake_workload"), mode] + list(args),
                                  env=env, check=False, timeout=60)
        self.assertEqual(proc.returncode, expect_status, proc.stdout + proc.stderr)
        self.assertIn("InitializeInjection returned 1", proc.stdout)
        return proc

    def traces(self):
        return [read_trace(os.path.join(self.out, f)) for f in self.trace_files()]

    def main_trace(self):
        traces = [t for t in self.traces() if of(t, "GPU_STATUS")]
        self.assertEqual(len(traces), 1)
        self.assertEqual(traces[0]["errors"], [])
        return traces[0]

    def check_api_calls(self, t):
        enters = of(t, "CUDA_API_ENTER")
        exits = of(t, "CUDA_API_EXIT")
        # (correlation, api, function) of each call; the driver calls made inside runtime calls
        # (correlations 2, 5, 10) are not separate calls.
        got = sorted((e["correlation"], e["api"], string(t, e["name"])) for e in enters)
        self.assertEqual(got, [(1, 1, "cudaLaunchKernel_v7000"), (3, 2, "cuLaunchKernelEx"),
                               (4, 1, "cudaProfilerStart_v4000"), (6, 1, "cudaMalloc_v3020"),
                               (7, 1, "cudaProfilerStop_v4000"), (8, 1, "cudaGraphLaunch_v10000"),
                               (9, 1, "cudaLaunchKernel_v7000")])
        cbids = {e["correlation"]: e["cbid"] for e in enters}
        self.assertEqual(cbids[1], 211)  # CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
        self.assertEqual(cbids[3], 652)  # CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx
        self.assertEqual(cbids[8], 311)  # CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000
        status = {x["correlation"]: x["status"] for x in exits}
        self.assertEqual(status, {1: 0, 3: 0, 4: 0, 6: 2, 7: 0, 8: 0, 9: 0})
        # Each exit on its call's thread, after its enter; the second thread's call on its own.
        by_corr = {e["correlation"]: e for e in enters}
        for x in exits:
            self.assertEqual(x["tid"], by_corr[x["correlation"]]["tid"])
            self.assertGreaterEqual(x["t"], by_corr[x["correlation"]]["t"])
        self.assertNotEqual(by_corr[9]["tid"], by_corr[1]["tid"])
        # Names are interned once per function: both cudaLaunchKernel calls share one string id.
        self.assertEqual(by_corr[1]["name"], by_corr[9]["name"])
        # Without --capture-range, cudaProfilerStart/Stop change nothing: no CAPTURE record.
        self.assertEqual(of(t, "CAPTURE"), [])

    def check_activity(self, t, last_kernel):
        h = t["header"]
        # (A kill may land just after a periodic flush took the kernel queued before it: that one
        # is not checked either way.)
        kernels = [k for k in of(t, "GPU_KERNEL") if string(t, k["name"]) != "_Z9unflushedv"]
        names = [string(t, k["name"]) for k in kernels]
        expected = 5 if last_kernel else 4
        self.assertEqual(len(kernels), expected, names)
        long = [k for k in kernels if string(t, k["name"]).startswith("_ZN7cutlass")][0]
        self.assertEqual(len(string(t, long["name"]).encode()), 4096)  # cut at kMaxStringBytes
        self.assertEqual(long["correlation"], 1)
        self.assertEqual((long["device"], long["context"], long["stream"]), (0, 1, 7))
        self.assertEqual((long["grid_x"], long["grid_y"], long["grid_z"]), (128, 1, 1))
        self.assertEqual((long["block_x"], long["block_y"], long["block_z"]), (256, 1, 1))
        self.assertEqual((long["registers"], long["static_shared"], long["dynamic_shared"]), (32, 0, 1024))
        self.assertEqual((long["graph"], long["launch"]), (0, 0))
        self.assertEqual(long["end"] - long["start"], 100000)
        # Our clock (the timestamp callback): the workload took "now" from it after CUPTI was set
        # up (GPU_STATUS on) and before its kernels were flushed.
        now = long["end"] + 800000
        self.assertLessEqual(of(t, "GPU_STATUS")[0]["t"], now)
        self.assertLessEqual(now, max(d["t"] for d in of(t, "GPU_DROPPED")))
        graph = [k for k in kernels if string(t, k["name"]) == "_Z11graphKernelPf"]
        self.assertEqual(len(graph), 2)
        self.assertTrue(all(k["graph"] == 3 and k["launch"] == 3 and k["correlation"] == 8 for k in graph))
        self.assertIn(0, [k["start"] for k in graph])  # the zero timestamps, as CUPTI gave them
        [rev] = [k for k in kernels if string(t, k["name"]) == "_Z8reversedv"]
        self.assertEqual(rev["start"] - rev["end"], 100000)  # reversed, as CUPTI gave them
        self.assertEqual("_Z8lastKernv" in names, last_kernel)
        self.assertNotIn("_Z10childKernv", names)

        copies = sorted(of(t, "GPU_MEMCPY"), key=lambda m: m["correlation"])
        self.assertEqual(len(copies), 2)
        htod, p2p = copies
        self.assertEqual((MEMCPY_KIND[htod["copy_kind"]], MEMORY_KIND[htod["src_kind"]], MEMORY_KIND[htod["dst_kind"]]),
                         ("HtoD", "pageable", "device"))
        self.assertEqual((htod["bytes_copied"], htod["flags"], htod["correlation"], htod["stream"]),
                         (4 << 20, 0, 11, 7))
        self.assertEqual(htod["end"] - htod["start"], 100000)
        self.assertEqual((MEMCPY_KIND[p2p["copy_kind"]], p2p["src_device"], p2p["dst_device"], p2p["flags"],
                          p2p["bytes_copied"]), ("PtoP", 0, 1, 1, 1 << 20))
        [ms] = of(t, "GPU_MEMSET")
        self.assertEqual((ms["bytes_set"], ms["value"], MEMORY_KIND[ms["memory"]], ms["flags"], ms["correlation"]),
                         (4 << 20, 0, "device", 1, 13))
        [sync] = of(t, "GPU_SYNC")
        self.assertEqual((SYNC_TYPE[sync["type"]], sync["context"], sync["stream_plus_1"], sync["correlation"]),
                         ("stream_synchronize", 1, 8, 14))
        self.assertEqual(sync["end"] - sync["start"], 50000)
        [dev] = of(t, "GPU_DEVICE")
        self.assertEqual((dev["device"], string(t, dev["name"]), dev["cc_major"], dev["cc_minor"], dev["sms"],
                          dev["memory"]), (0, "Fake GPU", 9, 0, 132, 141 << 30))
        [ctx] = of(t, "GPU_CONTEXT")
        self.assertEqual((ctx["context"], ctx["device"]), (1, 0))
        [ov] = of(t, "GPU_OVERHEAD")
        self.assertEqual((ov["kind"], ov["object_kind"], ov["object_id"]), (1 << 16, 2, 4321))
        # CUPTI's drops, and the record of a kind that is not converted (counted as dropped).
        self.assertEqual(sum(d["count"] for d in of(t, "GPU_DROPPED")), 5)
        self.assertEqual(h["records_dropped"], 1)

    def test_records_every_kind_and_flushes_at_exit(self):
        proc = self.run_fake("exit")
        self.assertIn("hooks: runtime=1 driver=1 kernel=1 memcpy=1 memcpy2=1 memset=1 sync=1 device=1 context=1 "
                      "overhead=1 timestamp=1", proc.stdout)
        self.assertIn("periodic flush: yes", proc.stdout)
        self.assertEqual(our_lines(proc.stderr)[:-1], [])  # nothing said but the summary
        t = self.main_trace()
        status = of(t, "GPU_STATUS")
        self.assertEqual([GPU_STATE[s["state"]] for s in status], ["on", "flushed"])
        self.assertEqual((status[0]["result"], status[0]["cupti_version"]), (0, 130001))
        self.assertEqual(string(t, status[0]["message"]), self.fake)
        self.check_api_calls(t)
        self.check_activity(t, last_kernel=True)
        names = [string(t, r["name"]) for r in of(t, "RANGE_PUSH")]
        self.assertEqual(names, ["before", "after"])
        # GPU activity is written by the thread that drains CUPTI's buffers, not a program thread.
        threads = {r["tid"]: string(t, r["name"]) for r in of(t, "THREAD_NAME")}
        kernel_threads = {threads.get(k["tid"]) for k in of(t, "GPU_KERNEL")}
        self.assertIn("trainprof-gpu", kernel_threads)
        # The Chrome export shows it as torch.profiler's traces do: calls on the program's thread,
        # GPU work on a "GPU 0" track per stream, launch -> kernel flows.
        doc = json.loads(self.run_trainprof(["export", "-o", "-", self.out]).stdout)
        events = doc["traceEvents"]
        cats = {}
        for e in events:
            if e["ph"] == "X":
                cats.setdefault(e["cat"], []).append(e)
        self.assertIn("cudaLaunchKernel", {e["name"] for e in cats["cuda_runtime"]})
        self.assertIn("_Z8lastKernv", {e["name"] for e in cats["kernel"]})
        self.assertEqual({e["name"] for e in cats["gpu_memcpy"]},
                         {"Memcpy HtoD (Pageable -> Device)", "Memcpy PtoP (Device -> Device)"})
        self.assertEqual(len(cats["gpu_memset"]), 1)
        gpu_pids = {e["pid"] for e in cats["kernel"]}
        names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertTrue(all(names[p].startswith("GPU 0: Fake GPU (pid ") for p in gpu_pids), names)
        starts = {e["id"]: e for e in events if e["ph"] == "s"}
        finishes = {e["id"]: e for e in events if e["ph"] == "f"}
        self.assertEqual(starts.keys(), finishes.keys())
        # cudaGraphLaunch (correlation 8) -> the graph's kernel with valid times.
        [graph_launch] = [e for e in cats["cuda_runtime"] if e["name"] == "cudaGraphLaunch"]
        [graph_kernel] = [e for e in cats["kernel"] if e["name"] == "_Z11graphKernelPf"]
        self.assertEqual(graph_kernel["args"]["correlation"], 8)
        self.assertIn((graph_launch["ts"], graph_kernel["ts"]),
                      {(starts[i]["ts"], finishes[i]["ts"]) for i in starts})

    def test_mix_mode_is_the_bench_input_it_says(self):
        # scripts/bench's cuda_report input: "mix 2048" = 1024 runtime calls, each with its GPU
        # record: corr % 64 == 0 a cudaStreamSynchronize (16), else % 8 == 0 a cudaMemcpyAsync
        # (112: DtoH when % 16 == 0, 48; HtoD 64), else a cudaLaunchKernel (896) of 16 names in turn.
        self.run_fake("mix", args=["2048"])
        t = self.main_trace()
        self.assertEqual(len(of(t, "CUDA_API_ENTER")), 1024)
        self.assertEqual(len(of(t, "CUDA_API_EXIT")), 1024)
        self.assertEqual(len(of(t, "GPU_KERNEL")), 896)
        self.assertEqual(len(of(t, "GPU_MEMCPY")), 112)
        self.assertEqual(len(of(t, "GPU_SYNC")), 16)
        report = self.run_trainprof(["report", "--format", "json", self.out]).stdout
        r = json.loads(report)
        calls = {row["name"]: row["calls"] for row in r["cuda_api"]}
        self.assertEqual(calls, {"cudaLaunchKernel": 896, "cudaMemcpyAsync": 112, "cudaStreamSynchronize": 16})
        self.assertEqual(sorted(row["instances"] for row in r["gpu_kernels"]), [56] * 16)
        copies = {row["kind"]: row["count"] for row in r["memory_ops"]}
        self.assertEqual(copies, {"memcpy_htod": 64, "memcpy_dtoh": 48})

    def test_the_report_is_the_same_whatever_the_cuda_windows(self):
        # The GPU analyses fed the records in time windows (TRAINPROF_CUDA_WINDOW_RECORDS, model/
        # cuda_window.h) give the report of one window, byte for byte: the mix of the bench input
        # (launches, copies, syncs, 16 kernel names), every kind of record with the exit flush, and
        # two DDP ranks on GPUs 0 and 1 (LOCAL_RANK), whose merged device rows the windows take
        # from each rank's own (stats/gpu_devices.h, DevicesShared).
        base = self.out
        for mode, args in (("mix", ["6000"]), ("exit", []), ("ddp", ["6000"])):
            self.out = os.path.join(base, mode)
            if mode == "ddp":
                for rank in ("0", "1"):
                    self.run_fake("mix", args=args, env_extra={"LOCAL_RANK": rank})
            else:
                self.run_fake(mode, args=args)
            whole = self.run_trainprof(["report", "--format", "json", self.out]).stdout
            if mode == "ddp":
                devices = json.loads(whole)["devices"]
                self.assertEqual([(d["device"], d["processes"], d["kernels"]) for d in devices],
                                 [(0, 1, 2625), (1, 1, 2625)])
            self.assertIn('"kernel_launches"', whole)
            for records in ("1", "97", "1000"):
                env = dict(os.environ, TRAINPROF_CUDA_WINDOW_RECORDS=records)
                windowed = self.run_trainprof(["report", "--format", "json", self.out], env=env).stdout
                self.assertEqual(windowed, whole, "%s, windows of %s record starts" % (mode, records))
        self.out = base

    @unittest.skipIf(SANITIZER, "a sanitizer's allocator sets the peak RSS, and 3M records take minutes there; "
                                "golden_cuda_windows and the windows test above read windows in those builds")
    def test_a_large_trace_is_reported_in_windows_by_default(self):
        # Trace files of 64 MiB or more (report.h, kAutoWindowTraceBytes) are reported with CUDA
        # windows of 100k record starts unless TRAINPROF_CUDA_WINDOW_RECORDS says otherwise: the
        # same report as one window, in a fraction of its memory (the mode shows in the peak RSS:
        # a fraction of it for these 3M records; scripts/bench measures the numbers).
        self.run_fake("mix", args=["3000000"])
        size = sum(os.path.getsize(os.path.join(self.out, f)) for f in self.trace_files())
        self.assertGreaterEqual(size, 64 << 20, "the input must reach the automatic windows' threshold")

        def report(records):  # (JSON, peak RSS in KiB)
            env = dict(self.child_env())
            env.pop("TRAINPROF_CUDA_WINDOW_RECORDS", None)
            if records is not None:
                env["TRAINPROF_CUDA_WINDOW_RECORDS"] = records
            json_out = os.path.join(self.out, "report-%s.out" % records)
            # A Python of its own runs the report, so that its children's peak RSS is the report's.
            measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
                       "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
            proc = subprocess.run([PYTHON, "-c", measure, TRAINPROF, "report", "--format", "json", "-o", json_out,
                                   self.out], env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(json_out) as f:
                return f.read(), int(proc.stdout.split()[-1])

        whole, whole_rss = report("0")
        windowed, windowed_rss = report(None)
        self.assertEqual(windowed, whole)
        self.assertIn('"kernel_launches"', whole)
        self.assertLess(windowed_rss, 0.75 * whole_rss, "windows by default: less memory than one window")

    def test_cuda_profiler_api_capture_range(self):
        # --capture-range=cudaProfilerApi: only the calls from cudaProfilerStart to cudaProfilerStop
        # (both included) are recorded; one CAPTURE on and one off, not one more for the
        # cuProfilerStart the runtime makes inside; NVTX outside the range is not recorded.
        self.run_fake("exit", extra=["--capture-range=cudaProfilerApi"])
        t = self.main_trace()
        enters = of(t, "CUDA_API_ENTER")
        exits = of(t, "CUDA_API_EXIT")
        self.assertEqual(sorted(e["correlation"] for e in enters), [4, 6, 7])
        self.assertEqual(sorted(x["correlation"] for x in exits), [4, 6, 7])
        captures = [(c["on"], c["reason"]) for c in of(t, "CAPTURE")]
        self.assertEqual(captures[-2:], [(1, 1), (0, 1)])
        self.assertTrue(all(c == (0, 0) for c in captures[:-2]), captures)  # the start state: off
        by_corr = {e["correlation"]: e for e in enters}
        on, off = [c for c in of(t, "CAPTURE") if c["reason"] == 1]
        self.assertLessEqual(on["t"], by_corr[4]["t"])
        self.assertGreaterEqual(off["t"], [x for x in exits if x["correlation"] == 7][0]["t"])
        self.assertEqual(of(t, "RANGE_PUSH"), [])  # "before" and "after" lie outside the range

    def test_a_killed_process_keeps_what_the_flush_thread_took(self):
        proc = self.run_fake("kill", expect_status=137)
        self.assertIn("periodic flush: yes", proc.stdout)
        t = self.main_trace()
        self.assertEqual([GPU_STATE[s["state"]] for s in of(t, "GPU_STATUS")], ["on"])  # no exit flush
        self.check_api_calls(t)
        self.check_activity(t, last_kernel=False)

    def test_fork_child_never_touches_the_inherited_cupti(self):
        proc = self.run_fake("fork", follow=True)
        self.assertIn("child: flushed in the child: no", proc.stdout)
        self.assertIn("child exited 0", proc.stdout)
        traces = self.traces()
        self.assertEqual(len(traces), 2)
        parent = self.main_trace()
        self.check_api_calls(parent)
        self.check_activity(parent, last_kernel=True)
        [child] = [t for t in traces if t is not parent and t["header"]["pid"] != parent["header"]["pid"]]
        for tag in ("CUDA_API_ENTER", "GPU_KERNEL", "GPU_STATUS", "GPU_DROPPED", "CAPTURE"):
            self.assertEqual(of(child, tag), [], tag)

    def test_trace_without_cuda(self):
        proc = self.run_fake("init", extra=["--trace=-cuda"])
        [t] = self.traces()
        self.assertEqual(of(t, "GPU_STATUS"), [])
        self.assertEqual(our_lines(proc.stderr)[:-1], [])

    def check_unavailable(self, proc, result, message):
        lines = [l for l in our_lines(proc.stderr) if "CUDA" in l]
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn(message, lines[0])
        [t] = self.traces()
        self.assertEqual(t["errors"], [])
        [status] = of(t, "GPU_STATUS")
        self.assertEqual((GPU_STATE[status["state"]], status["result"]), ("unavailable", result))
        self.assertIn(message, string(t, status["message"]))
        self.assertIn(string(t, status["message"]), lines[0])
        self.assertEqual([string(t, r["name"]) for r in of(t, "RANGE_PUSH")], ["before", "after"])
        self.assertEqual(of(t, "CUDA_API_ENTER"), [])
        return status

    def test_another_subscriber(self):
        proc = self.run_fake("init", {"FAKE_CUPTI_SUBSCRIBE_RESULT": "39"})
        status = self.check_unavailable(proc, 39, "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED "
                                                  "(already subscribed: CUPTI for torch.profiler)")
        self.assertEqual(status["cupti_version"], 130001)
        # A CUPTI without cuptiSubscribe_v2 cannot say who: the line says what it may be.
        self.tearDown()
        self.setUp()
        proc = self.run_fake("init", {"FAKE_CUPTI_SUBSCRIBE_RESULT": "39"},
                             lib=os.path.join(PROGRAMS, "libfake_cupti_v1.so"))
        self.check_unavailable(proc, 39, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another CUPTI client, "
                                         "e.g. torch.profiler or Nsight Systems, is active)")

    def test_cupti_13_2_lets_us_join_another_subscriber(self):
        # From CUPTI 13.2, cuptiSubscribe_v2 may allow multiple subscribers: we ask for it.
        proc = self.run_fake("exit", {"FAKE_CUPTI_SUBSCRIBE_RESULT": "39", "FAKE_CUPTI_VERSION": "130200"})
        self.assertIn("subscribe_v2 params: size=33 allowMultipleSubscribers=1", proc.stdout)
        self.assertEqual(our_lines(proc.stderr)[:-1], [])
        t = self.main_trace()
        status = of(t, "GPU_STATUS")
        self.assertEqual([GPU_STATE[s["state"]] for s in status], ["on", "flushed"])
        self.assertEqual(string(t, status[0]["message"]), self.fake + " (multiple subscribers allowed)")
        self.check_api_calls(t)
        # Before 13.2 the field does not exist: the older structSize, and no request.
        self.tearDown()
        self.setUp()
        proc = self.run_fake("init", {"FAKE_CUPTI_SUBSCRIBE_RESULT": "39", "FAKE_CUPTI_VERSION": "130001"})
        self.assertIn("subscribe_v2 params: size=32 allowMultipleSubscribers=0", proc.stdout)

    def test_insufficient_privileges(self):
        proc = self.run_fake("init", {"FAKE_CUPTI_SUBSCRIBE_RESULT": "35"})
        self.check_unavailable(proc, 35, "cuptiSubscribe: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

    def test_version_mismatch(self):
        for version in ("140000", "17"):
            with self.fresh_subtest(version=version):
                proc = self.run_fake("init", {"FAKE_CUPTI_VERSION": version})
                status = self.check_unavailable(proc, 14, "has CUPTI API version %s" % version)
                self.assertEqual(status["cupti_version"], int(version))


if __name__ == "__main__":
    unittest.main()
