// The operator table (HostOpKind::kOperator: Kineto `cpu_op`, aten operators) and the Python
// function table (kPythonFunction: `python_function`, with_stack=True) of imported torch.profiler
// traces, computed as torch.profiler's `key_averages()` computes them
// (torch/autograd/profiler_util.py: EventList._build_tree, FunctionEvent.self_cpu_time_total,
// FunctionEventAvg.add):
//
//   tree        per thread of an image, over both kinds together (torch builds one tree over every
//               CPU event): events sorted by (begin, -end), a stack of open parents; an event is a
//               child of the innermost open event that contains it ([b, e) inside [pb, pe], b < pe);
//               one that overlaps its parent only partly closes that parent (_populate_cpu_children)
//   dedup       an event whose parent has the same name and no other child is dropped, its children
//               going to the parent (_remove_dup_nodes, repeated until nothing changes): a wrapper op
//               calling itself once is one call
//   total_ns    end - begin, summed over the calls; a recursive name's nested calls are counted
//               again (key_averages sums cpu_time_total), so total_percent can pass 100
//   self_ns     total - the children's totals, summed over the calls (never below 0 per call; torch
//               goes negative when siblings overlap partly)
//   calls       the events left after dedup
//   processes   processes with at least one call of the name
//   *_percent   of the summed wall (recorded) time of the processes that have events of the table's
//               kind (one process's table: its wall); 0 when that is 0
//
// Rows by self time, descending, then by name. torch's key_averages() also holds the
// user_annotation events (ProfilerStep*, Optimizer.step#SGD.step, DataLoader iterations), which
// trainprof reads as ranges and phases instead: they are not tree nodes here, so an operator's self
// time differs from torch's only where an annotation lies inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// One name's totals over some events (ns).
struct HostOpStat {
  StringId name = 0;
  uint64_t calls = 0;
  uint64_t self_ns = 0;
  uint64_t total_ns = 0;
  bool operator==(const HostOpStat&) const = default;
};

/// Per kind, one HostOpStat per name (by name id), of one image's host_ops (any order).
struct HostOpTotals {
  std::vector<HostOpStat> operators;
  std::vector<HostOpStat> python_functions;
  bool empty() const { return operators.empty() && python_functions.empty(); }
};

/// One call of the tree after dedup: the index of its op in the input, its self and total time.
struct HostOpCall {
  uint32_t op = 0;
  uint64_t self_ns = 0;
  uint64_t total_ns = 0;
};

/// Every call of `ops` that key_averages() counts (the tree above, duplicates dropped), in input order.
std::vector<HostOpCall> HostOpCallsOf(const std::vector<HostOp>& ops);

/// The key_averages() totals of `ops` (threads: HostOp::thread; names: HostOp::name).
HostOpTotals HostOpTotalsOf(const std::vector<HostOp>& ops);

/// A row of the report's operator or Python function table.
struct HostOpRow {
  std::string name;
  uint64_t calls = 0, self_ns = 0, total_ns = 0;  ///< as HostOpStat, over the processes
  double self_percent = 0, total_percent = 0;
  uint64_t processes = 0;
};

/// Both tables of a set of processes, cut to --top.
struct HostOpTables {
  std::vector<HostOpRow> operators;
  size_t operators_omitted = 0;
  std::vector<HostOpRow> python_functions;
  size_t python_functions_omitted = 0;
  uint64_t operators_wall_ns = 0;  ///< the percent's denominator
  size_t operators_processes = 0;  ///< processes with operators
  uint64_t python_functions_wall_ns = 0;
  size_t python_functions_processes = 0;
  bool any() const { return operators_processes + python_functions_processes > 0; }
};

/// The key_averages() totals of every image of `p` together, one stat per name, by name id.
HostOpTotals ProcessHostOpTotals(const Process& p);

/// The tables over processes of these totals (ProcessHostOpTotals; walls[i]: the wall time of the
/// process of totals[i], the percent's denominator), names from `strings`, rows cut to `top`
/// (0 = all).
HostOpTables BuildHostOpTables(const std::vector<const HostOpTotals*>& totals, const std::vector<uint64_t>& walls,
                               const StringPool& strings, size_t top);

}  // namespace trainprof::collector
