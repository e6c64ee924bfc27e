#include "collector/report/gpu_idle_launch_tables.h"

#include <optional>

#include "collector/base/units.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;
constexpr size_t kLaunchNameWidth = 100;  // as the kernel table: cut unless --full-names

// The three kinds: their time column and their share column.
struct KindColumns {
  const char *ns, *ns_header, *ns_meaning, *percent, *percent_header;
};
constexpr KindColumns kKinds[] = {
    {"host_wait_ns", "Host Wait", "gaps whose next op was launched after the previous op ended", "host_wait_percent",
     "Host %"},
    {"kernel_wait_ns", "Kernel Wait", "other gaps under 30 us (HTA's consecutive_kernel_delay)",
     "kernel_wait_percent", "Kernel %"},
    {"other_ns", "Other", "the remaining gaps", "other_percent", "Other %"}};

TableDef MakeIdleKindsTable() {
  TableDef t{"gpu_idle_by_kind",
             "gpu_idle_by_kind.csv",
             {{"host", nullptr, Unit::kText, L, "host name", Show::kData},
              {"pid", "PID", Unit::kCount, R, "the process"},
              {"rank", "Rank", Unit::kCount, R, "its rank (RANK); null without one"},
              {"device", "Device", Unit::kCount, R, "device id"},
              {"stream", "Stream", Unit::kCount, R, "CUDA stream id"},
              {"idle_ns", "Idle", Unit::kNs, R, "sum of the gaps between consecutive GPU ops of the stream"}},
             {"pid", "rank", "device", "stream", "idle_ns"}};
  for (const KindColumns& k : kKinds) t.columns.push_back({k.ns, k.ns_header, Unit::kNs, R, k.ns_meaning});
  for (const KindColumns& k : kKinds) {
    t.columns.push_back({k.percent, k.percent_header, Unit::kPercent, R, "share of idle_ns; null when idle_ns is 0"});
    t.text.insert(t.text.end(), {k.ns, k.percent});
  }
  return t;
}

TableDef MakeLaunchTable() {
  return {"kernel_launches",
          "kernel_launches.csv",
          {{"name", "Name", Unit::kText, L, "kernel (demangled, shortened unless --full-names), memcpy KIND or memset",
            Show::kBoth, kLaunchNameWidth},
           {"count", "Count", Unit::kCount, R, "GPU ops with their launch call in the trace"},
           {"cpu_launch_mean_ns", "Launch Mean", Unit::kNs, R, "duration of the launch call: mean"},
           {"cpu_launch_median_ns", "Launch Median", Unit::kNs, R, "... median"},
           {"launch_delay_mean_ns", "Delay Mean", Unit::kNs, R, "GPU start - end of the launch call (0 if negative): mean"},
           {"launch_delay_median_ns", "Delay Median", Unit::kNs, R, "... median"},
           {"launch_delay_p95_ns", "Delay P95", Unit::kNs, R, "... 95th percentile"},
           {"shorter_than_launch", "Shorter", Unit::kCount, R, "ops that ran shorter than their launch call (calls <= 50 us)"},
           {"long_launches", "Long Launch", Unit::kCount, R, "launch calls over 50 us"},
           {"long_delays", "Long Delay", Unit::kCount, R, "launch delays over 100 us"},
           {"quantiles_exact", nullptr, Unit::kFlag, L,
            "false: the medians and the p95 estimated (more than 1024 ops, within 0.39%)", Show::kData}},
          {"count", "cpu_launch_mean_ns", "cpu_launch_median_ns", "launch_delay_mean_ns", "launch_delay_median_ns",
           "launch_delay_p95_ns", "shorter_than_launch", "long_launches", "long_delays", "name"}};
}

Cell Share(const std::optional<double>& p) { return p ? Cell(*p).Text(FormatPercent(*p) + "%") : Cell(nullptr); }

}  // namespace

const TableDef& GpuIdleKindsTable() {
  static const TableDef t = MakeIdleKindsTable();
  return t;
}
Cells GpuIdleKindsCells(const ProcessInfo& p, const StreamIdleKinds& s) {
  return {p.host,           p.pid,         p.rank,           s.device,
          s.stream,         s.idle_ns,     s.host_wait_ns,   s.kernel_wait_ns,
          s.other_ns,       Share(s.host_wait_percent), Share(s.kernel_wait_percent), Share(s.other_percent)};
}

const TableDef& KernelLaunchTable() {
  static const TableDef t = MakeLaunchTable();
  return t;
}
Cells KernelLaunchCells(const KernelLaunchRow& r) {
  return {r.name,
          r.count,
          r.cpu_launch_mean_ns,
          Cell(r.cpu_launch_median_ns).Estimated(!r.exact),
          r.launch_delay_mean_ns,
          Cell(r.launch_delay_median_ns).Estimated(!r.exact),
          Cell(r.launch_delay_p95_ns).Estimated(!r.exact),
          r.shorter_than_launch,
          r.long_launches,
          r.long_delays,
          r.exact};
}

std::vector<TableRows> GpuIdleLaunchTables(const std::vector<ProcessSummary>& summaries,
                                           const std::vector<const CudaDigest*>& digests, const StringPool& strings,
                                           const ReportOptions& options, bool has_cuda) {
  TableRows idle{&GpuIdleKindsTable(), "GPU idle time by kind, per stream (HTA's host wait / kernel wait / other)", {}};
  idle.text = has_cuda;
  std::vector<const std::vector<LaunchSamples>*> launches;
  for (const ProcessSummary& s : summaries) {
    for (const StreamIdleKinds& k : s.gpu_ops.idle_kinds) idle.rows.push_back(GpuIdleKindsCells(s.info, k));
    launches.push_back(&s.gpu_ops.launches);
  }
  // The kernel table's digests, so that the names are numbered alike.
  const KernelLaunches rows =
      KernelLaunchRows(launches, [&] { return digests; }, strings, options.full_names, options.top);
  TableRows launch{&KernelLaunchTable(), "Kernel launches (launch call duration; delay = GPU start - end of the call)", {}};
  for (const KernelLaunchRow& row : rows.rows) launch.rows.push_back(KernelLaunchCells(row));
  launch.text = has_cuda;
  launch.omitted = rows.omitted;
  std::vector<TableRows> out;
  out.push_back(std::move(idle));
  out.push_back(std::move(launch));
  return out;
}

}  // namespace trainprof::collector
