#include "collector/export/export_chrome.h"

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/export/chrome_writer.h"
#include "collector/export/export_chrome_cuda.h"

namespace trainprof::collector {
namespace {

std::string ProcessLabel(const Process& p) {
  std::string label;
  if (p.rank) {
    label = "rank " + std::to_string(*p.rank);
  } else if (!p.role.empty()) {
    label = p.role;
  }
  std::string cmd;
  for (const std::string& a : p.first().argv) {
    if (!cmd.empty()) cmd += ' ';
    cmd += a;
    if (cmd.size() > 120) {
      cmd += "...";
      break;
    }
  }
  if (cmd.empty()) cmd = p.first().executable;
  if (!label.empty() && label != "main") cmd = label + ": " + cmd;
  return cmd;
}

}  // namespace

ChromeExportStats ExportChrome(const Trace& trace, OutputSink* out) {
  ChromeExportStats stats;
  ChromeWriter w(trace, out);

  // One time axis: each host's monotonic clock mapped onto realtime by its earliest process.
  std::map<std::string, std::pair<uint64_t, int64_t>> earliest;  // host -> (start_ns, realtime - monotonic)
  for (const Process& p : trace.processes) {
    const int64_t offset = static_cast<int64_t>(p.start_realtime_ns) - static_cast<int64_t>(p.start_ns);
    auto [it, fresh] = earliest.emplace(p.host, std::make_pair(p.start_ns, offset));
    if (!fresh && p.start_ns < it->second.first) it->second = {p.start_ns, offset};
  }
  std::map<std::string, int64_t> host_offset;
  for (const auto& [host, e] : earliest) host_offset[host] = e.second;
  uint64_t zero = UINT64_MAX;
  auto real = [&](const Process& p, uint64_t t) -> int64_t { return static_cast<int64_t>(t) + host_offset[p.host]; };
  for (const Process& p : trace.processes) {
    int64_t r = real(p, p.start_ns);
    if (r >= 0 && static_cast<uint64_t>(r) < zero) zero = static_cast<uint64_t>(r);
  }
  if (zero == UINT64_MAX) zero = 0;
  auto ts = [&](const Process& p, uint64_t t) -> uint64_t {
    int64_t r = real(p, t) - static_cast<int64_t>(zero);
    return r > 0 ? static_cast<uint64_t>(r) : 0;
  };

  // Unique pids: the same pid on two hosts gets a distinct number.
  std::unordered_set<int64_t> used;
  std::vector<int64_t> out_pid(trace.processes.size());
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    int64_t pid = trace.processes[i].pid;
    while (!used.insert(pid).second) pid += 10'000'000;
    out_pid[i] = pid;
  }

