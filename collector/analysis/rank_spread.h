// The spread of per-rank figures across the ranks of a run (the report's "Across ranks" table):
// for each measure, the minimum and maximum with the ranks that have them, the median and p90, and
// the outlier ranks. What lets a report of hundreds or thousands of ranks stay readable: the text
// report shows this table and the outliers' own rows instead of one row per rank (render_text.cc;
// --by-rank, JSON and CSV keep every row).
//
// Median and p90: linear interpolation between the closest ranks (numpy's default, as Percentile
// in sample_stats.h). Outliers: the modified z-score of Iglewicz and Hoaglin ("How to Detect and
// Handle Outliers", 1993), M = 0.6745 (x - median) / MAD with MAD the median absolute deviation,
// |M| > 3.5; MAD is floored at 1% of |median| for durations (of the median step for lateness,
// whose median is near 0) and 0.5 percentage points for shares, so that ranks which are all alike
// up to noise have no outliers, and a rank 5.2% off a median that every other rank matches exactly
// is one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainprof::collector {

/// One rank's value of one measure (ns, or a percentage).
struct RankValue {
  int64_t rank = 0;
  double value = 0;
};

/// The spread of one measure across the ranks that have it.
struct RankSpreadRow {
  std::string measure;  ///< JSON key: "step_mean_ns", "data_wait_percent", ...
  std::string label;    ///< text: "Step time (mean)"
  bool percent = false;  ///< value is a percentage (else ns)
  uint64_t ranks = 0;   ///< ranks with a value
  double min = 0, median = 0, p90 = 0, max = 0;
  int64_t min_rank = 0, max_rank = 0;  ///< the lowest rank with the min (max) value
  std::vector<int64_t> outliers;       ///< up to kOutliersListed, the farthest from the median first
  uint64_t outlier_count = 0;          ///< all of them
};

struct RankSpread {
  uint64_t ranks = 0;  ///< ranks compared (training processes with a rank)
  std::vector<RankSpreadRow> rows;
};

inline constexpr size_t kOutliersListed = 5;
inline constexpr double kOutlierScore = 3.5;  ///< |modified z-score| above this: an outlier

/// The spread of `values` (any order; at least one). `percent` selects the MAD floor (0.5 points,
/// else 1% of the median), unless `mad_floor` (ns) is given.
RankSpreadRow SpreadAcross(std::string measure, std::string label, bool percent, std::vector<RankValue> values,
                           std::optional<double> mad_floor = std::nullopt);

/// The ranks that are outliers of any row, each once, ascending.
std::vector<int64_t> OutlierRanks(const RankSpread& spread);

}  // namespace trainprof::collector
