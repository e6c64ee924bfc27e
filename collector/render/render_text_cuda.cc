#include "collector/render/render_text_cuda.h"

#include <algorithm>

#include "collector/base/units.h"
#include "collector/render/table_render.h"
#include "collector/report/rank_tables.h"
#include "collector/report/report_tables.h"

namespace trainprof::collector {
namespace {

std::string More(size_t omitted, size_t top) {
  if (omitted == 0) return "";
  return "  ... " + std::to_string(omitted) + (omitted == 1 ? " more row" : " more rows") + " (--top " +
         std::to_string(top) + ")\n";
}

// The "~" note when a row's median is estimated (CudaDigest: past DurationSummary::kExactSamples).
template <typename Row>
std::string Estimated(const std::vector<Row>& rows, const char* what) {
  return EstimatedMedianNote(std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.time.exact; }), what);
}

std::string ApiTable(const std::vector<CudaApiRow>& rows, size_t omitted, size_t top) {
  return TextTable(CudaApiTableDef(), RowsOf(rows, CudaApiCells), "  ") + More(omitted, top) + Estimated(rows, "calls");
}

std::string KernelTableText(const std::vector<KernelRow>& rows, size_t omitted, const ReportOptions& o) {
  return TextTable(KernelTableDef(), RowsOf(rows, KernelCells), "  ", !o.full_names) + More(omitted, o.top) + Estimated(rows, "instances");
}

std::string MemoryTableText(const std::vector<MemoryOpRow>& rows, size_t omitted, size_t top) {
  const bool pageable =
      std::any_of(rows.begin(), rows.end(), [](const MemoryOpRow& r) { return r.pageable_count > 0; });
  std::string out = TextTable(MemoryTableDef(), RowsOf(rows, MemoryCells), "  ") + More(omitted, top) + Estimated(rows, "operations");
  out += "  Bandwidth = total size / total time (1 GB = 10^9 bytes).\n";
  if (pageable) {
    out +=
        "  Pageable: copies to or from pageable (not pinned) host memory. The driver stages them through a pinned\n"
        "  buffer: they block the calling thread and cannot overlap with compute. Pin the host memory\n"
        "  (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True.\n";
  }
  return out;
}

std::string DevicesText(const Report& r) {
  std::vector<Cells> rows;
  bool latency_estimated = false;
  uint64_t busy_error_ns = 0;  // the largest of the rows shown
  for (const DeviceRow& d : r.cuda.devices) {
    if (d.processes < 2) continue;  // one process: its own row says it all
    rows.push_back(DeviceCells(d, r.hosts > 1 ? "all@" + d.host : "all"));
    latency_estimated = latency_estimated || (d.latency_count > 0 && !d.latency_exact);
    busy_error_ns = std::max(busy_error_ns, d.busy_error_ns);
  }
  size_t left_out = 0;
  for (const ProcessRow& p : r.processes) {
    if (!ShowsRank(r, p.rank)) {
      left_out += p.cuda.devices.size();
      continue;
    }
    for (const DeviceRow& d : p.cuda.devices) {
      rows.push_back(DeviceCells(d, std::to_string(p.pid)));
      latency_estimated = latency_estimated || (d.latency_count > 0 && !d.latency_exact);
    }
  }
  if (rows.empty() && left_out == 0) return "  no GPU activity recorded\n";
  return TextTable(DeviceTable(), RowsOf(rows, [](const Cells& c) { return c; }), "  ") +
         (left_out == 0 ? std::string()
                        : "  ... " + std::to_string(left_out) + (left_out == 1 ? " more row" : " more rows") +
                              " of other ranks (GPU busy across ranks: the Bottleneck section; --by-rank lists "
                              "them)\n") +
         "  Busy = time the device ran a kernel, memcpy or memset (their union) / the process's wall time; (active) =\n"
         "  / the time from its first to its last GPU activity; \"all\" = every process on that device. Launch =\n"
         "  kernel start - enter of the API call that launched it.\n" +
         EstimatedQuantilesNote(latency_estimated, "kernels") +
         (busy_error_ns == 0
              ? std::string()
              : "  ~ Busy of a device processes shared: each process's activity was kept to " +
                    std::to_string(kMaxActivityIntervals) + " intervals, its shortest gaps counted busy: at most " +
                    FormatDuration(static_cast<double>(busy_error_ns)) + " too much\n");
}

}  // namespace

std::string CudaSectionsText(const Report& r) {
  if (!r.has_cuda) return "";
  std::string out = "\nGPU devices\n" + DevicesText(r);
  out += "\nCUDA API (all processes)\n";
  out += r.cuda.api.empty() ? "  none recorded\n" : ApiTable(r.cuda.api, r.cuda.api_omitted, r.options.top);
  out += "\nGPU kernels (all processes)\n";
  if (r.cuda.kernels.empty()) {
    out += "  none recorded\n";
  } else {
    out += KernelTableText(r.cuda.kernels, r.cuda.kernels_omitted, r.options);
    out += r.options.full_names
               ? "  Names demangled, in full (--full-names). Time (%) = share of the total kernel time.\n"
               : "  Names demangled and shortened (return type and parameters dropped, template arguments shown as <...>;\n"
                 "  --full-names shows them whole). Time (%) = share of the total kernel time.\n";
  }
  out += "\nGPU memory operations (all processes)\n";
  out += r.cuda.memory.empty() ? "  none recorded\n" : MemoryTableText(r.cuda.memory, r.cuda.memory_omitted, r.options.top);
  return out;
}

std::string ProcessCudaText(const ProcessRow& p, const ReportOptions& o) {
  if (p.cuda.api.empty() && p.cuda.kernels.empty() && p.cuda.memory.empty()) return "";
  std::string out;
  if (!p.cuda.api.empty()) out += "\n  CUDA API\n" + ApiTable(p.cuda.api, p.cuda.api_omitted, o.top);
  if (!p.cuda.kernels.empty()) out += "\n  GPU kernels\n" + KernelTableText(p.cuda.kernels, p.cuda.kernels_omitted, o);
  if (!p.cuda.memory.empty()) {
    out += "\n  GPU memory operations\n" + MemoryTableText(p.cuda.memory, p.cuda.memory_omitted, o.top);
  }
  return out;
}

}  // namespace trainprof::collector
