"""Run by tests/e2e/test_kineto_export.py with the modern stack's Python (.venv, HolisticTraceAnalysis):
loads every Kineto trace of a directory with HTA and prints, as JSON, what the test compares:

  {"ranks": [0, 1],
   "temporal": {"<rank>": {"idle_us", "compute_us", "non_compute_us", "kernel_us",
                           "idle_pctg", "compute_pctg", "non_compute_pctg"}},
   "kernel_types": {"COMPUTATION": percent, ...},
   "kernels": {"<rank>": {"<name>": {"sum_us", "count"}}}}

HTA's own definitions (hta/analyzers/breakdown_analysis.py): get_temporal_breakdown, and
get_gpu_kernel_breakdown with num_kernels large enough to list every kernel."""

import json
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def main(trace_dir):
    analysis = TraceAnalysis(trace_dir=trace_dir)
    out = {"ranks": sorted(int(r) for r in analysis.t.traces.keys())}
    temporal = analysis.get_temporal_breakdown(visualize=False)
    out["temporal"] = {
        str(int(row["rank"])): {
            "idle_us": float(row["idle_time(us)"]), "compute_us": float(row["compute_time(us)"]),
            "non_compute_us": float(row["non_compute_time(us)"]), "kernel_us": float(row["kernel_time(us)"]),
            "idle_pctg": float(row["idle_time_pctg"]), "compute_pctg": float(row["compute_time_pctg"]),
            "non_compute_pctg": float(row["non_compute_time_pctg"])}
        for _, row in temporal.iterrows()}
    types, kernels = analysis.get_gpu_kernel_breakdown(visualize=False, num_kernels=100000, duration_ratio=1.0)
    out["kernel_types"] = {row["kernel_type"]: float(row["percentage"]) for _, row in types.iterrows()}
    # Counts: the GPU events of each name in HTA's loaded trace (the breakdown has sum and mean only).
    sym = analysis.t.symbol_table.get_sym_table()
    counts = {}
    for rank, df in analysis.t.traces.items():
        gpu = df[df["stream"].ne(-1)]
        counts[str(int(rank))] = {sym[i]: int(n) for i, n in gpu.groupby("name").size().items()}
    per_rank = {}
    for _, row in kernels.iterrows():
        rank = str(int(row["rank"]))
        per_rank.setdefault(rank, {})[row["name"]] = {"sum_us": float(row["sum (us)"]),
                                                     "count": counts.get(rank, {}).get(row["name"], 0)}
    out["kernels"] = per_rank
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
