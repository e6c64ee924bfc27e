// The report's warnings and its `stats` counts, from the catalogue of losses (model/losses.def):
// each loss found is added once, with what it is counted per; the lines are made from the
// catalogue's texts, in its order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/model/losses.h"

namespace trainprof::collector {

class LossLog {
 public:
  /// Counts `n` of `kind` (nothing when n is 0) and warns about it. `subject`: the file's index
  /// (LossScope::kFile) or the process's (kProcess), which orders the lines; `who`: what the line
  /// starts with ("FILE", "pid 123"; "" for none); `detail`: the text for {detail}.
  void Add(Loss kind, uint64_t n, size_t subject = 0, std::string who = {}, std::string detail = {});
  /// Counts without a warning line (the counter is shown elsewhere, or warned about in sum).
  void Count(Loss kind, uint64_t n) { totals_[kind] += n; }

  /// Every count added, summed over the trace (the JSON `stats` object).
  const LossCounts& totals() const { return totals_; }

  /// The warning lines: by scope (files, trace, processes summed, each process), then by subject,
  /// then in catalogue order; the nonzero entries of one group and subject on one line.
  std::vector<std::string> Warnings() const;

 private:
  struct Note {
    Loss kind;
    size_t subject;
    uint64_t n;
    std::string who;
    std::string detail;
  };
  LossCounts totals_;
  std::vector<Note> notes_;
};

}  // namespace trainprof::collector
