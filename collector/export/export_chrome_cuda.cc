#include "collector/export/export_chrome_cuda.h"

#include "collector/export/stack_args.h"

#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "collector/export/cuda_names.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

constexpr int64_t kGpuPidBase = 1'000'000'000;

class CudaExport {
 public:
  CudaExport(const Process& p, const TraceImage& img, size_t pi, int64_t pid, const ChromeClock& clock,
             const Selection& sel, ChromeWriter* w)
      : p_(p), img_(img), pi_(pi), pid_(pid), clock_(clock), sel_(sel), w_(*w) {}

  ChromeCudaStats Run() {
    for (const CudaCall& c : img_.cuda.calls) {
      if (!c.returned) continue;  // never returned: no duration to show
      if (!Kept(c.begin_ns, c.end_ns)) continue;
      WriteCall(c);
      by_correlation_.emplace(c.correlation, &c);
    }
    for (const GpuKernel& k : img_.cuda.kernels) {
      if (!Kept(k.start_ns, k.end_ns)) continue;
      GpuOp(k, "kernel", w_.Name(k.name), [&] { w_.KernelArgs(img_.cuda.kernel_configs[k.config]); });
    }
    for (const GpuMemcpy& m : img_.cuda.memcpys) {
      if (!Kept(m.start_ns, m.end_ns)) continue;
      const std::string name = Quote(MemcpyEventName(m));
      GpuOp(m, "gpu_memcpy", name, [&] { Bytes(m.bytes, m.duration()); });
    }
    for (const GpuMemset& m : img_.cuda.memsets) {
      if (!Kept(m.start_ns, m.end_ns)) continue;
      const std::string name = Quote(MemsetEventName(m));
      GpuOp(m, "gpu_memset", name, [&] { Bytes(m.bytes, m.duration()); });
    }
    return stats_;
  }

 private:
  bool Kept(uint64_t begin, uint64_t end) const {
    const uint64_t b = clock_(begin);
    return sel_.Keeps(b, std::max(b, clock_(end)));
  }
  uint32_t Tid(const CudaCall& c) const { return c.thread < img_.threads.size() ? img_.threads[c.thread].tid : 0; }
  int64_t GpuPid(uint32_t device) const {
    return kGpuPidBase + static_cast<int64_t>(pi_) * 1000 + static_cast<int64_t>(device % 1000);
  }

  void WriteCall(const CudaCall& c) {
    ++stats_.api_calls;
    const uint64_t begin = clock_(c.begin_ns);
    w_.Complete(pid_, Tid(c), begin, std::max(begin, clock_(c.end_ns)));
    w_.Key("name");
    auto [it, fresh] = api_names_.try_emplace(c.name);
    if (fresh) it->second = Quote(CudaApiDisplayName(w_.trace().strings.Get(c.name)));
    w_.Raw(it->second);
    w_.Raw(c.api == format::CudaApi::kDriver ? ",\"cat\":\"cuda_driver\"" : ",\"cat\":\"cuda_runtime\"");
    w_.Raw(",\"args\":{\"correlation\":");
    w_.Num(c.correlation);
    w_.Raw(",\"cbid\":");
    w_.Num(c.cbid);
    if (c.status != 0) {
      w_.Raw(",\"status\":");
      w_.Num(c.status);
    }
    if (c.stack != 0 && w_.stack_args != nullptr) {
      // An id nothing defines (a damaged file) gives no member: no lone comma.
      if (const std::string& stack = w_.stack_args->Member(img_, c.stack); !stack.empty()) {
        w_.Raw(",");
        w_.Raw(stack);
      }
    }
    w_.Raw("}");
    w_.End();
  }

