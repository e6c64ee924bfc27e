// What part of a trace `trainprof export` writes (every format): `--window`, `--pid`, `--rank`.
//
//   --window START:END   seconds from the run's start (the earliest process start, on the export's
//                        time axis: time_axis.h); START or END may be left out ("5:", ":2.5")
//   --window nvtx:NAME#N the time of the N-th (from 1) NVTX range named NAME of the selected
//                        processes, by start time (push/pop and start/end ranges alike); NAME is
//                        the text before the last '#' (a name with a '#' of its own: "a#1#2");
//                        a NAME no range has may be the report's "DOMAIN:NAME" (ranges of NAME
//                        in that domain only)
//   --pid P, --rank R    repeatable, or comma lists; a process is written if its pid is one of the
//                        --pid values (when given) and its rank one of the --rank values (when given)
//
// A window keeps every event that overlaps it, whole (not clipped): an event [b, e] is kept if
// b < END and (e > START or b == START). Nothing is copied: the exporters ask Selection while they
// stream the loaded trace. Errors name the option, the value and what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/export/time_axis.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// A parsed --window.
struct WindowSpec {
  enum class Kind : uint8_t { kAll, kSeconds, kNvtx };
  Kind kind = Kind::kAll;
  uint64_t begin_ns = 0;           ///< kSeconds: ns after the run's start
  uint64_t end_ns = UINT64_MAX;    ///< kSeconds: UINT64_MAX = to the end
  std::string nvtx_name;           ///< kNvtx
  uint64_t instance = 0;           ///< kNvtx: 1 = the first
  std::string text;                ///< as given (messages)
};

/// Parses `text` ("START:END" or "nvtx:NAME#N"). Returns "" and fills *out, or what is wrong
/// (without the option's name), e.g. "END (1) is not after START (2)".
std::string ParseWindow(std::string_view text, WindowSpec* out);

/// Parses a comma list of integers ≥ `min` ("3", "0,1, 2") and appends them to *out. Returns "" or
/// what is wrong ("'x' is not an integer").
std::string ParseIdList(std::string_view text, int64_t min, std::vector<int64_t>* out);

/// The options as given.
struct SelectionSpec {
  WindowSpec window;
  std::vector<int64_t> pids;   ///< empty: every pid
  std::vector<int64_t> ranks;  ///< empty: every rank (and processes without one)
};

/// A SelectionSpec applied to one trace.
class Selection {
 public:
  /// Everything of `processes` processes.
  explicit Selection(size_t processes = 0) : processes_(processes, true) {}

  bool Process(size_t index) const { return index < processes_.size() && processes_[index]; }
  /// An event from `begin` to `end` (ns on the export's axis, time_axis.h) is in the window.
  bool Keeps(uint64_t begin, uint64_t end) const {
    return begin < end_ns_ && (end > begin_ns_ || begin == begin_ns_);
  }
  bool Keeps(uint64_t t) const { return Keeps(t, t); }
  bool windowed() const { return begin_ns_ != 0 || end_ns_ != UINT64_MAX; }
  uint64_t begin_ns() const { return begin_ns_; }
  uint64_t end_ns() const { return end_ns_; }
  size_t selected() const;

 private:
  friend std::optional<Selection> ResolveSelection(const Trace&, const TimeAxis&, const SelectionSpec&,
                                                   std::string*);
  std::vector<bool> processes_;
  uint64_t begin_ns_ = 0;
  uint64_t end_ns_ = UINT64_MAX;
};

/// Applies `spec` to `trace`. On a value that selects nothing (a pid or rank no process has, an
/// NVTX range that is not there, a window after the run's end) returns nullopt and sets *error,
/// e.g. `--rank 3: no process has rank 3 (ranks: 0, 1)`.
std::optional<Selection> ResolveSelection(const Trace& trace, const TimeAxis& axis, const SelectionSpec& spec,
                                          std::string* error);

}  // namespace trainprof::collector
