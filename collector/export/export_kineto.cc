#include "collector/export/export_kineto.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "collector/base/kernel_names.h"
#include "collector/export/chrome_writer.h"
#include "collector/export/cuda_names.h"
#include "collector/export/nvtx_walk.h"
#include "collector/export/process_label.h"
#include "collector/model/cuda_calls.h"
#include "trainprof/phases.h"

namespace trainprof::collector {
namespace {

// Kineto's names (libkineto's output_json.cpp; torch.profiler's traces).
const char* SyncName(format::SyncType t) {
  switch (t) {
    case format::SyncType::kEventSynchronize: return "Event Sync";
    case format::SyncType::kStreamWaitEvent: return "Stream Wait Event";
    case format::SyncType::kStreamSynchronize: return "Stream Sync";
    case format::SyncType::kContextSynchronize: return "Context Sync";
    default: return "Unknown Sync";
  }
}

// A host name as a file name part: [A-Za-z0-9._-], anything else '_'.
std::string FileSafe(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "unknown";
  return out;
}

class KinetoWriter {
 public:
  KinetoWriter(const Trace& trace, const TimeAxis& axis, const Selection& sel, const KinetoFile& file,
               const std::vector<std::vector<StepSpan>>& steps, OutputSink* out)
      : trace_(trace), axis_(axis), sel_(sel), file_(file), steps_(steps), w_(trace, out) {}

  ChromeWriter& writer() { return w_; }

  KinetoExportStats Run() {
    Header();
    std::unordered_set<int64_t> used;
    for (size_t k = 0; k < file_.processes.size(); ++k) {
      const size_t pi = file_.processes[k];
      int64_t pid = trace_.processes[pi].pid;
      while (!used.insert(pid).second) pid += 10'000'000;  // the same pid twice (two hosts)
      Process(pi, k, pid);
    }
    TraceSpan();
    w_.Raw("\n]}\n");
    w_.Flush();
    stats_.events = w_.events();
    return stats_;
  }

 private:
  void Header() {
    // Line by line as Kineto writes it: HTA reads a file's rank from its first lines with the
    // regex "rank":\s+(\d+) (hta/common/trace_file.py, create_rank_to_trace_dict).
    w_.Raw("{\n  \"schemaVersion\": 1,\n");
    if (file_.rank) {
      w_.Raw("  \"distributedInfo\": {\"rank\": ");
      w_.SignedNum(*file_.rank);
      if (file_.world_size) {
        w_.Raw(", \"world_size\": ");
        w_.SignedNum(*file_.world_size);
      }
      w_.Raw("},\n");
    }
    Origin();
    std::map<uint32_t, const GpuDevice*> devices;
    for (size_t pi : file_.processes) {
      for (const TraceImage& img : trace_.processes[pi].images) {
        for (const GpuDevice& d : img.cuda.devices) devices.emplace(d.id, &d);
      }
    }
    w_.Raw("  \"deviceProperties\": [");
    bool first = true;
    for (const auto& [id, d] : devices) {
      w_.Raw(first ? "\n    {\"id\": " : ",\n    {\"id\": ");
      first = false;
      w_.Num(id);
      w_.Raw(", \"name\": ");
      w_.Raw(d->name == 0 ? std::string("\"\"") : Quote(trace_.strings.Get(d->name)));
      w_.Raw(", \"totalGlobalMem\": ");
      w_.Num(d->global_memory);
      w_.Raw(", \"computeMajor\": ");
      w_.Num(d->cc_major);
      w_.Raw(", \"computeMinor\": ");
      w_.Num(d->cc_minor);
      w_.Raw(", \"numSms\": ");
      w_.Num(d->sm_count);
      w_.Raw("}");
    }
    w_.Raw(first ? "],\n" : "\n  ],\n");
    w_.Raw("  \"baseTimeNanoseconds\": ");
    w_.Num(axis_.zero);
    w_.Raw(",\n  \"displayTimeUnit\": \"ms\",\n  \"traceName\": ");
    w_.Raw(Quote(file_.name));
    w_.Raw(",\n  \"traceEvents\": [");
  }

