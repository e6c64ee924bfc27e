// rank_tables.h: the rank_spread table's declaration and rows.
#include "collector/report/rank_tables.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

TableDef MakeRankSpreadTable() {
  return {"rank_spread",
          "rank_spread.csv",
          {{"measure", "Measure", Unit::kText, L,
            "step_mean_ns, compute_mean_ns, data_wait_percent, gpu_busy_percent or late_median_ns: the unit is the "
            "key's suffix"},
           {"ranks", "Ranks", Unit::kCount, R, "ranks with a value"},
           {"min", "Min", Unit::kNumber, R, "smallest value"},
           {"min_rank", "Rank", Unit::kCount, R, "the lowest rank with the smallest value"},
           {"median", "Median", Unit::kNumber, R, "median across ranks"},
           {"p90", "P90", Unit::kNumber, R, "0.9-quantile across ranks"},
           {"max", "Max", Unit::kNumber, R, "largest value"},
           {"max_rank", "Rank", Unit::kCount, R, "the lowest rank with the largest value"},
           {"outlier_count", nullptr, Unit::kCount, R,
            "ranks whose modified z-score exceeds 3.5 (Iglewicz and Hoaglin; docs/report.md, \"Across ranks\")"},
           {"outliers", "Outliers", Unit::kText, L,
            "the outlier ranks, the farthest from the median first, comma-separated (at most 5)"}},
          {"measure", "ranks", "min", "min_rank", "median", "p90", "max", "max_rank", "outliers"}};
}

TableDef MakeHostClockTable() {
  return {"host_clocks",
          "host_clocks.csv",
          {{"host", "Host", Unit::kText, L, "host name"},
           {"ranks", "Ranks", Unit::kCount, R, "ranked processes on the host"},
           {"offset_ns", "Clock offset", Unit::kNs, R,
            "the host's wall clock minus the reference host's: taken off its processes' wall-clock times (null when "
            "wall_clock is false)"},
           {"uncertainty_ns", "Uncertainty", Unit::kNs, R,
            "median end skew of the shared instants used (null: reference or wall clock)"},
           {"source", "Source", Unit::kText, L,
            "reference, barrier, collective, nccl_kernel, init_process_group (the shared instants used), wall_clock (none "
            "shared: its wall clock as it is) or unknown (none shared, no wall clock: its ranks are not compared)"},
           {"instants", "Instants", Unit::kCount, R, "shared instants used"},
           {"wall_clock", nullptr, Unit::kFlag, L,
            "the host's files give wall-clock starts; false (damaged headers): its monotonic clock was aligned, or, "
            "without shared instants, its ranks are not compared"}},
          {"host", "ranks", "offset_ns", "uncertainty_ns", "source", "instants"}};
}

std::string Value(double v, bool percent) { return percent ? FormatPercent(v) + "%" : FormatDuration(v); }

Cells SpreadCells(const RankSpreadRow& row) {
  std::string listed;
  for (int64_t rank : row.outliers) listed += (listed.empty() ? "" : ",") + std::to_string(rank);
  std::string shown = listed.empty() ? "-" : listed;
  for (char& c : shown) {
    if (c == ',') c = ' ';
  }
  if (row.outlier_count > row.outliers.size()) shown += " (" + std::to_string(row.outlier_count) + " in all)";
  return {Cell(row.measure).Text(row.label),
          row.ranks,
          Cell(row.min).Text(Value(row.min, row.percent)),
          row.min_rank,
          Cell(row.median).Text(Value(row.median, row.percent)),
          Cell(row.p90).Text(Value(row.p90, row.percent)),
          Cell(row.max).Text(Value(row.max, row.percent)),
          row.max_rank,
          row.outlier_count,
          Cell(listed).Text(shown)};
}

}  // namespace

const TableDef& HostClockTable() {
  static const TableDef def = MakeHostClockTable();
  return def;
}

void AddHostClockTable(const std::vector<HostClock>& clocks, Report* r) {
  if (clocks.empty()) return;
  TableRows t{&HostClockTable(), "Hosts", {}};
  t.text = false;  // after the Processes table
  for (const HostClock& h : clocks) {
    const bool estimated = h.source != "reference" && h.source != "wall_clock";
    t.rows.push_back({h.host, h.ranks, h.wall_clock ? Cell(h.offset_ns) : Cell(nullptr),
                      estimated ? Cell(h.uncertainty_ns) : Cell(nullptr), h.source, h.instants, h.wall_clock});
  }
  r->tables.push_back(std::move(t));
}

