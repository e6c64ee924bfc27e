#!/usr/bin/env python3
"""Checks the traces scripts/gpu_check recorded on a GPU machine (standard library only).

    gpu_check.py full DIR STDOUT_FILE       tp_cuda_workload full: every kind of record, linked, timed
    gpu_check.py killed DIR STDOUT_FILE     tp_cuda_workload sleep, SIGKILLed: the periodic flush's work is there
    gpu_check.py fork DIR STDOUT_FILE       tp_cuda_workload fork: the child records no CUDA
    gpu_check.py nocuda DIR                 --trace=-cuda: no CUDA records
    gpu_check.py report REPORT_JSON STDOUT_FILE   what `trainprof report --format json` says (informational)
    gpu_check.py planted CASE REPORT_JSON   tp_gpu_planted CASE (sync, launch, busy): the GPU verdict names it
    gpu_check.py torch_compare REPORT_JSON TORCH_JSON   PyTorch steps: kernels as torch.profiler counts them

Prints one line per check ("PASS ...", "FAIL ...", "INFO ...") and exits 1 if any check failed.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from trace_decode import GPU_STATE, MEMCPY_KIND, MEMORY_KIND, SYNC_TYPE, of, read_trace, string  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures += 1
    return ok


def info(what):
    print("INFO " + what)


def traces(d, program="tp_cuda_workload"):
    """The traces of `program`'s process images in d (not those of `env` or shells around it)."""
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".trace"):
            try:
                t = read_trace(os.path.join(d, f))
            except Exception as e:  # noqa: BLE001 - report any decoder problem as a failure
                check(False, "%s decodes: %s" % (f, e))
                continue
            if program is None or os.path.basename(t["header"]["meta"].get("executable", "")) == program:
                out.append(t)
    return out


def made(stdout_file):
    """The counts the workload printed ("made: scale=10 offset=10 ...")."""
    with open(stdout_file) as f:
        text = f.read()
    m = re.findall(r"^made: (.*)$", text, re.M)
    if not m:
        check(False, "the workload printed its counts (stdout: %r)" % text[-500:])
        return None, text
    return {k: int(v) for k, v in (kv.split("=") for kv in m[-1].split())}, text


def cuda_trace(ts):
    with_gpu = [t for t in ts if of(t, "GPU_STATUS")]
    check(len(with_gpu) == 1, "one process recorded GPU_STATUS (got %d of %d traces)" % (len(with_gpu), len(ts)))
    return with_gpu[0] if with_gpu else None


def check_status(t, flushed):
    states = [GPU_STATE.get(s["state"], s["state"]) for s in of(t, "GPU_STATUS")]
    msgs = [string(t, s["message"]) for s in of(t, "GPU_STATUS")]
    s0 = of(t, "GPU_STATUS")[0]
    info("GPU_STATUS %s; CUPTI API version %d, driver %d; messages %s" % (states, s0["cupti_version"],
                                                                         s0["driver_version"], msgs))
    check(states[:1] == ["on"], "CUPTI was set up (GPU_STATUS on)")
    check(s0["driver_version"] > 0, "the CUDA driver version is known (%d)" % s0["driver_version"])
    if flushed:
        check(states[-1:] == ["flushed"], "flushed at exit (%s)" % states)
    else:
        check("flushed" not in states, "no exit flush in a killed process")


def kernels_by(t, word):
    return [k for k in of(t, "GPU_KERNEL") if word in string(t, k["name"])]


