// Range names that differ only in embedded numbers, grouped: "step 17", "step 18" → "step <N>".
// Programs often format a counter into an NVTX range name (`nvtxRangePushA("step %d")`,
// torch.autograd.profiler.emit_nvtx's "seq = 123"); a table with a row per step helps nobody.
//
// The rule (docs/report.md, "Name groups"): a number is a maximal run of ASCII decimal digits,
// or 0x/0X followed by hex digits, that is not glued to a word: the byte before it is not an ASCII
// letter or digit, and the byte after it is not an ASCII letter. Each number becomes "<N>":
//
//   "step 17"             → "step <N>"              "batch_3/epoch_2" → "batch_<N>/epoch_<N>"
//   "seq = 123, op 0x7f3a" → "seq = <N>, op <N>"    "layer1.0.conv1"  → "layer1.<N>.conv1"
//   "conv2d_3x3", "fp16", "layer3", "step17", "17th" → unchanged (the digits belong to a word)
//
// A report groups the range names that share a pattern when GroupsNames says so: at least two
// names, and either many of them (kGroupAlways) or names called rarely (at most kRareCalls calls
// each on average: a counter formatted into the name, "step 17"). So "worker_0" .. "worker_31",
// each called thousands of times, stay apart (they name threads, workers, layers), while a
// million one-call "step <N>" names become one row. CUDA kernel names are never grouped
// (template arguments carry numbers that matter).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainprof::collector {

/// The text "<N>" that stands for a number.
inline constexpr std::string_view kNumberPlaceholder = "<N>";

/// `name` with each number replaced by "<N>"; returns false (and leaves *pattern empty) when
/// `name` holds no number, so that it can never be grouped.
bool NamePattern(std::string_view name, std::string* pattern);

inline constexpr uint64_t kGroupAlways = 64;  ///< distinct names that make a group whatever their calls
inline constexpr uint64_t kRareCalls = 2;     ///< calls per name (mean) at or under which 2 names group

/// Whether `names` distinct names sharing a pattern, with `calls` calls in all, form a group.
inline bool GroupsNames(uint64_t names, uint64_t calls) {
  return names >= 2 && (names >= kGroupAlways || calls <= kRareCalls * names);
}

}  // namespace trainprof::collector