  // "trainprof_origin": the trainprof trace files this file was made from, one entry per image
  // (read/exported_copies.h: a report given both counts each process once). After
  // distributedInfo, on one line, before traceEvents; HTA and torch ignore keys they do not know.
  void Origin() {
    bool first = true;
    for (size_t pi : file_.processes) {
      for (const TraceImage& img : trace_.processes[pi].images) {
        if (img.source != ImageSource::kTrainprof || img.file >= trace_.files.size()) continue;
        const std::string& path = trace_.files[img.file].path;
        w_.Raw(first ? "  \"trainprof_origin\": [{\"trace\":" : ", {\"trace\":");
        first = false;
        w_.Raw(Quote(path.substr(path.find_last_of('/') + 1)));
        w_.Key("host");
        w_.Raw(Quote(img.host));
        w_.Key("pid");
        w_.SignedNum(img.pid);
        w_.Arg("image", img.image_index);
        w_.Arg("start_monotonic_ns", img.header_start_ns);
        w_.Key("boot_id");
        w_.Raw(Quote(img.boot_id));
        w_.Raw("}");
      }
    }
    if (!first) w_.Raw("],\n");
  }

  // Kineto's profiling window: {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans",
  // "tid":"PyTorch Profiler"} from the file's first process start to its last end (within the
  // window). HTA drops it (cat "Trace"); trainprof's reader takes the image's span from it.
  void TraceSpan() {
    uint64_t begin = UINT64_MAX, end = 0;
    for (size_t pi : file_.processes) {
      const collector::Process& p = trace_.processes[pi];
      const ExportClock& clock = axis_.clocks[pi];
      uint64_t last = p.end_ns;
      for (const TraceImage& img : p.images) last = std::max({last, img.end_ns, img.has_timed_records ? img.last_record_ns : 0});
      begin = std::min(begin, clock(p.start_ns));
      end = std::max(end, clock(last));
    }
    begin = std::max(begin, sel_.begin_ns());
    end = std::min(end, sel_.end_ns());
    if (begin == UINT64_MAX || end < begin) return;
    w_.BeginObject();
    w_.Raw("\"ph\":\"X\",\"cat\":\"Trace\",\"ts\":");
    w_.Micros(begin);
    w_.Raw(",\"dur\":");
    w_.Micros(end - begin);
    w_.Raw(",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"name\":\"PyTorch Profiler (0)\",\"args\":{\"Op count\":0}");
    w_.End();
  }

  void Meta(int64_t pid, int64_t tid, const char* what, const char* key, std::string_view quoted_value) {
    w_.Begin('M', pid, tid);
    w_.Raw(",\"name\":\"");
    w_.Raw(what);
    w_.Raw("\",\"ts\":0.000,\"args\":{\"");
    w_.Raw(key);
    w_.Raw("\":");
    w_.Raw(quoted_value);
    w_.Raw("}");
    w_.End();
  }

  // "X" with ts, dur, name, cat on (pid, tid); the caller adds args and End()s.
  void Span(int64_t pid, int64_t tid, uint64_t begin, uint64_t end, std::string_view quoted_name, const char* cat) {
    w_.Complete(pid, tid, begin, end);
    w_.Key("name");
    w_.Raw(quoted_name);
    w_.Raw(",\"cat\":\"");
    w_.Raw(cat);
    w_.Raw("\"");
  }

  void Process(size_t pi, size_t k, int64_t pid) {
    const collector::Process& p = trace_.processes[pi];
    const ExportClock& clock = axis_.clocks[pi];
    // Kineto's process_name is the program's name, its process_labels the rest ("CPU").
    Meta(pid, 0, "process_name", "name", Quote(ProcessCommand(p)));
    Meta(pid, 0, "process_labels", "labels", p.rank ? Quote("rank " + std::to_string(*p.rank)) : "\"CPU\"");
    const StringId phase_domain = trace_.strings.Find(format::kPhaseDomain);
    const StringId gpu_domain = trace_.strings.Find("gpu_user_annotation");
    std::unordered_set<uint32_t> named_threads;
    for (const TraceImage& img : p.images) {
      auto tid_of = [&](uint32_t thread) { return thread < img.threads.size() ? img.threads[thread].tid : 0u; };
      for (const ThreadInfo& t : img.threads) {
        if (t.name == 0 || !named_threads.insert(t.tid).second) continue;
        Meta(pid, t.tid, "thread_name", "name", w_.Name(t.name));
      }
      // NVTX ranges and marks: user_annotation; the reader's gpu_user_annotation ranges (domain
      // "gpu_user_annotation" on a thread named "GPU <device> stream <stream>",
      // collector/read/kineto_mapping.cc) back on their GPU track.
      const NvtxWalk walk = WalkNvtx(
          trace_, img,
          [&](const NvtxEvent& b, const NvtxEvent& e, uint64_t) {
            const uint64_t begin = clock(b.time_ns), end = std::max(begin, clock(e.time_ns));
            if (!sel_.Keeps(begin, end)) return;
            uint32_t device = 0, stream = 0;
            if (b.domain != 0 && b.domain == gpu_domain && GpuTrackOf(img, b.thread, &device, &stream)) {
              NameTrack(device, stream);
              Span(device, stream, begin, end, w_.Name(b.name), "gpu_user_annotation");
              w_.End();
              return;
            }
            Span(pid, tid_of(b.thread), begin, end, w_.Name(b.name), "user_annotation");
            Annotation(b, phase_domain);
          },
          [&](const NvtxEvent& m, uint64_t) {
            const uint64_t t = clock(m.time_ns);
            if (!sel_.Keeps(t)) return;
            w_.Begin('i', pid, tid_of(m.thread));
            w_.Key("ts");
            w_.Micros(t);
            w_.Key("name");
            w_.Raw(w_.Name(m.name));
            w_.Raw(",\"cat\":\"user_annotation\",\"s\":\"t\"");
            Annotation(m, phase_domain);
          });
      if (!walk.problem.empty()) stats_.problems.push_back(walk.problem);
      for (const HostOp& op : img.host_ops) {
        const uint64_t begin = clock(op.begin_ns), end = std::max(begin, clock(op.end_ns));
        if (!sel_.Keeps(begin, end)) continue;
        Span(pid, tid_of(op.thread), begin, end, w_.Name(op.name),
             op.kind == HostOpKind::kOperator ? "cpu_op" : "python_function");
        w_.End();
        ++stats_.cpu_ops;
      }
      Cuda(img, k, pid, clock, tid_of);
    }
    if (pi < steps_.size()) {
      for (const StepSpan& s : steps_[pi]) {
        const uint64_t begin = clock(s.begin_ns), end = std::max(begin, clock(s.end_ns));
        if (!sel_.Keeps(begin, end)) continue;
        Span(pid, s.tid, begin, end, "\"ProfilerStep#" + std::to_string(s.number) + "\"", "user_annotation");
        w_.End();
        ++stats_.steps;
      }
    }
  }