def check_activity(t, counts, extra_rounds=0):
    """The GPU work of tp_cuda_workload full, against what it says it made."""
    h = t["header"]
    n_scale = counts["scale"] + counts["graph_scale"] + 1 + extra_rounds  # + the one of `basic`
    n_offset = counts["offset"] + extra_rounds
    scale = kernels_by(t, "scale")
    offset = kernels_by(t, "offset")
    check(len(scale) == n_scale, "kernel scale: %d recorded, %d made" % (len(scale), n_scale))
    check(len(offset) == n_offset, "kernel offset: %d recorded, %d made" % (len(offset), n_offset))
    graph = [k for k in scale if k["graph"] != 0]
    check(len(graph) == counts["graph_scale"] and all(k["launch"] == 3 for k in graph),
          "graph kernels: %d with a graph id and launch=graph (made %d)" % (len(graph), counts["graph_scale"]))
    for k in scale[:1]:
        info("kernel %s grid (%d,%d,%d) block (%d,%d,%d) regs %d device %d context %d stream %d" % (
            string(t, k["name"]), k["grid_x"], k["grid_y"], k["grid_z"], k["block_x"], k["block_y"],
            k["block_z"], k["registers"], k["device"], k["context"], k["stream"]))
    check(all(k["block_x"] == 256 for k in scale + offset), "kernels have block 256")

    copies = of(t, "GPU_MEMCPY")
    by_kind = {}
    for m in copies:
        key = (MEMCPY_KIND.get(m["copy_kind"]), MEMORY_KIND.get(m["src_kind"]), MEMORY_KIND.get(m["dst_kind"]))
        by_kind.setdefault(key, []).append(m)
    info("memcpy kinds: %s" % {"%s %s->%s" % k: len(v) for k, v in by_kind.items()})
    r = extra_rounds
    check(len(by_kind.get(("HtoD", "pageable", "device"), [])) == counts["htod_pageable"] + r,
          "HtoD from pageable memory: %d (made %d)" % (len(by_kind.get(("HtoD", "pageable", "device"), [])),
                                                      counts["htod_pageable"] + r))
    check(len(by_kind.get(("HtoD", "pinned", "device"), [])) == counts["htod_pinned"] + r,
          "HtoD from pinned memory: %d (made %d)" % (len(by_kind.get(("HtoD", "pinned", "device"), [])),
                                                    counts["htod_pinned"] + r))
    check(len(by_kind.get(("DtoH", "device", "pinned"), [])) == counts["dtoh"] + r,
          "DtoH to pinned memory: %d (made %d)" % (len(by_kind.get(("DtoH", "device", "pinned"), [])),
                                                  counts["dtoh"] + r))
    htod_bytes = sum(m["bytes_copied"] for m in copies if MEMCPY_KIND.get(m["copy_kind"]) == "HtoD")
    want = counts["bytes_htod"] + r * 2 * (4 << 20)  # an extra round copies 2 x 4 MiB HtoD
    check(htod_bytes == want, "HtoD bytes %d (made %d)" % (htod_bytes, want))
    check(all(m["flags"] & 1 for m in copies if MEMORY_KIND.get(m["src_kind"]) == "pinned"),
          "copies from pinned memory are async")
    sets = of(t, "GPU_MEMSET")
    check(len(sets) == counts["memset"] + r and all(s["bytes_set"] == 4 << 20 for s in sets),
          "memset: %d of 4 MiB (made %d)" % (len(sets), counts["memset"] + r))
    syncs = of(t, "GPU_SYNC")
    types = {}
    for s in syncs:
        types[SYNC_TYPE.get(s["type"], s["type"])] = types.get(SYNC_TYPE.get(s["type"], s["type"]), 0) + 1
    info("synchronisations: %s" % types)
    check(types.get("stream_synchronize", 0) >= counts["stream_syncs"] + r,
          "cudaStreamSynchronize: %d recorded, %d made" % (types.get("stream_synchronize", 0),
                                                           counts["stream_syncs"] + r))
    devices = of(t, "GPU_DEVICE")
    check(len(devices) >= 1, "a GPU_DEVICE record")
    for d in devices:
        info("device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB" % (
            d["device"], string(t, d["name"]), d["cc_major"], d["cc_minor"], d["sms"], d["memory"] / 2 ** 30))
    check(len(of(t, "GPU_CONTEXT")) >= 1, "a GPU_CONTEXT record")
    dropped = sum(d["count"] for d in of(t, "GPU_DROPPED"))
    check(dropped == 0, "CUPTI dropped no records (%d)" % dropped)
    check(h["records_dropped"] == 0, "no records dropped by the writer (%d)" % h["records_dropped"])

    # Every GPU record links to a recorded API call, and starts after it on one clock.
    enters = {e["correlation"]: e for e in of(t, "CUDA_API_ENTER")}
    gpu = of(t, "GPU_KERNEL") + copies + sets
    unlinked = [g for g in gpu if g["correlation"] not in enters]
    check(not unlinked, "every kernel/copy/memset links to a recorded API call (%d of %d do not; correlations %s)" % (
        len(unlinked), len(gpu), sorted({g["correlation"] for g in unlinked})[:10]))
    launch_names = sorted({string(t, enters[k["correlation"]]["name"]) for k in of(t, "GPU_KERNEL")
                           if k["correlation"] in enters})
    info("kernels were launched by: %s" % launch_names)
    early = [g["start"] - enters[g["correlation"]]["t"] for g in gpu if g["correlation"] in enters]
    worst = min(early) if early else 0
    check(worst > -50000, "GPU work starts after its API call (worst %+.1f us)" % (worst / 1000))
    bad_times = [g for g in gpu if not (0 < g["start"] <= g["end"])]
    check(not bad_times, "GPU records have start <= end, non-zero (%d bad)" % len(bad_times))
    start = h["start_monotonic_ns"]
    outside = [g for g in gpu if g["start"] < start]
    check(not outside, "GPU work within the process's life (%d before its start)" % len(outside))
    busy = sum(k["end"] - k["start"] for k in of(t, "GPU_KERNEL"))
    info("kernel time %.3f ms over %d kernels" % (busy / 1e6, len(of(t, "GPU_KERNEL"))))

    # API calls: enter/exit pairs, driver calls only outside runtime calls, cudaProfilerStart/Stop.
    exits = {x["correlation"] for x in of(t, "CUDA_API_EXIT")}
    open_calls = [string(t, e["name"]) for c, e in enters.items() if c not in exits]
    check(not open_calls, "every API call has its exit (%s)" % open_calls[:5])
    names = {}
    for e in of(t, "CUDA_API_ENTER"):
        key = ("rt " if e["api"] == 1 else "drv ") + string(t, e["name"])
        names[key] = names.get(key, 0) + 1
    info("API calls: %s" % dict(sorted(names.items(), key=lambda kv: -kv[1])[:25]))
    # The workload calls the runtime only: a driver launch or copy in the trace would be one made
    # inside a runtime call, which must not be recorded separately.
    driver = [n for n in names if n.startswith("drv cuMemcpy") or n.startswith("drv cuLaunch")]
    check(not driver, "no driver launch/copy recorded besides the runtime's (%s)" % driver)
    caps = [(c["on"], c["reason"]) for c in of(t, "CAPTURE")]
    check(caps == [(1, 1), (0, 1)], "cudaProfilerStart/Stop: CAPTURE on, off (%s)" % caps)


