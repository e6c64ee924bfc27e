#include "collector/read/nvtx_stream.h"

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
// appends them in event order, so one cursor walks it).
void FromVector(const TraceImage& img, const std::function<void(const NvtxEvent&, uint64_t)>& on_event) {
  const std::vector<NvtxStack>& stacks = img.stacks.nvtx;
  size_t cursor = 0;
  for (size_t i = 0; i < img.nvtx.size(); ++i) {
    while (cursor < stacks.size() && stacks[cursor].event < i) ++cursor;
    on_event(img.nvtx[i], cursor < stacks.size() && stacks[cursor].event == i ? stacks[cursor].stack : 0);
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