  // Starts a GPU "X" event on the track of (device, stream), naming the track the first time.
  void Gpu(uint32_t device, uint32_t stream, uint64_t start_ns, uint64_t end_ns, const char* cat) {
    ++stats_.gpu_ops;
    const int64_t gpid = GpuPid(device);
    if (named_devices_.insert(device).second) {
      std::string label = "GPU " + std::to_string(device);
      for (const GpuDevice& d : img_.cuda.devices) {
        if (d.id == device && d.name != 0) label += ": " + std::string(w_.trace().strings.Get(d.name));
      }
      label += " (pid " + std::to_string(p_.pid) + ")";
      w_.Begin('M', gpid, 0);
      w_.Raw(",\"name\":\"process_name\",\"args\":{\"name\":");
      w_.Raw(Quote(label));
      w_.Raw("}");
      w_.End();
      w_.Begin('M', gpid, 0);
      w_.Raw(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
      w_.Num(pi_);
      w_.Raw("}");
      w_.End();
    }
    if (named_streams_.insert({device, stream}).second) {
      w_.Begin('M', gpid, stream);
      w_.Raw(",\"name\":\"thread_name\",\"args\":{\"name\":\"stream ");
      w_.Num(stream);
      w_.Raw("\"}");
      w_.End();
    }
    const uint64_t begin = clock_(start_ns);
    w_.Complete(gpid, stream, begin, std::max(begin, clock_(end_ns)));
    w_.Raw(",\"cat\":\"");
    w_.Raw(cat);
    w_.Raw("\"");
  }

  // One kernel, memcpy or memset (`op`): the event with its common args, `more_args()` writing the
  // rest, then the flow from the call that started it.
  template <typename Op, typename MoreArgs>
  void GpuOp(const Op& op, const char* cat, std::string_view quoted_name, MoreArgs more_args) {
    Gpu(op.device, op.stream, op.start_ns, op.end_ns, cat);
    w_.Key("name");
    w_.Raw(quoted_name);
    w_.Raw(",\"args\":{\"device\":");
    w_.Num(op.device);
    w_.Raw(",\"context\":");
    w_.Num(op.context);
    w_.Raw(",\"stream\":");
    w_.Num(op.stream);
    w_.Raw(",\"correlation\":");
    w_.Num(op.correlation);
    more_args();
    w_.Raw("}");
    w_.End();
    Flow(op.correlation, op.device, op.stream, op.start_ns);
  }

  void Bytes(uint64_t bytes, uint64_t duration_ns) {
    w_.Raw(",\"bytes\":");
    w_.Num(bytes);
    if (duration_ns > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(bytes) / static_cast<double>(duration_ns));
      w_.Raw(",\"memory bandwidth (GB/s)\":");
      w_.Raw(buf);
    }
  }

  // "s" at the call's start on its thread, "f" (binding to the enclosing slice) at the GPU work.
  void Flow(uint64_t correlation, uint32_t device, uint32_t stream, uint64_t start_ns) {
    auto it = by_correlation_.find(correlation);
    if (correlation == 0 || it == by_correlation_.end()) return;
    ++stats_.flows;
    const uint64_t id = (static_cast<uint64_t>(pi_) << 40) | (correlation & ((uint64_t{1} << 40) - 1));
    for (int end = 0; end < 2; ++end) {
      if (end == 0) {
        w_.Begin('s', pid_, Tid(*it->second));
        w_.Key("ts");
        w_.Micros(clock_(it->second->begin_ns));
      } else {
        w_.Begin('f', GpuPid(device), stream);
        w_.Key("ts");
        w_.Micros(clock_(start_ns));
        w_.Raw(",\"bp\":\"e\"");
      }
      w_.Raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
      w_.Num(id);
      w_.End();
    }
  }

  const Process& p_;
  const TraceImage& img_;
  size_t pi_;
  int64_t pid_;
  const ChromeClock& clock_;
  const Selection& sel_;
  ChromeWriter& w_;
  ChromeCudaStats stats_;
  std::unordered_map<StringId, std::string> api_names_;
  std::unordered_map<uint64_t, const CudaCall*> by_correlation_;  // returned calls
  std::set<uint32_t> named_devices_;
  std::set<std::pair<uint32_t, uint32_t>> named_streams_;
};

}  // namespace

ChromeCudaStats ExportChromeCuda(const Process& p, const TraceImage& img, size_t process_index, int64_t pid,
                                 const ChromeClock& clock, const Selection& selection, ChromeWriter* w) {
  return CudaExport(p, img, process_index, pid, clock, selection, w).Run();
}

}  // namespace trainprof::collector
