"""Reading torch.profiler (Kineto) JSON traces (docs/kineto.md, "Reading"): the three real GPU
traces of ../shared/data/kineto (HTA's public test data), checked against what Python's json module
finds in the same files; a CPU trace recorded here with PyTorch 2.x's profiler (.venv; skipped
without it); Kineto and trainprof traces in one report; damaged files."""

import collections
import gzip
import json
import os
import shutil
import subprocess
import unittest
from decimal import Decimal

from common import MODERN_PYTHON, NO_VENV, SOURCE_DIR, TraceTest

SHARED = os.environ.get("TRAINPROF_KINETO_DATA",
                        os.path.normpath(os.path.join(SOURCE_DIR, "..", "..", "shared", "data", "kineto")))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/data/kineto"
TRACES = ("alexnet_rank0", "ns_resolution_rank0", "nccl_rank0_of2")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)


def ns(us):
    return int(Decimal(us) * 1000)


def truth(path):
    """What the file holds, from the json module: kernel count and totals by name, calls, ranks."""
    d = load(path)
    ev = d["traceEvents"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    totals = collections.Counter()
    for e in kernels:
        totals[e["name"]] += ns(e["dur"])
    return {
        "kernels": len(kernels),
        "totals": totals,
        "devices": sorted({e["args"]["device"] for e in kernels}),
        "memcpys": sum(e.get("cat") == "gpu_memcpy" for e in ev),
        "memsets": sum(e.get("cat") == "gpu_memset" for e in ev),
        "calls": sum(e.get("cat") in ("cuda_runtime", "cuda_driver") for e in ev),
        "rank": d.get("distributedInfo", {}).get("rank"),
        "world_size": d.get("distributedInfo", {}).get("world_size"),
        "steps": sorted(e["name"] for e in ev if e.get("cat") == "user_annotation"
                        and e["name"].startswith("ProfilerStep#")),
        "pid": next(e["pid"] for e in ev if e.get("cat") == "cpu_op"),
        "device_names": {p["id"]: p["name"] for p in d.get("deviceProperties", [])},
    }


class SharedTracesTest(TraceTest):
    def setUp(self):
        if not os.path.isdir(SHARED):
            self.skipTest("no shared Kineto traces at " + SHARED)
        super().setUp()

    def test_each_trace_as_the_json_module_reads_it(self):
        expected_kernels = {"alexnet_rank0": 79, "ns_resolution_rank0": 4350, "nccl_rank0_of2": 2700}
        expected_steps = {"alexnet_rank0": 0, "ns_resolution_rank0": 5, "nccl_rank0_of2": 3}
        for name in TRACES:
            with self.subTest(trace=name):
                path = os.path.join(SHARED, name + ".json.gz")
                t = truth(path)
                rep = self.report(path, extra=["--top", "0", "--full-names"])
                self.assertEqual(rep["files"][0]["format"], "kineto")
                self.assertEqual(rep["files"][0]["errors"], [])
                self.assertEqual(len(rep["processes"]), 1)
                p = rep["processes"][0]
                self.assertEqual(p["pid"], t["pid"])
                self.assertEqual(p["rank"], t["rank"])
                self.assertEqual(p["world_size"], t["world_size"])
                kernels = {k["mangled"]: k for k in rep["gpu_kernels"]}
                self.assertEqual(t["kernels"], expected_kernels[name])
                self.assertEqual(sum(k["instances"] for k in kernels.values()), t["kernels"])
                self.assertEqual(len(kernels), len(t["totals"]))
                for kname, total in t["totals"].items():
                    self.assertEqual(kernels[kname]["total_ns"], total, kname)
                devices = rep["devices"]
                self.assertEqual([d["device"] for d in devices], t["devices"])
                self.assertEqual(devices[0]["name"], t["device_names"][t["devices"][0]])
                self.assertEqual(sum(c["calls"] for c in rep["cuda_api"]), t["calls"])
                mem = {m["kind"]: m for m in rep["memory_ops"]}
                self.assertEqual(sum(m["count"] for o, m in mem.items() if o.startswith("memcpy")), t["memcpys"])
                self.assertEqual(mem.get("memset", {"count": 0})["count"], t["memsets"])
                self.assertEqual(len(t["steps"]), expected_steps[name])
                procs = rep["bottleneck"]["processes"]
                if t["steps"]:
                    self.assertEqual(len(procs), 1)
                    b = procs[0]
                    self.assertEqual(b["steps_found_by"], "profiler_step")
                    self.assertEqual(b["steps"] + b["eval_steps"], len(t["steps"]))
                else:
                    self.assertEqual(procs, [])

    def test_exact_nanoseconds_of_a_trace_with_decimals(self):
        # ns_resolution's ts are µs with three decimals at 1.7e15: a double cannot hold them to the ns.
        path = os.path.join(SHARED, "ns_resolution_rank0.json.gz")
        d = load(path)
        steps = sorted((e for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        rep = self.report(path, extra=["--top", "0", "--no-group-names"])
        rows = {r["name"]: r for r in rep["nvtx_ranges"]}
        for e in steps:
            self.assertEqual(rows["trainprof:" + e["name"]]["total_ns"], ns(e["dur"]))
        b = rep["bottleneck"]["processes"][0]
        self.assertEqual(b["steps_found_by"], "profiler_step")

    def test_directory_of_tensorboard_trace_handler_files_with_a_trainprof_trace(self):
        # tensorboard_trace_handler's names: the host comes from the name; ranks from distributedInfo.
        shutil.copy(os.path.join(SHARED, "nccl_rank0_of2.json.gz"),
                    os.path.join(self.out, "node-a_2910249.1716398122000.pt.trace.json.gz"))
        with gzip.open(os.path.join(SHARED, "alexnet_rank0.json.gz")) as f:
            alexnet = f.read()
        with open(os.path.join(self.out, "node-b_2869224.1695835542000.pt.trace.json"), "wb") as f:
            f.write(alexnet)
        with open(os.path.join(self.out, "unrelated.json"), "w") as f:  # not a trace name: not searched
            f.write("{}")
        self.profile(["/bin/sh", "-c", "true"], follow=False)  # a trainprof trace beside them
        rep = self.report(self.out)
        formats = sorted(f["format"] for f in rep["files"])
        self.assertEqual(formats, ["kineto", "kineto", "trainprof"])
        hosts = {p["pid"]: p["host"] for p in rep["processes"]}
        self.assertEqual(hosts[2910249], "node-a")
        self.assertEqual(hosts[2869224], "node-b")
        self.assertEqual(len(rep["processes"]), 3)

    def test_damaged_files_are_named_and_the_rest_reported(self):
        with open(os.path.join(SHARED, "ns_resolution_rank0.json.gz"), "rb") as f:
            gz = f.read()
        cut = os.path.join(self.out, "cut.json.gz")
        with open(cut, "wb") as f:
            f.write(gz[: len(gz) // 2])
        bogus = os.path.join(self.out, "config.json")
        with open(bogus, "w") as f:
            json.dump({"lr": 0.1}, f)
        good = os.path.join(SHARED, "alexnet_rank0.json.gz")
        proc = self.run_trainprof(["report", "--format", "json", cut, bogus, good])
        rep = json.loads(proc.stdout)
        files = {os.path.basename(f["path"]): f for f in rep["files"]}
        self.assertTrue(files["cut.json.gz"]["truncated"])
        self.assertTrue(files["cut.json.gz"]["usable"])
        self.assertIn("truncated gzip", files["cut.json.gz"]["errors"][0])
        self.assertFalse(files["config.json"]["usable"])
        self.assertEqual(files["config.json"]["errors"],
                         ["not a Kineto trace: a JSON object without a traceEvents array"])
        self.assertIn("cut.json.gz: ", proc.stderr)
        self.assertIn("config.json: ", proc.stderr)
        kernels = sum(k["instances"] for k in rep["gpu_kernels"])
        self.assertGreater(kernels, 79 + 500)  # alexnet's all, and those of the half of ns_resolution read
        self.assertLess(kernels, 79 + 4350)

    def test_gpu_ops_launched_before_the_capture_are_counted_and_said(self):
        # torch.profiler started after some launches: their cuda_runtime events are not in the
        # trace, their kernels are. Made here from a real trace by dropping the launches of its
        # first 5 GPU ops; trainprof counts them (HTA's loader leaves them out) and says so.
        with gzip.open(os.path.join(SHARED, "nccl_rank0_of2.json.gz"), "rb") as f:
            d = json.loads(f.read())  # floats: written back as numbers (sub-µs digits may round)
        ev = d["traceEvents"]
        gpu = sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda e: e["ts"])
        dropped = {e["args"]["correlation"] for e in gpu[:5]}
        d["traceEvents"] = [e for e in ev if not (e.get("cat") in ("cuda_runtime", "cuda_driver")
                                                  and e.get("args", {}).get("correlation") in dropped)]
        # The ops that now have no call, by the json module (one correlation may hold several ops).
        calls = {e.get("args", {}).get("correlation") for e in d["traceEvents"]
                 if e.get("cat") in ("cuda_runtime", "cuda_driver")}
        missing = [e for e in gpu if e["args"].get("correlation") not in calls]
        self.assertGreaterEqual(len(missing), 5)
        path = os.path.join(self.out, "late_start.json")
        with open(path, "w") as f:
            json.dump(d, f)
        proc = self.run_trainprof(["report", "--format", "json", path])
        rep = json.loads(proc.stdout)
        self.assertEqual(rep["stats"]["gpu_ops_without_launch"], len(missing))
        total_ns = sum(e["dur"] for e in missing)
        said = [w for w in rep["warnings"] if "launching CUDA call is not in the trace" in w]
        self.assertEqual(len(said), 1, rep["warnings"])
        self.assertIn("%d GPU ops (" % len(missing), said[0])
        # The kernel table still counts them: every kernel of the file is there.
        self.assertEqual(sum(k["instances"] for k in rep["gpu_kernels"]),
                         sum(e.get("cat") == "kernel" for e in d["traceEvents"]))
        self.assertGreater(total_ns, 0)
        # The untouched trace has none.
        clean = json.loads(self.run_trainprof(["report", "--format", "json",
                                               os.path.join(SHARED, "nccl_rank0_of2.json.gz")]).stdout)
        self.assertEqual(clean["stats"]["gpu_ops_without_launch"], 0)


RECORD = r"""
import sys, torch
from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 32), torch.randint(0, 4, (64,))),
                                   batch_size=8)
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
             on_trace_ready=tensorboard_trace_handler(sys.argv[1], worker_name="cpuhost_4242", use_gzip=True)) as prof:
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        prof.step()
"""


class RecordedCpuTraceTest(TraceTest):
    def setUp(self):
        if not os.access(MODERN_PYTHON, os.X_OK):
            self.skipTest(NO_VENV % MODERN_PYTHON)
        super().setUp()

    def test_torch_profiler_cpu_trace(self):
        log = os.path.join(self.out, "log")
        subprocess.run([MODERN_PYTHON, "-c", RECORD, log], check=True, timeout=300, capture_output=True)
        names = os.listdir(log)
        self.assertEqual(len(names), 1, names)
        self.assertTrue(names[0].startswith("cpuhost_4242.") and names[0].endswith(".pt.trace.json.gz"), names)
        d = load(os.path.join(log, names[0]))
        ev = d["traceEvents"]
        steps = sorted(e["name"] for e in ev if e.get("name", "").startswith("ProfilerStep#"))
        self.assertEqual(len(steps), 3)
        ops = [e for e in ev if e.get("cat") == "cpu_op"]
        rep = self.report(log, extra=["--top", "0"])
        self.assertEqual(rep["files"][0]["format"], "kineto")
        self.assertEqual(rep["files"][0]["errors"], [])
        p = rep["processes"][0]
        self.assertEqual(p["host"], "cpuhost")
        rows = {r["name"]: r for r in rep["nvtx_ranges"]}
        waits = [e for e in ev if e.get("name", "").startswith("enumerate(DataLoader)#")]
        self.assertEqual(rows["trainprof:Optimizer.step#SGD.step"]["calls"],
                         sum(e["name"] == "Optimizer.step#SGD.step" for e in ev if e.get("cat") == "user_annotation"))
        if waits:
            self.assertEqual(sum(r["calls"] for n, r in rows.items() if n.startswith("trainprof:enumerate(DataLoader)#")),
                             len(waits))
        b = rep["bottleneck"]["processes"][0]
        self.assertEqual(b["steps_found_by"], "profiler_step")
        self.assertEqual(b["steps"] + b["eval_steps"], 3)
        self.assertGreater(len(ops), 50)
        if "operators" in rep:  # the operator table (host-ops)
            self.assertEqual(sum(o["calls"] for o in rep["operators"]), len(ops))


if __name__ == "__main__":
    unittest.main()
