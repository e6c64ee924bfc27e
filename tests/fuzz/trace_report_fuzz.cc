// Fuzz target "report": what `trainprof report` does with any bytes read as trace files
// (fuzz_input.h): read and merge them (as trace_reader_fuzz.cc does), and unless no file is usable,
// analyse them (process table, NVTX statistics, training steps, input pipeline, ranks, bottleneck
// verdict) and render the report as text, JSON and CSV. It reaches the code that consumes the
// reader's output, at a tenth of the reader target's speed (the renderers dominate).
// Built with libFuzzer (TRAINPROF_FUZZ=ON, scripts/fuzz) and as a replay test (replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainprof::collector;
  // As launcher/report_command.cc reads (with TRAINPROF_CUDA_WINDOW_RECORDS set, the windowed read).
  const Trace trace = LoadTraceBytesForReport(trainprof::fuzz::SplitFiles(trainprof::fuzz::Input(data, size)));

  // As launcher/report_command.cc: warn of damage, stop when no file is usable.
  size_t usable = 0, described = 0;
  for (const FileStatus& f : trace.files) {
    if (f.usable) ++usable;
    if (f.damaged()) described += DescribeDamage(f).size();
  }
  if (usable == 0) return 0;

  // --by-process and --top vary with the input's length, so that every input is reproducible.
  ReportOptions options;
  options.by_process = size % 2 == 1;
  options.top = size % 3;  // 0 = all rows
  const Report report = Analyze(trace, options);
  const std::string text = RenderText(report);
  const std::string json = RenderJson(report);
  const std::vector<CsvTable> csv = RenderCsv(report);
  volatile size_t sink = described + text.size() + json.size() + csv.size();  // keep the work observable
  (void)sink;
  return 0;
}
