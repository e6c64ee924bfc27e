// The timeline export's `args.stack` (export_chrome.h): the stack of an event with one (an NVTX
// range or mark opened with `--backtrace=nvtx`, a CUDA call with `--backtrace=cuda`), as a JSON
// array of frame strings, innermost first, trainprof's own frames left out:
//   "stack": ["load_batch() (callsites.cc:20)", "main (callsites.cc:40)", "__libc_start_call_main"]
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "collector/model/model.h"
#include "collector/symbols/symbolizer.h"

namespace trainprof::collector {

class StackArgs {
 public:
  explicit StackArgs(const StringPool& strings) : symbols_(strings) {}
  /// `"stack":[...]` of stack `id` of `img` (JSON, without a leading comma); "" for id 0 and for a
  /// stack with no frame to show (an id the image does not define).
  const std::string& Member(const TraceImage& img, uint64_t id);

 private:
  Symbolizer symbols_;
  std::map<std::pair<const TraceImage*, uint64_t>, std::string> members_;
  std::string none_;
};

}  // namespace trainprof::collector
