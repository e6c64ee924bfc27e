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
// A report groups the names of a range table whose patterns are equal when at least two distinct
// names share the pattern (collector/report.cc); CUDA kernel names are never grouped (template
// arguments carry numbers that matter).
#pragma once

#include <string>
#include <string_view>

namespace trainprof::collector {

/// The text "<N>" that stands for a number.
inline constexpr std::string_view kNumberPlaceholder = "<N>";

/// `name` with each number replaced by "<N>"; returns false (and leaves *pattern empty) when
/// `name` holds no number, so that it can never be grouped.
bool NamePattern(std::string_view name, std::string* pattern);

}  // namespace trainprof::collector
