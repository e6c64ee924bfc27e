// The report's tables of a run's ranks and hosts. The spread across ranks (analysis/rank_spread.h): JSON `rank_spread`,
// `rank_spread.csv`, and in the text report inside the Bottleneck section ("Across ranks"), where a
// run of more than kRanksInFull ranks shows it in place of one row per rank (render_text.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "collector/base/table.h"
#include "collector/report/report.h"

namespace trainprof::collector {

/// Above this many ranks the text report shows, without --by-rank, the spread and the rows of the
/// lowest rank, the straggler and the outliers only (JSON and CSV keep every row).
inline constexpr size_t kRanksInFull = 16;
/// Above this many hosts the text's Hosts table shows, without --by-rank, the reference, every host
/// on its wall clock, and the kHostsListed largest offsets and uncertainties.
inline constexpr size_t kHostsInFull = 16;
inline constexpr size_t kHostsListed = 5;
/// Ranks without a training step that the text lists even when it leaves ranks out.
inline constexpr size_t kRanksListedWithoutSteps = 5;

const TableDef& RankSpreadTable();  ///< rank_spread
const TableDef& HostClockTable();   ///< host_clocks

/// Puts the host_clocks table (`clocks`: each host's wall clock against the reference's,
/// analysis/host_clocks.h) into r->tables when ranks ran on two or more hosts; the text report
/// shows it as "Hosts" after the Processes table.
void AddHostClockTable(const std::vector<HostClock>& clocks, Report* r);

/// Puts the rank_spread table into r->tables (not a text section of its own: the Bottleneck
/// section shows it) when the bottleneck has a spread.
void AddRankSpreadTable(Report* r);

/// Sets r->ranks, r->text_ranks and r->text_hosts (report.h) from r->processes, r->bottleneck,
/// the hosts' `clocks` and r->options.
void ChooseTextRanks(const std::vector<HostClock>& clocks, Report* r);

/// Whether the text report shows the row of a process with `rank` (a process without one: always).
bool ShowsRank(const Report& r, const std::optional<int64_t>& rank);

/// A process row the text report shows however many ranks there are: not recorded, not exited
/// with 0 (a torch.profiler trace, which records no exit, aside), a file damaged or truncated,
/// events dropped, unbalanced ranges, GPU records lost or GPU tracing unavailable.
bool UnusualProcess(const ProcessRow& p);

}  // namespace trainprof::collector
