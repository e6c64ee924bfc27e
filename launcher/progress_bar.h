// The progress bar of a long `trainprof export` or `report`, on stderr when it is a terminal
// (isatty), never otherwise (a log or a pipe gets no carriage returns):
//
//   trainprof: exporting  42% [########............]  1234567 of 2939000 events
//   trainprof: reading    42% [########............]  430 of 1024 files
//
// It appears only once the work has run for `delay_ns` (short runs print nothing), is redrawn when
// the percentage changes, and Finish() erases it. Note() draws a line of text in its place (what
// follows, without a percentage: "analysing 1024 processes"), erased by Finish() too. The clock and the output are parameters so
// that the drawing is tested without a terminal or a timer (tests/launcher/progress_bar_test.cc).
#pragma once
#include <thread>
#include <system_error>
#include <mutex>
#include <condition_variable>
#include <chrono>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace trainprof::launcher {

class ProgressBar {
 public:
  using Clock = std::function<uint64_t()>;               ///< ns, monotonic
  using Write = std::function<void(std::string_view)>;

  /// `total`: the expected number of `unit` (0: the bar never shows); `verb`: what is being done.
  ProgressBar(uint64_t total, Write write, Clock clock, uint64_t delay_ns = 500'000'000, std::string verb = "exporting",
              std::string unit = "events");

  /// A bar on fd 2 with the steady clock, or one that never draws when fd 2 is not a terminal.
  static ProgressBar ForStderr(uint64_t total, uint64_t delay_ns = 500'000'000, std::string verb = "exporting",
                               std::string unit = "events");

  void Update(uint64_t done);
  /// Draws "trainprof: <text>" (no percentage) in the bar's place, on a terminal.
  void Note(std::string_view text);
  /// Note(text) once the delay has passed since the bar was made, unless something is drawn.
  void NoteOnceLate(std::string_view text);
  /// Erases the bar or note if one was drawn.
  void Finish();
  bool drawn() const { return drawn_; }

  /// The line for `done` of `total` (no "\r"): what Update draws.
  static std::string Line(uint64_t done, uint64_t total, std::string_view verb = "exporting",
                          std::string_view unit = "events");

 private:
  uint64_t total_;
  std::string verb_, unit_;
  Write write_;
  Clock clock_;
  uint64_t start_ns_;
  uint64_t delay_ns_;
  int shown_percent_ = -1;
  bool drawn_ = false;
};

// Calls `tick` every 100 ms on a thread of its own until destroyed (a progress bar's redraws while
// the calling thread works).
class EveryTenthOfASecond {
 public:
  explicit EveryTenthOfASecond(std::function<void()> tick) : tick_(std::move(tick)) {
    try {
      thread_ = std::thread([this] {
        std::unique_lock<std::mutex> lock(mu_);
        while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) tick_();
      });
    } catch (const std::system_error&) {
      // no thread: no progress bar, the work goes on
    }
  }
  ~EveryTenthOfASecond() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  EveryTenthOfASecond(const EveryTenthOfASecond&) = delete;
  EveryTenthOfASecond& operator=(const EveryTenthOfASecond&) = delete;

 private:
  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace trainprof::launcher
