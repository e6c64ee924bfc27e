"""HTA's GPU idle time by kind and CUDA kernel launch statistics of one Kineto trace, as JSON on
stdout: run by test_hta_idle_launch.py with the .venv's Python (HolisticTraceAnalysis, pandas).

Usage: hta_idle_launch_ref.py [--hta-defaults] TRACE_DIR...   (JSON: {TRACE_DIR: result})

Without --hta-defaults, HTA sees the same events at the same times as trainprof (docs/analysis.md,
"GPU idle time by kind"): its two loading choices that are not definitions are switched off (the
rounding of nanosecond timestamps to whole microseconds, HTA_DISABLE_NS_ROUNDING=1, and the dropping
of the last ProfilerStep, Trace._filter_irrelevant_gpu_kernels), and the traces' "ts" are shifted
by a whole number of seconds, exactly on their decimal text, before HTA reads them: a timestamp of
1712195495505582.988 µs (µs since the epoch, with ns digits) is beyond float64's precision (0.25 µs
there), so HTA's floats would move each one by up to 0.125 µs. Times out are in ns."""

import decimal
import glob
import gzip
import json
import logging
import os
import re
import sys
import tempfile

TS = re.compile(r'("ts"\s*:\s*)(-?[0-9][0-9.eE+-]*)')


def shifted_copy(trace_dir):
    """A directory with the traces of trace_dir, their "ts" less a whole number of seconds (exact)."""
    out = tempfile.mkdtemp(prefix="hta_shifted_", dir=os.path.dirname(os.path.abspath(trace_dir)))
    for path in glob.glob(os.path.join(trace_dir, "*.json*")):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
        stamps = [decimal.Decimal(m.group(2)) for m in TS.finditer(text)]
        base = (min(stamps) // 1000000) * 1000000 if stamps else 0
        text = TS.sub(lambda m: m.group(1) + str(decimal.Decimal(m.group(2)) - base), text)
        with opener(os.path.join(out, os.path.basename(path)), "wt", encoding="utf-8") as f:
            f.write(text)
    return out


def main():
    defaults = "--hta-defaults" in sys.argv[1:]
    dirs = [a for a in sys.argv[1:] if a != "--hta-defaults"]
    if not defaults:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    logging.disable(logging.WARNING)
    from hta.common.trace import Trace
    from hta.trace_analysis import TraceAnalysis

    if not defaults:
        Trace._filter_irrelevant_gpu_kernels = lambda self, *a, **k: None
    json.dump({d: analyse(TraceAnalysis(trace_dir=d if defaults else shifted_copy(d))) for d in dirs}, sys.stdout,
              indent=1, sort_keys=True)


def analyse(t):
    import numpy as np

    rank = t.t.get_ranks()[0]
    us = 1000.0

    idle, _ = t.get_idle_time_breakdown(ranks=[rank], visualize=False)
    streams = {}
    for row in idle.itertuples():
        s = streams.setdefault(str(int(row.stream)), {"host_wait": 0.0, "kernel_wait": 0.0, "other": 0.0})
        s[row.idle_category] = float(row.idle_time) * us

    events = t.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
    df = t.t.get_trace(rank)
    names = t.t.symbol_table.sym_table
    gpu = df[df["stream"].ne(-1)][["correlation", "name"]].drop_duplicates("correlation")
    joined = events.merge(gpu, on="correlation", how="left")

    def display(sym):
        n = names[int(sym)]
        m = re.match(r"Memcpy (\w+) ", n)
        if m:
            return "memcpy " + m.group(1)
        return "memset" if n.startswith("Memset") else n

    launches = {}
    for name, g in joined.groupby(joined["name"].map(display)):
        cpu = g["cpu_duration"].to_numpy(dtype=float) * us
        gdur = g["gpu_duration"].to_numpy(dtype=float) * us
        delay = g["launch_delay"].to_numpy(dtype=float) * us
        launches[name] = {
            "count": int(len(g)),
            "cpu_launch_mean_ns": float(cpu.mean()),
            "cpu_launch_median_ns": float(np.median(cpu)),
            "launch_delay_mean_ns": float(delay.mean()),
            "launch_delay_median_ns": float(np.median(delay)),
            "launch_delay_p95_ns": float(np.percentile(delay, 95)),
            "shorter_than_launch": int(((cpu <= 50 * us) & (gdur < cpu)).sum()),
            "long_launches": int((cpu > 50 * us).sum()),
            "long_delays": int((delay > 100 * us).sum()),
        }
    return {"rank": int(rank), "streams": streams, "launches": launches}


if __name__ == "__main__":
    main()
