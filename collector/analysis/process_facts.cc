#include "collector/analysis/process_facts.h"

#include <algorithm>
#include <string_view>

#include "collector/analysis/collectives.h"
#include "collector/analysis/python_shim_note.h"
#include "trainprof/phases.h"

namespace trainprof::collector {

ProcessFacts FactsOf(const Trace& trace, size_t i) {
  const Process& p = trace.processes[i];
  ProcessFacts f;
  f.pid = p.pid;
  f.host = p.host;
  f.rank = p.rank;
  f.role = p.role;
  f.children = p.children;
  f.start_ns = p.start_ns;
  f.end_ns = p.end_ns;
  f.start_realtime_ns = p.start_realtime_ns;
  f.ddp_backend = DdpBackend(p);
  f.recorded_from_delay = RecordedFromDelay(p);
  if (CaptureLimited(p)) f.captured = CaptureIntervals(p);
  f.kineto = !p.images.empty() && p.first().source == ImageSource::kKineto;
  for (const TraceImage& img : p.images) {
    f.spawned = f.spawned || std::find(img.argv.begin(), img.argv.end(), "--multiprocessing-fork") != img.argv.end();
    std::string_view exe = img.executable;
    if (exe.empty() && !img.argv.empty()) exe = img.argv[0];
    exe.remove_prefix(exe.rfind('/') + 1);  // npos + 1 == 0: no folder
    f.python = f.python || exe.starts_with("python");
    f.cuda = f.cuda || img.cuda.any();
  }
  f.python_shim_off = PythonShimOff(p);
  return f;
}

ProcessPhases PhasesOf(const Trace& trace, size_t i) {
  return CollectPhases(trace.processes[i], trace.strings.Find(format::kPhaseDomain), &trace.strings);
}

}  // namespace trainprof::collector