const TableDef& RankSpreadTable() {
  static const TableDef def = MakeRankSpreadTable();
  return def;
}

namespace {

// The hosts of a long Hosts table that the text shows (see kHostsInFull).
std::set<std::string> ShownHosts(const std::vector<HostClock>& clocks) {
  std::set<std::string> shown;
  std::vector<const HostClock*> by_offset, by_uncertainty;
  for (const HostClock& h : clocks) {
    if (h.source == "reference" || h.source == "wall_clock" || h.source == "unknown") shown.insert(h.host);
    if (h.wall_clock) by_offset.push_back(&h);  // an offset from a monotonic clock is no clock error
    by_uncertainty.push_back(&h);
  }
  auto first = [&](std::vector<const HostClock*>& v, auto larger) {
    std::stable_sort(v.begin(), v.end(), larger);
    for (size_t i = 0; i < v.size() && i < kHostsListed; ++i) shown.insert(v[i]->host);
  };
  first(by_offset, [](const HostClock* a, const HostClock* b) {
    return std::llabs(a->offset_ns) > std::llabs(b->offset_ns);
  });
  first(by_uncertainty, [](const HostClock* a, const HostClock* b) { return a->uncertainty_ns > b->uncertainty_ns; });
  return shown;
}

}  // namespace

void ChooseTextRanks(const std::vector<HostClock>& clocks, Report* r) {
  r->text_hosts.reset();
  if (clocks.size() > kHostsInFull && !r->options.by_rank) r->text_hosts = ShownHosts(clocks);
  std::set<int64_t> ranks;
  for (const ProcessRow& p : r->processes) {
    if (p.rank) ranks.insert(*p.rank);
  }
  r->ranks = ranks.size();
  r->text_ranks.reset();
  std::set<int64_t> trained;
  for (const TrainingProcess& t : r->bottleneck.processes) {
    if (t.rank && t.step.count > 0) trained.insert(*t.rank);
  }
  r->ranks_without_steps.clear();
  for (int64_t k : ranks) {
    if (trained.count(k) == 0) r->ranks_without_steps.push_back(k);
  }
  if (ranks.size() <= kRanksInFull || r->options.by_rank) return;
  std::set<int64_t> shown;
  const Bottleneck& b = r->bottleneck;
  for (const TrainingProcess& t : b.processes) {  // the lowest rank that trains (ranks come first, by rank)
    if (t.rank && t.step.count > 0) {
      shown.insert(*t.rank);
      break;
    }
  }
  if (shown.empty()) shown.insert(*ranks.begin());
  if (b.ranks && b.ranks->latest >= 0 && b.ranks->straggler) {
    shown.insert(b.ranks->ranks[static_cast<size_t>(b.ranks->latest)].rank);
  }
  if (b.spread) {
    for (int64_t rank : OutlierRanks(*b.spread)) shown.insert(rank);
  }
  for (size_t i = 0; i < r->ranks_without_steps.size() && i < kRanksListedWithoutSteps; ++i) {
    shown.insert(r->ranks_without_steps[i]);
  }
  r->text_ranks = std::move(shown);
}

bool ShowsRank(const Report& r, const std::optional<int64_t>& rank) {
  return !r.text_ranks || !rank || r.text_ranks->count(*rank) > 0;
}

bool UnusualProcess(const ProcessRow& p) {
  // A torch.profiler (Kineto) trace records no exit: its "unknown" is the normal case.
  const bool exited = (p.exit_kind == "exit" && p.exit_code.value_or(1) == 0) || (p.kineto && p.exit_kind == "unknown");
  return p.recorded != "yes" || !exited || p.truncated || p.damaged ||
         p.dropped > 0 || p.unbalanced > 0 || p.gpu.records_dropped > 0 || p.gpu.invalid_timestamps > 0 ||
         p.gpu.unfinished_calls > 0 || p.gpu.state == "unavailable";
}

void AddRankSpreadTable(Report* r) {
  if (!r->bottleneck.spread) return;
  TableRows t{&RankSpreadTable(), "Across ranks", {}};
  t.text = false;  // in the Bottleneck section
  for (const RankSpreadRow& row : r->bottleneck.spread->rows) t.rows.push_back(SpreadCells(row));
  r->tables.push_back(std::move(t));
}

}  // namespace trainprof::collector
