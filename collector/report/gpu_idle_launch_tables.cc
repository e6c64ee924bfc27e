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
Cells GpuIdleKindsCells(const Process& p, const StreamIdleKinds& s) {
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

namespace {

// The two tables from their sweeps.
std::vector<TableRows> IdleLaunchTables(const std::vector<const CudaDigest*>& digests, const ReportOptions& options,
                                        bool has_cuda, TableRows idle, KernelLaunchSweep launch_sweep) {
  // The kernel table's digests, so that the names are numbered alike.
  KernelLaunches launches_rows =
      std::move(launch_sweep).Rows([&] { return digests; }, options.full_names, options.top);
  TableRows launch{&KernelLaunchTable(), "Kernel launches (launch call duration; delay = GPU start - end of the call)", {}};
  for (const KernelLaunchRow& row : launches_rows.rows) launch.rows.push_back(KernelLaunchCells(row));
  launch.text = has_cuda;
  launch.omitted = launches_rows.omitted;
  std::vector<TableRows> out;
  out.push_back(std::move(idle));
  out.push_back(std::move(launch));
  return out;
}

TableRows IdleTable(bool has_cuda) {
  TableRows idle{&GpuIdleKindsTable(), "GPU idle time by kind, per stream (HTA's host wait / kernel wait / other)", {}};
  idle.text = has_cuda;
  return idle;
}

}  // namespace

GpuIdleLaunchSweep::GpuIdleLaunchSweep(const Trace& trace) : trace_(trace), launch_(trace.strings) {
  idle_.reserve(trace.processes.size());
  for (const Process& p : trace.processes) idle_.emplace_back(p.images.size());
}

void GpuIdleLaunchSweep::Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data) {
  std::vector<const CudaData*> images;
  std::vector<IdMap<LaunchCall>> launches;
  for (size_t p = 0; p < data.size(); ++p) {
    const CudaWindowData& d = *data[p];
    std::vector<const IdMap<uint64_t>*> call_begin;
    for (size_t i = 0; i < d.images(); ++i) call_begin.push_back(&d.Enter(i));
    idle_[p].Add(window, d.records(), call_begin);
    images.insert(images.end(), d.records().begin(), d.records().end());
    for (size_t i = 0; i < d.images(); ++i) launches.push_back(LaunchCallsOf(d.PartnerSources(i), trace_.strings));
  }
  std::vector<const IdMap<LaunchCall>*> launch_of;
  for (const IdMap<LaunchCall>& l : launches) launch_of.push_back(&l);
  launch_.Add(window, images, launch_of);
}

std::vector<TableRows> GpuIdleLaunchSweep::Tables(const std::vector<const CudaDigest*>& digests,
                                                  const ReportOptions& options, bool has_cuda,
                                                  std::vector<UnlaunchedOps>* unlaunched) && {
  TableRows idle = IdleTable(has_cuda);
  if (unlaunched != nullptr) {
    unlaunched->clear();
    for (const IdleKindsSweep& s : idle_) unlaunched->push_back(s.unlaunched());
  }
  for (size_t p = 0; p < idle_.size(); ++p) {
    for (const StreamIdleKinds& s : std::move(idle_[p]).Rows()) idle.rows.push_back(GpuIdleKindsCells(trace_.processes[p], s));
  }
  return IdleLaunchTables(digests, options, has_cuda, std::move(idle), std::move(launch_));
}

std::vector<TableRows> GpuIdleLaunchTables(const Trace& trace, const std::vector<const CudaDigest*>& digests,
                                           const ReportOptions& options, bool has_cuda,
                                           std::vector<UnlaunchedOps>* unlaunched) {
  TableRows idle = IdleTable(has_cuda);
  KernelLaunchSweep launch_sweep(trace.strings);
  if (unlaunched != nullptr) unlaunched->assign(trace.processes.size(), {});
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    const Process& p = trace.processes[pi];
    std::vector<const CudaData*> records;
    for (const TraceImage& img : p.images) records.push_back(&img.cuda);
    UnlaunchedOps own;
    for (const StreamIdleKinds& s : IdleKindsByStream(records, kKernelWaitNs, &own)) {
      idle.rows.push_back(GpuIdleKindsCells(p, s));
    }
    if (unlaunched != nullptr) (*unlaunched)[pi] = own;
  }
  // The launch calls by correlation id, one image's at a time.
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      const IdMap<LaunchCall> launches = LaunchCallsOf(img.cuda, trace.strings);
      launch_sweep.Add(TimeWindow{}, {&img.cuda}, {&launches});
    }
  }
  return IdleLaunchTables(digests, options, has_cuda, std::move(idle), std::move(launch_sweep));
}

}  // namespace trainprof::collector