  // The (device, stream) of a thread the Kineto reader made for a GPU track: "GPU 0 stream 7".
  bool GpuTrackOf(const TraceImage& img, uint32_t thread, uint32_t* device, uint32_t* stream) const {
    if (thread >= img.threads.size() || img.threads[thread].name == 0) return false;
    const std::string name(trace_.strings.Get(img.threads[thread].name));
    unsigned d = 0, s = 0;
    char tail = 0;
    if (std::sscanf(name.c_str(), "GPU %u stream %u%c", &d, &s, &tail) != 2) return false;
    *device = d;
    *stream = s;
    return true;
  }

  // The args of an NVTX range or mark (a domain other than the default one and trainprof's phases;
  // a category), then End().
  void Annotation(const NvtxEvent& e, StringId phase_domain) {
    const bool domain = e.domain != 0 && e.domain != phase_domain;
    if (domain || (e.category != 0 && e.domain != phase_domain)) {
      w_.Raw(",\"args\":{");
      if (domain) {
        w_.Raw("\"domain\":");
        w_.Raw(w_.Name(e.domain));
      }
      if (e.category != 0 && e.domain != phase_domain) {
        w_.Raw(domain ? ",\"category\":" : "\"category\":");
        w_.Num(e.category);
      }
      w_.Raw("}");
    }
    w_.End();
  }

