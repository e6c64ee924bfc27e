#include "collector/read/nvtx_stream.h"

#include <algorithm>
#include <unordered_map>

#include "collector/read/trace_reader.h"

namespace trainprof::collector {
namespace {

class CallbackSink final : public NvtxSink {
 public:
  explicit CallbackSink(const std::function<void(const NvtxEvent&, uint64_t)>& f) : f_(f) {}
  void Event(const NvtxEvent& e, uint64_t stack) override {
    ++events_;
    f_(e, stack);
  }
  uint64_t events() const { return events_; }

 private:
  const std::function<void(const NvtxEvent&, uint64_t)>& f_;
  uint64_t events_ = 0;
};

// The kept events, each with its first EVENT_STACK (img.stacks.nvtx, by event index: the reader
// appends in event order, so one cursor walks it; a hand-made image out of order gets a map).
void FromVector(const TraceImage& img, const std::function<void(const NvtxEvent&, uint64_t)>& on_event) {
  const std::vector<NvtxStack>& stacks = img.stacks.nvtx;
  const bool sorted = std::is_sorted(stacks.begin(), stacks.end(),
                                     [](const NvtxStack& a, const NvtxStack& b) { return a.event < b.event; });
  std::unordered_map<uint64_t, uint64_t> by_event;
  if (!sorted) {
    for (const NvtxStack& s : stacks) by_event.emplace(s.event, s.stack);
  }
  size_t cursor = 0;
  for (size_t i = 0; i < img.nvtx.size(); ++i) {
    uint64_t stack = 0;
    if (sorted) {
      while (cursor < stacks.size() && stacks[cursor].event < i) ++cursor;
      if (cursor < stacks.size() && stacks[cursor].event == i) stack = stacks[cursor].stack;
    } else if (auto it = by_event.find(i); it != by_event.end()) {
      stack = it->second;
    }
    on_event(img.nvtx[i], stack);
  }
}

}  // namespace

std::string ForEachNvtxEvent(const Trace& trace, const TraceImage& img,
                             const std::function<void(const NvtxEvent& e, uint64_t stack)>& on_event) {
  if (img.nvtx_complete || img.nvtx_events == 0 || img.file >= trace.files.size()) {
    FromVector(img, on_event);
    return "";
  }
  const std::string& path = trace.files[img.file].path;
  CallbackSink sink(on_event);
  StringPool scratch;  // the second read's own names; the events are named through img's refs
  ReadOptions options{.keep = KeepNvtx::kPhases, .keep_cuda = KeepCuda::kNone, .nvtx_sink = &sink, .nvtx_names = &img};
  const ReadResult again = ReadTraceFile(path, &scratch, options);
  if (!again.status.usable) return path + ": reading its NVTX events again failed: " + DescribeDamage(again.status);
  if (sink.events() != img.nvtx_events) {
    return path + ": the file changed since it was loaded (" + std::to_string(img.nvtx_events) + " NVTX events, now " +
           std::to_string(sink.events()) + "): its ranges may be wrong";
  }
  return "";
}

}  // namespace trainprof::collector