  w.Raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"trainprof\",\"start_realtime_ns\":");
  w.Num(zero);
  w.Raw("},\"traceEvents\":[");

  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    const Process& p = trace.processes[pi];
    const int64_t pid = out_pid[pi];
    w.Begin('M', pid, 0);
    w.Raw(",\"name\":\"process_name\",\"args\":{\"name\":");
    w.Raw(Quote(ProcessLabel(p)));
    w.Raw("}");
    w.End();
    w.Begin('M', pid, 0);
    w.Raw(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
    w.Num(pi);
    w.Raw("}");
    w.End();
    if (p.rank) {
      w.Begin('M', pid, 0);
      w.Raw(",\"name\":\"process_labels\",\"args\":{\"labels\":\"rank ");
      w.SignedNum(*p.rank);
      w.Raw("\"}");
      w.End();
    }

    std::unordered_set<uint32_t> named_threads;
    for (const TraceImage& img : p.images) {
      for (const ThreadInfo& t : img.threads) {
        if (t.name == 0 || !named_threads.insert(t.tid).second) continue;
        w.Begin('M', pid, t.tid);
        w.Raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
        w.Raw(w.Name(t.name));
        w.Raw("}");
        w.End();
      }

      // NVTX: push/pop matched per (thread, domain); start/end as async events, for the ids that
      // have both (an end without its start, or a start never ended, is left out and counted).
      std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> start_end;  // id → (starts, ends)
      for (const NvtxEvent& e : img.nvtx) {
        if (e.kind() == NvtxKind::kStart) ++start_end[e.range_id].first;
        if (e.kind() == NvtxKind::kEnd) ++start_end[e.range_id].second;
      }
      for (const auto& [id, n] : start_end) stats.unmatched += std::max(n.first, n.second) - std::min(n.first, n.second);
      std::unordered_map<uint64_t, std::vector<const NvtxEvent*>> open;
      uint64_t pushes_open = 0;
      for (const NvtxEvent& e : img.nvtx) {
        const uint32_t tid = e.thread < img.threads.size() ? img.threads[e.thread].tid : 0;
        const uint64_t key = (static_cast<uint64_t>(e.thread) << 32) | e.domain;
        switch (e.kind()) {
          case NvtxKind::kPush:
            open[key].push_back(&e);
            ++pushes_open;
            break;
          case NvtxKind::kPop: {
            auto it = open.find(key);
            if (it == open.end() || it->second.empty()) {
              ++stats.unmatched;
              break;
            }
            const NvtxEvent* b = it->second.back();
            it->second.pop_back();
            --pushes_open;
            const uint64_t begin = ts(p, b->time_ns);
            const uint64_t end = std::max(begin, ts(p, e.time_ns));
            w.Begin('X', pid, tid);
            w.Key("ts");
            w.Micros(begin);
            w.Key("dur");
            w.Micros(end - begin);
            w.Key("name");
            w.Raw(w.Name(b->name));
            w.Key("cat");
            w.Raw(b->domain == 0 ? std::string_view("\"nvtx\"") : std::string_view(w.Name(b->domain)));
            if (b->category != 0) {
              w.Raw(",\"args\":{\"category\":");
              w.Num(b->category);
              w.Raw("}");
            }
            w.End();
            break;
          }
          case NvtxKind::kMark:
            w.Begin('i', pid, tid);
            w.Key("ts");
            w.Micros(ts(p, e.time_ns));
            w.Key("name");
            w.Raw(w.Name(e.name));
            w.Key("cat");
            w.Raw(e.domain == 0 ? std::string_view("\"nvtx\"") : std::string_view(w.Name(e.domain)));
            w.Raw(",\"s\":\"t\"");
            w.End();
            break;
          case NvtxKind::kStart:
          case NvtxKind::kEnd: {
            const auto& n = start_end[e.range_id];
            if (n.first == 0 || n.second == 0) break;
            w.Begin(e.kind() == NvtxKind::kStart ? 'b' : 'e', pid, tid);
            w.Key("ts");
            w.Micros(ts(p, e.time_ns));
            w.Raw(",\"cat\":\"nvtx\",\"id\":\"");
            w.SignedNum(pid);
            w.Raw(":");
            w.Num(e.range_id);
            w.Raw("\"");
            if (e.kind() == NvtxKind::kStart) {
              w.Key("name");
              w.Raw(w.Name(e.name));
            }
            w.End();
            break;
          }
        }
      }
      stats.unmatched += pushes_open;

      ChromeClock clock{host_offset[p.host], zero};
      ChromeCudaStats cuda = ExportChromeCuda(p, img, pi, pid, clock, &w);
      stats.cuda_api_calls += cuda.api_calls;
      stats.gpu_ops += cuda.gpu_ops;
      stats.flows += cuda.flows;

      for (const ProcessEvent& e : img.process_events) {
        std::string name;
        switch (e.kind) {
          case ProcessEventKind::kFork: name = "fork: child " + std::to_string(e.value); break;
          case ProcessEventKind::kExec: name = "exec " + std::string(trace.strings.Get(e.text)); break;
          case ProcessEventKind::kProcessEnd:
            name = static_cast<EndKind>(e.what) == EndKind::kSignal ? "killed by signal " + std::to_string(e.code)
                                                                    : "exit " + std::to_string(e.code);
            break;
          case ProcessEventKind::kChildExit: name = "child " + std::to_string(e.value) + " reaped"; break;
          case ProcessEventKind::kMisuse: continue;
        }
        const uint32_t tid = e.thread < img.threads.size() ? img.threads[e.thread].tid : 0;
        w.Begin('i', pid, tid);
        w.Key("ts");
        w.Micros(ts(p, e.time_ns));
        w.Key("name");
        w.Raw(Quote(name));
        w.Raw(",\"cat\":\"process\",\"s\":\"p\"");
        w.End();
      }
    }
  }
  w.Raw("\n]}\n");
  w.Flush();
  stats.events = w.events();
  return stats;
}

}  // namespace trainprof::collector
