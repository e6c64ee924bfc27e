#include "collector/render/render_text_cuda.h"

#include <algorithm>

#include "collector/render/text_table.h"
#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

constexpr size_t kKernelNameWidth = 100;  // display names longer than this are cut, unless --full-names

std::string Dur(double ns) { return FormatDuration(ns); }
std::string Pct(const std::optional<double>& p) { return p ? FormatPercent(*p) + "%" : "-"; }

std::string More(size_t omitted, size_t top) {
  if (omitted == 0) return "";
  return "  ... " + std::to_string(omitted) + (omitted == 1 ? " more row" : " more rows") + " (--top " +
         std::to_string(top) + ")\n";
}

std::string ApiTable(const std::vector<CudaApiRow>& rows, size_t omitted, size_t top) {
  Table t({{"Time (%)", true},
           {"Total Time", true},
           {"Calls", true},
           {"Mean", true},
           {"Median", true},
           {"Min", true},
           {"Max", true},
           {"StdDev", true},
           {"Errors", true},
           {"Unfinished", true},
           {"Name", false}});
  for (const CudaApiRow& r : rows) {
    const SampleStats& s = r.time;
    if (s.count == 0) {
      t.Add({"-", "-", "0", "-", "-", "-", "-", "-", std::to_string(r.errors), std::to_string(r.unfinished), r.name});
      continue;
    }
    t.Add({FormatPercent(r.percent), Dur(static_cast<double>(s.total)), std::to_string(s.count), Dur(s.mean),
           Dur(s.median), Dur(static_cast<double>(s.min)), Dur(static_cast<double>(s.max)), Dur(s.std),
           std::to_string(r.errors), std::to_string(r.unfinished), r.name});
  }
  return t.Render("  ") + More(omitted, top);
}

std::string KernelTableText(const std::vector<KernelRow>& rows, size_t omitted, const ReportOptions& o) {
  Table t({{"Time (%)", true},
           {"Total Time", true},
           {"Instances", true},
           {"Mean", true},
           {"Median", true},
           {"Min", true},
           {"Max", true},
           {"StdDev", true},
           {"Grid", false},
           {"Block", false},
           {"Name", false}});
  for (const KernelRow& r : rows) {
    const SampleStats& s = r.time;
    t.Add({FormatPercent(r.percent), Dur(static_cast<double>(s.total)), std::to_string(s.count), Dur(s.mean),
           Dur(s.median), Dur(static_cast<double>(s.min)), Dur(static_cast<double>(s.max)), Dur(s.std), r.grid,
           r.block, o.full_names ? r.name : Shorten(r.name, kKernelNameWidth)});
  }
  return t.Render("  ") + More(omitted, o.top);
}

std::string MemoryTableText(const std::vector<MemoryOpRow>& rows, size_t omitted, size_t top) {
  Table t({{"Time (%)", true},
           {"Total Time", true},
           {"Count", true},
           {"Mean", true},
           {"Median", true},
           {"Min", true},
           {"Max", true},
           {"StdDev", true},
           {"Total Size", true},
           {"Min Size", true},
           {"Max Size", true},
           {"Bandwidth", true},
           {"Pageable", true},
           {"Operation", false}});
  bool pageable = false;
  for (const MemoryOpRow& r : rows) {
    const SampleStats& s = r.time;
    pageable = pageable || r.pageable_count > 0;
    t.Add({FormatPercent(r.percent), Dur(static_cast<double>(s.total)), std::to_string(s.count), Dur(s.mean),
           Dur(s.median), Dur(static_cast<double>(s.min)), Dur(static_cast<double>(s.max)), Dur(s.std),
           FormatBytes(static_cast<double>(r.size.total)), FormatBytes(static_cast<double>(r.size.min)),
           FormatBytes(static_cast<double>(r.size.max)),
           r.bandwidth_gbps ? FormatBytes(*r.bandwidth_gbps * 1e9) + "/s" : "-",
           r.pageable_count == 0 ? "0"
                                 : std::to_string(r.pageable_count) + " (" +
                                       FormatBytes(static_cast<double>(r.pageable_bytes)) + ")",
           r.label});
  }
  std::string out = t.Render("  ") + More(omitted, top);
  out += "  Bandwidth = total size / total time (1 GB = 10^9 bytes).\n";
  if (pageable) {
    out +=
        "  Pageable: copies to or from pageable (not pinned) host memory. The driver stages them through a pinned\n"
        "  buffer: they block the calling thread and cannot overlap with compute. Pin the host memory\n"
        "  (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True.\n";
  }
  return out;
}

std::string DeviceCell(const DeviceRow& d) { return std::to_string(d.device); }

void AddDeviceRow(Table* t, const std::string& who, const DeviceRow& d) {
  const bool lat = d.latency_count > 0;
  t->Add({who, DeviceCell(d), d.name.empty() ? "-" : d.name, Pct(d.busy_percent), Pct(d.active_busy_percent),
          std::to_string(d.kernels), Dur(static_cast<double>(d.kernel_ns)), std::to_string(d.memcpys + d.memsets),
          Dur(static_cast<double>(d.memory_ns)), lat ? Dur(d.latency_mean_ns) : "-",
          lat ? Dur(d.latency_median_ns) : "-", lat ? Dur(d.latency_p95_ns) : "-"});
}

std::string DevicesText(const Report& r) {
  Table t({{"PID", false},
           {"Device", true},
           {"Name", false},
           {"Busy", true},
           {"Busy (active)", true},
           {"Kernels", true},
           {"Kernel Time", true},
           {"Copies+Sets", true},
           {"Memory Time", true},
           {"Launch Mean", true},
           {"Launch Median", true},
           {"Launch P95", true}});
  size_t rows = 0;
  for (const DeviceRow& d : r.cuda.devices) {
    if (d.processes < 2) continue;  // one process: its own row says it all
    AddDeviceRow(&t, r.hosts > 1 ? "all@" + d.host : "all", d);
    ++rows;
  }
  for (const ProcessRow& p : r.processes) {
    for (const DeviceRow& d : p.cuda.devices) {
      AddDeviceRow(&t, std::to_string(p.pid), d);
      ++rows;
    }
  }
  if (rows == 0) return "  no GPU activity recorded\n";
  return t.Render("  ") +
         "  Busy = time the device ran a kernel, memcpy or memset (their union) / the process's wall time; (active) =\n"
         "  / the time from its first to its last GPU activity; \"all\" = every process on that device. Launch =\n"
         "  kernel start - enter of the API call that launched it.\n";
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
