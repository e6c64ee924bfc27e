#include "collector/export/export_folded.h"

#include <map>
#include <string>

#include "collector/model/stack_uses.h"
#include "collector/symbols/sample_frames.h"
#include "collector/symbols/symbolizer.h"

namespace trainprof::collector {
namespace {

std::string FoldedFrame(std::string s) {
  for (char& c : s) {
    if (c == ';' || c == '\n' || c == '\r') c = ':';
  }
  return s;
}

/// The samples' stacks: one line per distinct frame list, root first.
void SampleLines(const Trace& trace, const Selection& selection, Symbolizer* symbols,
                 std::map<std::string, uint64_t>* lines, FoldedStats* stats) {
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    if (!selection.Process(i)) continue;
    for (const TraceImage& img : trace.processes[i].images) {
      std::map<uint64_t, uint64_t> per_stack;  // stack id → samples: each stack symbolized once
      for (const Sample& s : img.stacks.samples) ++per_stack[s.stack];
      for (const auto& [id, n] : per_stack) {
        const std::vector<SymbolFrame> frames = SampleFrames(img.stacks, id, symbols);
        std::string line;
        for (size_t k = frames.size(); k-- > 0;) line += FoldedFrame(frames[k].Label()) + (k > 0 ? ";" : "");
        (*lines)[line] += n;
        stats->events += n;
      }
    }
  }
}

}  // namespace

bool HasSamples(const Trace& trace, const Selection& selection) {
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    if (!selection.Process(i)) continue;
    for (const TraceImage& img : trace.processes[i].images) {
      if (!img.stacks.samples.empty()) return true;
    }
  }
  return false;
}

FoldedStats ExportFolded(const Trace& trace, const Selection& selection, FoldedWeight weight, OutputSink* out,
                         FoldedSource source) {
  Symbolizer symbols(trace.strings);
  std::map<std::string, uint64_t> lines;
  FoldedStats stats;
  stats.samples = source == FoldedSource::kSamples || (source == FoldedSource::kAuto && HasSamples(trace, selection));
  if (stats.samples) SampleLines(trace, selection, &symbols, &lines, &stats);
  for (size_t i = 0; !stats.samples && i < trace.processes.size(); ++i) {
    if (!selection.Process(i)) continue;
    for (const TraceImage& img : trace.processes[i].images) {
      for (const NamedStackUse& u : StackUsesOf(img, trace.strings)) {
        const uint64_t w = weight == FoldedWeight::kCalls ? u.count : u.total_ns;
        if (w == 0) continue;
        const ShownStack shown = symbols.Show(img.stacks, u.stack);
        std::string line;
        if (!shown.known) line = "<unknown stack>;";
        for (size_t k = shown.frames.size(); k-- > shown.call_site;) line += FoldedFrame(shown.frames[k].Label()) + ';';
        line += FoldedFrame(u.name);
        lines[line] += w;
        stats.events += u.count;
      }
    }
  }
  for (const auto& [line, w] : lines) {
    out->Write(line);
    out->Write(" ");
    out->Write(std::to_string(w));
    out->Write("\n");
  }
  stats.lines = lines.size();
  return stats;
}

}  // namespace trainprof::collector
