// The catalogue of lost and damaged data (losses.def): one entry per counter, with its key,
// severity, scope, warning text and description. Everything that names such a counter derives
// from it: the report's warnings (report/warnings.h), the JSON `stats` object and stats.csv
// (render/), the table of docs/report-schema.md ("stats"; LossCatalogueMarkdown, checked by a test).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trainprof::collector {

/// How bad a loss is (Perfetto's kInfo / kDataLoss / kError).
enum class LossSeverity : uint8_t {
  kInfo,      ///< worth knowing; nothing is missing
  kDataLoss,  ///< the trace is correct but misses data
  kDamage,    ///< what is there is wrong (damaged files, undecodable records)
};

/// What a loss is counted per, and where its warning goes (losses.def).
enum class LossScope : uint8_t { kPath, kFile, kTrace, kProcesses, kProcess };

/// One counter of the catalogue: Loss::damaged_files, Loss::records_dropped, ...
enum class Loss : uint8_t {
#define TRAINPROF_LOSS(key, ...) key,
#include "collector/model/losses.def"
#undef TRAINPROF_LOSS
};

struct LossInfo {
  std::string_view key;
  LossSeverity severity;
  LossScope scope;
  std::string_view group;        ///< "" or the heading its line shares with its group
  std::string_view warning;      ///< template ("" = no line of its own); see losses.def
  std::string_view description;  ///< one line, for the docs
};

inline constexpr LossInfo kLossCatalogue[] = {
#define TRAINPROF_LOSS(key, severity, scope, group, warning, description) \
  {#key, LossSeverity::severity, LossScope::scope, group, warning, description},
#include "collector/model/losses.def"
#undef TRAINPROF_LOSS
};
inline constexpr size_t kLossKinds = std::size(kLossCatalogue);

inline const LossInfo& InfoOf(Loss kind) { return kLossCatalogue[static_cast<size_t>(kind)]; }

/// "info", "data_loss", "damage".
std::string_view SeverityName(LossSeverity severity);
/// "path", "file", "trace", "processes", "process".
std::string_view ScopeName(LossScope scope);

/// One count per catalogue entry.
class LossCounts {
 public:
  uint64_t& operator[](Loss kind) { return n_[static_cast<size_t>(kind)]; }
  uint64_t operator[](Loss kind) const { return n_[static_cast<size_t>(kind)]; }
  LossCounts& operator+=(const LossCounts& o) {
    for (size_t i = 0; i < kLossKinds; ++i) n_[i] += o.n_[i];
    return *this;
  }
  bool operator==(const LossCounts&) const = default;

 private:
  std::array<uint64_t, kLossKinds> n_{};
};

/// The warning text of `kind` for a count of `n` (losses.def: {n}, {one|many}, {detail} and the
/// format's limits filled in); "" for an entry without a warning of its own.
std::string LossText(Loss kind, uint64_t n, std::string_view detail = {});

/// The catalogue as the Markdown table of docs/report-schema.md ("stats").
std::string LossCatalogueMarkdown();

}  // namespace trainprof::collector
