// The progress bar of a long `trainprof export`, on stderr when it is a terminal (isatty), never
// otherwise (a log or a pipe gets no carriage returns):
//
//   trainprof: exporting  42% [########............]  1234567 of 2939000 events
//
// It appears only once the export has run for `delay_ns` (short exports print nothing), is redrawn
// when the percentage changes, and Finish() erases it. The clock and the output are parameters so
// that the drawing is tested without a terminal or a timer (tests/launcher/progress_bar_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace trainprof::launcher {

class ProgressBar {
 public:
  using Clock = std::function<uint64_t()>;               ///< ns, monotonic
  using Write = std::function<void(std::string_view)>;

  /// `total`: the expected number of events (0: the bar never shows).
  ProgressBar(uint64_t total, Write write, Clock clock, uint64_t delay_ns = 500'000'000);

  /// A bar on fd 2 with the steady clock, or one that never draws when fd 2 is not a terminal.
  static ProgressBar ForStderr(uint64_t total);

  void Update(uint64_t done);
  /// Erases the bar if it was drawn.
  void Finish();

  /// The line for `done` of `total` (no "\r"): what Update draws.
  static std::string Line(uint64_t done, uint64_t total);

 private:
  uint64_t total_;
  Write write_;
  Clock clock_;
  uint64_t start_ns_;
  uint64_t delay_ns_;
  int shown_percent_ = -1;
  bool drawn_ = false;
};

}  // namespace trainprof::launcher