def cmd_full(d, stdout_file):
    counts, _ = made(stdout_file)
    ts = traces(d)
    t = cuda_trace(ts)
    if t is None or counts is None:
        return
    check(t["errors"] == [], "trace decodes without errors %s" % t["errors"][:3])
    check_status(t, flushed=True)
    check_activity(t, counts)


def cmd_killed(d, stdout_file):
    counts, text = made(stdout_file)
    check("slept-ready" in text, "the workload reached its sleep before the kill")
    t = cuda_trace(traces(d))
    if t is None or counts is None:
        return
    check_status(t, flushed=False)
    check_activity(t, counts)


def cmd_fork(d, stdout_file):
    counts, text = made(stdout_file)
    check("child exited 0" in text and "parent: one more round" in text, "fork: child exited 0, parent went on")
    ts = traces(d)
    check(len(ts) == 2, "two traces (parent and forked child): %d" % len(ts))
    t = cuda_trace(ts)
    if t is None or counts is None:
        return
    check_status(t, flushed=True)
    check_activity(t, counts, extra_rounds=1)
    for c in ts:
        if c is t:
            continue
        n = sum(len(of(c, tag)) for tag in ("CUDA_API_ENTER", "GPU_KERNEL", "GPU_STATUS", "GPU_MEMCPY"))
        check(n == 0, "the forked child recorded no CUDA (%d records)" % n)


def cmd_nocuda(d):
    ts = traces(d, program=None)
    n = sum(len(of(t, tag)) for t in ts for tag in ("CUDA_API_ENTER", "GPU_KERNEL", "GPU_STATUS"))
    check(ts and n == 0, "--trace=-cuda: no CUDA records (%d)" % n)


def cmd_report(report_file, stdout_file):
    try:
        with open(report_file) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        info("trainprof report --format json gave no JSON (%s): the collector may not read CUDA records yet" % e)
        return
    gpu = rep.get("gpu")
    if not isinstance(gpu, dict) or not gpu.get("recorded"):
        info("the report does not show GPU activity yet (gpu = %r): collector support is pending, "
             "not a recording problem" % (gpu,))
        return
    info("report gpu section: %s" % json.dumps(gpu)[:2000])
    counts, _ = made(stdout_file)
    text = json.dumps(rep)
    check("scale" in text and "offset" in text, "the report names both kernels")
    for key in ("gpu_kernels", "kernels"):
        rows = rep.get(key) or gpu.get(key)
        if isinstance(rows, list) and counts:
            calls = {r.get("name", ""): r.get("calls", r.get("count")) for r in rows if isinstance(r, dict)}
            info("report %s: %s" % (key, calls))


