// `--trace=torch-ops` ranges (domain format::kTorchOpsDomain) read as operators: HostOps of the
// operator table, never NVTX ranges (collector/read/torch_op_ranges.h).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collector/read/trace_reader.h"
#include "collector/stats/host_ops.h"
#include "test_util.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;

TEST(TorchOpsReader, OpsDomainRangesBecomeOperatorsNotNvtxRanges) {
  TraceBuilder b(10, 1, 0);
  int t = b.Thread(10), u = b.Thread(11);
  uint64_t ops = b.Domain(t, format::kTorchOpsDomain);
  uint64_t phases = b.Domain(t, "trainprof");
  b.Push(t, 100, "Net.forward", phases, 7);
  b.Push(t, 110, "aten::linear", ops);
  b.Push(t, 115, "aten::addmm", ops);
  b.Push(u, 116, "aten::mul", ops);  // another thread, interleaved in time
  b.Pop(t, 145, ops);                // aten::addmm [115, 145]
  b.Pop(u, 120, ops);                // aten::mul [116, 120]
  b.Pop(t, 150, ops);                // aten::linear [110, 150]
  b.Pop(t, 200, phases);
  b.Push(t, 300, "aten::relu", ops);  // still open at the end: ends at the last record
  b.Mark(t, 310, "loss");
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  const TraceImage& img = *r.image;
  std::map<std::string, std::vector<uint64_t>> got;  // name -> {begin, end, thread}
  for (const HostOp& h : img.host_ops) {
    EXPECT_EQ(h.kind, HostOpKind::kOperator);
    got[std::string(pool.Get(h.name))] = {h.begin_ns, h.end_ns, h.thread};
  }
  EXPECT_EQ(got, (std::map<std::string, std::vector<uint64_t>>{{"aten::linear", {110, 150, 0}},
                                                                {"aten::addmm", {115, 145, 0}},
                                                                {"aten::mul", {116, 120, 1}},
                                                                {"aten::relu", {300, 310, 0}}}));
  // The NVTX side has only the phase range and the mark.
  ASSERT_EQ(img.nvtx_summary.ranges.size(), 1u);
  EXPECT_EQ(pool.Get(img.nvtx_summary.ranges[0].key.name), "Net.forward");
  EXPECT_EQ(img.nvtx_summary.unbalanced, 0u);
  for (const NvtxEvent& e : img.nvtx) EXPECT_NE(pool.Get(e.domain), format::kTorchOpsDomain);
  // The operator table: linear's self time is its total less addmm's.
  HostOpTotals totals = HostOpTotalsOf(img.host_ops);
  std::map<std::string, std::vector<uint64_t>> table;
  for (const HostOpStat& s : totals.operators) table[std::string(pool.Get(s.name))] = {s.calls, s.self_ns, s.total_ns};
  EXPECT_EQ(table["aten::linear"], (std::vector<uint64_t>{1, 10, 40}));
  EXPECT_EQ(table["aten::addmm"], (std::vector<uint64_t>{1, 30, 30}));
}

TEST(TorchOpsReader, APopWithNothingOpenIsIgnored) {
  TraceBuilder b(11, 1, 0);
  int t = b.Thread(10);
  uint64_t ops = b.Domain(t, format::kTorchOpsDomain);
  b.Pop(t, 100, ops);
  b.Push(t, 110, "aten::add", ops);
  b.Pop(t, 120, ops);
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.image->host_ops.size(), 1u);
  EXPECT_EQ(r.image->host_ops[0].begin_ns, 110u);
  EXPECT_EQ(r.image->host_ops[0].end_ns, 120u);
  EXPECT_TRUE(r.image->nvtx_summary.ranges.empty());
}

}  // namespace
}  // namespace trainprof::collector