  template <typename TidOf>
  void Cuda(const TraceImage& img, size_t k, int64_t pid, const ExportClock& clock, TidOf tid_of) {
    auto kept = [&](uint64_t b, uint64_t e) { return sel_.Keeps(clock(b), std::max(clock(b), clock(e))); };
    std::unordered_map<uint64_t, const CudaCall*> calls;  // correlation → kept, returned call
    for (const CudaCall& c : img.cuda.calls) {
      if (!c.returned || !kept(c.begin_ns, c.end_ns)) continue;
      auto [it, fresh] = api_names_.try_emplace(c.name);
      if (fresh) it->second = Quote(CudaApiDisplayName(trace_.strings.Get(c.name)));
      const uint64_t begin = clock(c.begin_ns);
      Span(pid, tid_of(c.thread), begin, std::max(begin, clock(c.end_ns)), it->second,
           c.api == format::CudaApi::kDriver ? "cuda_driver" : "cuda_runtime");
      w_.Raw(",\"args\":{\"External id\":");
      w_.Num(c.correlation);
      w_.Arg("cbid", c.cbid);
      w_.Arg("correlation", c.correlation);
      w_.Raw("}");
      w_.End();
      if (c.correlation != 0) calls.emplace(c.correlation, &c);
    }
    std::unordered_map<uint32_t, uint32_t> context_device;
    for (const GpuContext& c : img.cuda.contexts) context_device[c.id] = c.device;

    for (const GpuKernel& kr : img.cuda.kernels) {
      if (!kept(kr.start_ns, kr.end_ns)) continue;
      auto [it, fresh] = kernel_names_.try_emplace(kr.name);
      if (fresh) it->second = Quote(DemangleKernelName(trace_.strings.Get(kr.name)));
      GpuOp(kr, clock, it->second, "kernel", [&] { w_.KernelArgs(img.cuda.kernel_configs[kr.config]); });
      Flow(calls, k, pid, tid_of, kr.correlation, kr.device, kr.stream, clock(kr.start_ns));
    }
    for (const GpuMemcpy& m : img.cuda.memcpys) {
      if (!kept(m.start_ns, m.end_ns)) continue;
      GpuOp(m, clock, Quote(MemcpyEventName(m)), "gpu_memcpy", [&] { Bytes(m.bytes, m.duration()); });
      Flow(calls, k, pid, tid_of, m.correlation, m.device, m.stream, clock(m.start_ns));
    }
    for (const GpuMemset& m : img.cuda.memsets) {
      if (!kept(m.start_ns, m.end_ns)) continue;
      GpuOp(m, clock, Quote(MemsetEventName(m)), "gpu_memset", [&] { Bytes(m.bytes, m.duration()); });
      Flow(calls, k, pid, tid_of, m.correlation, m.device, m.stream, clock(m.start_ns));
    }
    for (const GpuSync& s : img.cuda.syncs) {
      if (!kept(s.start_ns, s.end_ns)) continue;
      auto dev = context_device.find(s.context);
      const uint32_t device = dev == context_device.end() ? 0 : dev->second;
      // Kineto: a sync without a stream is on the device's track, stream -1 in its args.
      const int64_t stream = s.has_stream ? static_cast<int64_t>(s.stream) : -1;
      NameTrack(device, s.has_stream ? s.stream : 0);
      const uint64_t begin = clock(s.start_ns);
      const std::string quoted = std::string("\"") + SyncName(s.type) + "\"";
      Span(device, s.has_stream ? s.stream : 0, begin, std::max(begin, clock(s.end_ns)), quoted, "cuda_sync");
      GpuArgs(s.correlation, device, s.context, stream);
      w_.Raw(",\"cuda_sync_kind\":");
      w_.Raw(quoted);
      w_.Raw("}");
      w_.End();
      ++stats_.gpu_ops;
    }
  }

  // Names a GPU track (pid = device, tid = stream) the first time it is used.
  void NameTrack(uint32_t device, uint32_t stream) {
    if (named_devices_.insert(device).second) {
      Meta(device, 0, "process_name", "name", Quote("GPU " + std::to_string(device)));
      Meta(device, 0, "process_labels", "labels", Quote("GPU " + std::to_string(device)));
    }
    if (named_streams_.insert({device, stream}).second) {
      Meta(device, stream, "thread_name", "name", Quote("stream " + std::to_string(stream)));
    }
  }

  // ,"args":{"External id":C,"device":D,"context":X,"stream":S,"correlation":C (left open).
  void GpuArgs(uint64_t correlation, uint32_t device, uint32_t context, int64_t stream) {
    w_.Raw(",\"args\":{\"External id\":");
    w_.Num(correlation);
    w_.Arg("device", device);
    w_.Arg("context", context);
    w_.Key("stream");
    w_.SignedNum(stream);
    w_.Arg("correlation", correlation);
  }

  template <typename Op, typename MoreArgs>
  void GpuOp(const Op& op, const ExportClock& clock, std::string_view quoted_name, const char* cat, MoreArgs more) {
    ++stats_.gpu_ops;
    NameTrack(op.device, op.stream);
    const uint64_t begin = clock(op.start_ns);
    Span(op.device, op.stream, begin, std::max(begin, clock(op.end_ns)), quoted_name, cat);
    GpuArgs(op.correlation, op.device, op.context, op.stream);
    more();
    w_.Raw("}");
    w_.End();
  }

  // Kineto: bytes / duration in µs / 1e3 = bytes per ns = GB/s.
  void Bytes(uint64_t bytes, uint64_t duration_ns) {
    w_.Raw(",\"bytes\":");
    w_.Num(bytes);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g",
                  duration_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(duration_ns) : 0.0);
    w_.Raw(",\"memory bandwidth (GB/s)\":");
    w_.Raw(buf);
  }

