#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace trainprof::launcher {

ProgressBar::ProgressBar(uint64_t total, Write write, Clock clock, uint64_t delay_ns, std::string verb,
                         std::string unit)
    : total_(total),
      verb_(std::move(verb)),
      unit_(std::move(unit)),
      write_(std::move(write)),
      clock_(std::move(clock)),
      delay_ns_(delay_ns) {
  start_ns_ = clock_ ? clock_() : 0;
}

ProgressBar ProgressBar::ForStderr(uint64_t total, uint64_t delay_ns, std::string verb, std::string unit) {
  if (isatty(STDERR_FILENO) != 1) return ProgressBar(0, nullptr, nullptr);
  auto write = [](std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::write(STDERR_FILENO, s.data(), s.size());
      if (n <= 0) return;  // a progress bar is not worth an error
      s.remove_prefix(static_cast<size_t>(n));
    }
  };
  auto clock = [] {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  };
  return ProgressBar(total, write, clock, delay_ns, std::move(verb), std::move(unit));
}

std::string ProgressBar::Line(uint64_t done, uint64_t total, std::string_view verb, std::string_view unit) {
  done = std::min(done, total);
  const int percent = total == 0 ? 100 : static_cast<int>(done * 100 / total);
  constexpr int kWidth = 20;
  const int filled = percent * kWidth / 100;
  std::string line = "trainprof: " + std::string(verb) + " ";
  for (size_t i = verb.size(); i < 9; ++i) line += ' ';  // "reading" and "exporting" bars line up
  if (percent < 100) line += ' ';
  if (percent < 10) line += ' ';
  line += std::to_string(percent) + "% [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]  " +
          std::to_string(done) + " of " + std::to_string(total) + " " + std::string(unit);
  return line;
}

void ProgressBar::Update(uint64_t done) {
  if (total_ == 0 || !write_ || !clock_) return;
  if (!drawn_ && clock_() - start_ns_ < delay_ns_) return;
  const int percent = static_cast<int>(std::min(done, total_) * 100 / total_);
  if (percent == shown_percent_) return;
  shown_percent_ = percent;
  drawn_ = true;
  write_("\r" + Line(done, total_, verb_, unit_) + "\033[K");
}

void ProgressBar::Note(std::string_view text) {
  if (!write_) return;
  drawn_ = true;
  write_("\rtrainprof: " + std::string(text) + "\033[K");
}

void ProgressBar::NoteOnceLate(std::string_view text) {
  if (drawn_ || !write_ || !clock_ || clock_() - start_ns_ < delay_ns_) return;
  Note(text);
}

void ProgressBar::Finish() {
  if (drawn_) write_("\r\033[K");
  drawn_ = false;
}

}  // namespace trainprof::launcher