def cmd_planted(case, report_file):
    """The bottleneck verdict of tests/programs/gpu_planted.cu: each planted GPU bottleneck named
    with its numbers (docs/analysis.md, "GPU idle time")."""
    with open(report_file) as f:
        rep = json.load(f)
    procs = (rep.get("bottleneck") or {}).get("processes") or []
    if not check(len(procs) == 1, "planted %s: one training process in the bottleneck section" % case):
        return
    gpu = procs[0].get("gpu") or {}
    if not check(gpu.get("recorded") is True, "planted %s: GPU activity recorded (%s)" % (case, gpu.get("why_not"))):
        return
    info("planted %s: busy %.1f%%, idle %.1f%%, cause %s, idle split %s, sync %s, launch %s" % (
        case, gpu.get("busy_percent", 0), gpu.get("idle_percent", 0), gpu.get("cause"), gpu.get("idle"),
        gpu.get("sync"), gpu.get("launch")))
    if case == "sync":
        # 2 ms of kernels, then .item() (DtoH 4 B + cudaStreamSynchronize) and 3 ms of host work.
        check(gpu.get("idle_percent", 0) > 30, "planted sync: GPU idle > 30%% of the step (%.1f%%)" % gpu.get("idle_percent", 0))
        sync = gpu.get("sync") or {}
        check(gpu.get("cause") in ("sync", "other"), "planted sync: the idle time is not data wait or launch (%s)" % gpu.get("cause"))
        check(sync.get("call", "").startswith(("cudaStreamSynchronize", "cudaMemcpy")),
              "planted sync: the synchronising call is named (%s)" % sync.get("call"))
        check(abs(sync.get("calls_per_step", 0) - 1) < 0.5, "planted sync: called once per step (%s)" % sync.get("calls_per_step"))
        check(sync.get("after_dtoh_copy") is True, "planted sync: follows a DtoH copy, as .item()")
    elif case == "launch":
        launch = gpu.get("launch") or {}
        check(gpu.get("cause") == "launch", "planted launch: the idle time is in launch calls (%s)" % gpu.get("cause"))
        check(launch.get("launch_bound") is True, "planted launch: launch-bound")
        check(launch.get("kernels_per_step", 0) >= 1900, "planted launch: ~2000 kernels per step (%s)" % launch.get("kernels_per_step"))
    else:
        check(gpu.get("gpu_bound") is True, "planted busy: GPU-bound (idle %.1f%%)" % gpu.get("idle_percent", 0))


def cmd_torch_compare(report_file, torch_file):
    """trainprof's kernels (capture range = the steps torch.profiler profiled in another run):
    same count, total GPU time within 2%."""
    with open(report_file) as f:
        rep = json.load(f)
    with open(torch_file) as f:
        ref = json.load(f)
    rows = rep.get("gpu_kernels") or []
    count = sum(r.get("instances", 0) for r in rows)
    total = sum(r.get("total_ns", 0) for r in rows)
    info("kernels: trainprof %d (%.3f ms), torch.profiler %d (%.3f ms)" % (count, total / 1e6, ref["kernels"],
                                                                          ref["kernel_ns"] / 1e6))
    check(count == ref["kernels"], "PyTorch steps: same kernel count as torch.profiler (%d vs %d)" % (count, ref["kernels"]))
    rel = abs(total - ref["kernel_ns"]) / max(ref["kernel_ns"], 1)
    check(rel <= 0.02, "PyTorch steps: total kernel time within 2%% of torch.profiler's (%.2f%%)" % (100 * rel))


COMMANDS = {"full": cmd_full, "killed": cmd_killed, "fork": cmd_fork, "nocuda": cmd_nocuda, "report": cmd_report,
            "torch_compare": cmd_torch_compare, "planted": cmd_planted}

if __name__ == "__main__":
    command = COMMANDS.get(sys.argv[1]) if len(sys.argv) >= 3 else None
    if command is None:
        print(__doc__)
        sys.exit(2)
    command(*sys.argv[2:2 + command.__code__.co_argcount])
    sys.exit(1 if failures else 0)