  // "s" at the launching call, "f" (bp "e") at the GPU work; id = correlation (+ the process's
  // place in the file << 40, past the first process).
  template <typename TidOf>
  void Flow(const std::unordered_map<uint64_t, const CudaCall*>& calls, size_t k, int64_t pid, TidOf tid_of,
            uint64_t correlation, uint32_t device, uint32_t stream, uint64_t gpu_ts) {
    auto it = calls.find(correlation);
    if (correlation == 0 || it == calls.end()) return;
    ++stats_.flows;
    const uint64_t id = (static_cast<uint64_t>(k) << 40) | (correlation & ((uint64_t{1} << 40) - 1));
    const ExportClock& clock = axis_.clocks[file_.processes[k]];
    w_.Begin('s', pid, tid_of(it->second->thread));
    w_.Key("ts");
    w_.Micros(clock(it->second->begin_ns));
    w_.Raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
    w_.Num(id);
    w_.End();
    w_.Begin('f', device, stream);
    w_.Key("ts");
    w_.Micros(gpu_ts);
    w_.Raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\",\"id\":");
    w_.Num(id);
    w_.End();
  }

  const Trace& trace_;
  const TimeAxis& axis_;
  const Selection& sel_;
  const KinetoFile& file_;
  const std::vector<std::vector<StepSpan>>& steps_;
  ChromeWriter w_;
  KinetoExportStats stats_;
  std::unordered_map<StringId, std::string> api_names_, kernel_names_;
  std::set<uint32_t> named_devices_;
  std::set<std::pair<uint32_t, uint32_t>> named_streams_;
};

}  // namespace

KinetoPlan PlanKinetoFiles(const Trace& trace, const Selection& selection, bool gzip) {
  KinetoPlan plan;
  // The process with the rank of process i: itself, or its nearest ancestor with one (-1: none).
  auto ranked = [&](size_t i) {
    int at = static_cast<int>(i);
    while (at >= 0 && !trace.processes[at].rank) at = trace.processes[at].parent;
    return at;
  };
  bool any_rank = false;
  for (size_t i = 0; i < trace.processes.size(); ++i) any_rank = any_rank || (selection.Process(i) && ranked(i) >= 0);
  std::vector<size_t> named_by;  // per file: the process its name comes from
  if (!any_rank) {
    for (size_t i = 0; i < trace.processes.size(); ++i) {
      if (!selection.Process(i)) continue;
      plan.files.push_back({"", {i}, std::nullopt, std::nullopt});
      named_by.push_back(i);
    }
  } else {
    std::map<int64_t, std::vector<size_t>> by_rank;  // rank → its processes, in tree order
    for (size_t i = 0; i < trace.processes.size(); ++i) {
      if (!selection.Process(i)) continue;
      const int at = ranked(i);
      if (at < 0) {
        plan.left_out.push_back(i);
        continue;
      }
      by_rank[*trace.processes[at].rank].push_back(i);
    }
    for (auto& [rank, members] : by_rank) {
      // First: the first process that has the rank itself (not through an ancestor).
      auto own = std::find_if(members.begin(), members.end(), [&](size_t i) { return trace.processes[i].rank.has_value(); });
      if (own != members.end()) std::rotate(members.begin(), own, own + 1);
      const Process& p = trace.processes[members.front()];
      plan.files.push_back({"", members, rank, p.rank ? p.world_size : std::nullopt});
      named_by.push_back(members.front());
    }
  }
  // <host>_<pid>.<ms>.pt.trace.json; equal names (a pid reused within a millisecond, or two
  // processes without host and pid) get "-2", "-3", ... after the milliseconds, which the reader
  // skips (a "_2" after the pid would read back as a host "<host>_<pid>").
  std::map<std::string, int> seen;
  for (size_t f = 0; f < plan.files.size(); ++f) {
    const Process& p = trace.processes[named_by[f]];
    // No host known (an imported trace whose name had none): "<pid>.<ms>...", which the reader
    // takes for no host, not for a host called "unknown".
    std::string worker = p.host.empty() ? std::to_string(p.pid) : FileSafe(p.host) + "_" + std::to_string(p.pid);
    const std::string stem = worker + "." + std::to_string(p.start_realtime_ns / 1'000'000);
    const int n = ++seen[stem];
    plan.files[f].name = stem + (n > 1 ? "-" + std::to_string(n) : std::string()) +
                         (gzip ? ".pt.trace.json.gz" : ".pt.trace.json");
  }
  return plan;
}

KinetoExportStats ExportKineto(const Trace& trace, const TimeAxis& axis, const Selection& selection,
                               const KinetoFile& file, const std::vector<std::vector<StepSpan>>& steps,
                               OutputSink* out, ExportProgress* progress, uint64_t progress_base) {
  KinetoWriter k(trace, axis, selection, file, steps, out);
  k.writer().SetProgress(progress, progress_base);
  return k.Run();
}

}  // namespace trainprof::collector
