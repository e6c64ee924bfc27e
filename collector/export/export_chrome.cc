#include "collector/export/export_chrome.h"

#include "collector/export/stack_args.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "collector/export/chrome_writer.h"
#include "collector/export/export_chrome_cuda.h"
#include "collector/export/nvtx_walk.h"
#include "collector/export/process_label.h"
#include "collector/export/time_axis.h"

namespace trainprof::collector {
namespace {

// The name of a process-end marker: its record's status. Where the library saw main return but
// not the status (EndKind::kReturned), the status the model has from the parent's waitpid() or
// the launcher (Process::exit, the report's Exit column), for the last image's end.
std::string EndMarkerName(const Process& p, const TraceImage& img, const ProcessEvent& e) {
  EndKind kind = static_cast<EndKind>(e.what);
  int64_t code = e.code;
  if (kind == EndKind::kReturned) {
    const bool known = &img == &p.last() && (p.exit.kind == EndKind::kExit || p.exit.kind == EndKind::kSignal);
    if (!known) return "main returned (exit status not seen)";
    kind = p.exit.kind;
    code = p.exit.code;
  }
  return kind == EndKind::kSignal ? "killed by signal " + std::to_string(code) : "exit " + std::to_string(code);
}

}  // namespace

ChromeExportStats ExportChrome(const Trace& trace, OutputSink* out) {
  return ExportChrome(trace, out, Selection(trace.processes.size()), nullptr);
}

ChromeExportStats ExportChrome(const Trace& trace, OutputSink* out, const Selection& sel, ExportProgress* progress) {
  ChromeExportStats stats;
  ChromeWriter w(trace, out);
  w.SetProgress(progress, 0);
  StackArgs stack_args(trace.strings);
  w.stack_args = &stack_args;

  const TimeAxis axis = MakeTimeAxis(trace);
  const uint64_t zero = axis.zero;

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
    if (!sel.Process(pi)) continue;
    const Process& p = trace.processes[pi];
    const int64_t pid = out_pid[pi];
    const ExportClock& ts = axis.clocks[pi];
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

      // NVTX, as it is read (read/nvtx_stream.h): push/pop matched per (thread, domain) as
      // complete events; start/end matched by range id as async events "b"/"e", both written at
      // the end (an end without its start, or a start never ended, is left out and counted). A
      // window keeps a range if it overlaps it.
      auto tid_of = [&](const NvtxEvent& e) { return e.thread < img.threads.size() ? img.threads[e.thread].tid : 0u; };
      auto category = [&](const NvtxEvent& e) {
        w.Key("cat");
        w.Raw(e.domain == 0 ? std::string_view("\"nvtx\"") : std::string_view(w.Name(e.domain)));
      };
      // "b" or "e" of a start/end range: the category is the start's domain (an end names none),
      // the start's stack on the "b".
      auto async = [&](const NvtxEvent& e, const NvtxEvent& start, uint64_t time, uint64_t stack) {
        w.Begin(e.kind() == NvtxKind::kStart ? 'b' : 'e', pid, tid_of(e));
        w.Key("ts");
        w.Micros(time);
        category(start);
        w.Raw(",\"id\":\"");
        w.SignedNum(pid);
        w.Raw(":");
        w.Num(e.range_id);
        w.Raw("\"");
        if (e.kind() == NvtxKind::kStart) {
          w.Key("name");
          w.Raw(w.Name(e.name));
          if (const std::string& args = stack_args.Member(img, stack); !args.empty()) {
            w.Raw(",\"args\":{");
            w.Raw(args);
            w.Raw("}");
          }
        }
        w.End();
      };
      const NvtxWalk walk = WalkNvtx(
          trace, img,
          [&](const NvtxEvent& b, const NvtxEvent& e, uint64_t b_stack) {
            const uint64_t begin = ts(b.time_ns);
            const uint64_t end = std::max(begin, ts(e.time_ns));
            if (!sel.Keeps(begin, end)) return;
            if (b.kind() == NvtxKind::kStart) {
              async(b, b, begin, b_stack);
              async(e, b, ts(e.time_ns), 0);
              return;
            }
            w.Complete(pid, tid_of(e), begin, end);
            w.Key("name");
            w.Raw(w.Name(b.name));
            category(b);
            const std::string& stack = stack_args.Member(img, b_stack);
            if (b.category != 0 || !stack.empty()) {
              w.Raw(",\"args\":{");
              if (b.category != 0) {
                w.Raw("\"category\":");
                w.Num(b.category);
                if (!stack.empty()) w.Raw(",");
              }
              w.Raw(stack);
              w.Raw("}");
            }
            w.End();
          },
          [&](const NvtxEvent& e, uint64_t stack) {
            if (!sel.Keeps(ts(e.time_ns))) return;
            w.Begin('i', pid, tid_of(e));
            w.Key("ts");
            w.Micros(ts(e.time_ns));
            w.Key("name");
            w.Raw(w.Name(e.name));
            category(e);
            w.Raw(",\"s\":\"t\"");
            if (const std::string& args = stack_args.Member(img, stack); !args.empty()) {
              w.Raw(",\"args\":{");
              w.Raw(args);
              w.Raw("}");
            }
            w.End();
          });
      stats.unmatched += walk.unmatched;
      if (!walk.problem.empty()) stats.problems.push_back(walk.problem);

      ChromeCudaStats cuda = ExportChromeCuda(p, img, pi, pid, ts, sel, &w);
      stats.cuda_api_calls += cuda.api_calls;
      stats.gpu_ops += cuda.gpu_ops;
      stats.flows += cuda.flows;

      for (const ProcessEvent& e : img.process_events) {
        std::string name;
        switch (e.kind) {
          case ProcessEventKind::kFork: name = "fork: child " + std::to_string(e.value); break;
          case ProcessEventKind::kExec: name = "exec " + std::string(trace.strings.Get(e.text)); break;
          case ProcessEventKind::kProcessEnd: name = EndMarkerName(p, img, e); break;
          case ProcessEventKind::kChildExit: name = "child " + std::to_string(e.value) + " reaped"; break;
          case ProcessEventKind::kMisuse: continue;
        }
        if (!sel.Keeps(ts(e.time_ns))) continue;
        const uint32_t tid = e.thread < img.threads.size() ? img.threads[e.thread].tid : 0;
        w.Begin('i', pid, tid);
        w.Key("ts");
        w.Micros(ts(e.time_ns));
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
