"""Holistic Trace Analysis's numbers for Kineto trace files, as JSON on stdout: the reference that
tests/e2e/test_hta_compare.py holds trainprof's report against, and the HTA side of scripts/bench.
Runs in the Python that has HTA (.venv, scripts/modern-stack.txt):

    .venv/bin/python tests/e2e/hta_reference.py [--mode like|default] FILE...

Each file is loaded alone (HTA's TraceAnalysis reads a directory of rank traces: a temporary one
holds a link to the file). --mode like (default): HTA with the switches that remove the two
differences of definition docs/analysis.md lists ("Where trainprof differs from HTA on purpose"):
include_last_profiler_step=True and HTA_DISABLE_NS_ROUNDING=1; --mode default: HTA as it comes.
Per file: rank, kernel count, get_temporal_breakdown, the kernel-type table and the top kernels of
get_gpu_kernel_breakdown(include_memory_kernels=True), get_comm_comp_overlap, and the seconds the
load and get_temporal_breakdown took. Times are HTA's: microseconds.
"""

import argparse
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import time


def number(v):
    v = float(v)
    return None if math.isnan(v) else v


def analyse(path, mode):
    from hta.trace_analysis import TraceAnalysis  # after HTA_DISABLE_NS_ROUNDING is set

    out = {"file": path, "mode": mode}
    tmp = tempfile.mkdtemp(prefix="hta-reference-")
    try:
        os.symlink(os.path.abspath(path), os.path.join(tmp, os.path.basename(path)))
        t0 = time.perf_counter()
        ta = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=(mode == "like"))
        out["load_s"] = time.perf_counter() - t0
        ranks = ta.t.get_ranks()
        out["ranks"] = [int(r) for r in ranks]
        df = ta.t.get_trace(ranks[0])
        sym = ta.t.symbol_table.get_sym_table()
        cats = df["cat"].map(lambda c: sym[c])
        out["kernels"] = int((cats == "kernel").sum())
        try:
            t0 = time.perf_counter()
            tb = ta.get_temporal_breakdown(visualize=False)
            out["temporal_s"] = time.perf_counter() - t0
            row = tb.iloc[0]
            out["temporal"] = {k: number(row[k]) for k in ("idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                                                           "kernel_time(us)", "idle_time_pctg", "compute_time_pctg",
                                                           "non_compute_time_pctg")}
        except IndexError:  # no GPU event: HTA cannot take the first and last kernel
            out["temporal"] = None
            return out
        kinds, top = ta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        out["kernel_types"] = {str(r["kernel_type"]): number(r["sum"]) for _, r in kinds.iterrows()}
        out["top_kernels"] = [{"name": str(r["name"]), "kernel_type": str(r["kernel_type"]), "sum_us": number(r["sum (us)"])}
                              for _, r in top.iterrows() if r["name"] != "others"]
        overlap = ta.get_comm_comp_overlap(visualize=False)
        out["comm_comp_overlap_pctg"] = number(overlap.iloc[0]["comp_comm_overlap_pctg"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("like", "default"), default="like")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.mode == "like":
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    else:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    logging.disable(logging.WARNING)  # HTA logs every parse step at WARNING
    import warnings
    warnings.simplefilter("ignore")
    json.dump([analyse(f, args.mode) for f in args.files], sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
