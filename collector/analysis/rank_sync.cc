#include "collector/analysis/rank_sync.h"

#include <algorithm>
#include <map>
#include <set>

#include "collector/base/clock_offset.h"

namespace trainprof::collector {
namespace {

double Median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
}

}  // namespace

RankSync AnalyzeRanks(std::vector<RankInput> in, size_t warmup_min_steps, double straggler_step_percent,
                      uint64_t straggler_min_ns) {
  RankSync out;
  // One process per rank: a restarted rank (elastic) leaves two; keep the one with most steps.
  std::stable_sort(in.begin(), in.end(), [](const RankInput& a, const RankInput& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.steps.size() > b.steps.size();
  });
  std::vector<RankInput> ranks;
  for (RankInput& r : in) {
    if (!ranks.empty() && ranks.back().rank == r.rank) {
      if (out.duplicate_ranks.empty() || out.duplicate_ranks.back() != r.rank) out.duplicate_ranks.push_back(r.rank);
      continue;
    }
    ranks.push_back(std::move(r));
  }
  std::set<std::string> hosts;
  for (const RankInput& r : ranks) hosts.insert(r.host);
  const bool realtime = hosts.size() > 1;
  out.clock = realtime ? "realtime" : "monotonic";

  size_t k_end = SIZE_MAX;
  for (const RankInput& r : ranks) k_end = std::min(k_end, r.steps.size());
  if (ranks.empty()) k_end = 0;
  out.warmup_skipped = k_end >= warmup_min_steps;
  const size_t k_begin = out.warmup_skipped ? 1 : 0;

  const size_t n = ranks.size();
  out.synchronised = std::any_of(ranks.begin(), ranks.end(), [](const RankInput& r) { return r.synchronises; });
  std::vector<std::vector<uint64_t>> late(n);
  std::vector<std::map<Arrival, uint64_t>> kinds(n);
  std::vector<size_t> matched_k;
  for (const RankInput& r : ranks) {
    RankRow row;
    row.rank = r.rank;
    row.pid = r.pid;
    row.host = r.host;
    row.steps = r.steps.size();
    row.mean_step_ns = r.mean_step_ns;
    row.mean_compute_ns = r.mean_compute_ns;
    row.mean_data_wait_ns = r.mean_data_wait_ns;
    row.lateness_ns.assign(r.steps.size(), std::nullopt);
    out.ranks.push_back(std::move(row));
  }
  for (size_t k = k_begin; k < k_end; ++k) {
    std::vector<int64_t> t(n);
    bool all = true;
    for (size_t i = 0; i < n && all; ++i) {
      const RankStep& s = ranks[i].steps[k];
      all = s.arrival != Arrival::kNone;
      t[i] = ShiftedTime(s.arrival_ns, realtime ? ranks[i].realtime_offset_ns : 0);
    }
    if (!all) continue;
    const int64_t first = *std::min_element(t.begin(), t.end());
    const int64_t last = *std::max_element(t.begin(), t.end());
    for (size_t i = 0; i < n; ++i) {
      const uint64_t l = static_cast<uint64_t>(t[i]) - static_cast<uint64_t>(first);  // t[i] >= first: fits
      late[i].push_back(l);
      out.ranks[i].lateness_ns[k] = l;
      ++kinds[i][ranks[i].steps[k].arrival];
      if (t[i] == last && last > first) ++out.ranks[i].last_steps;
    }
    matched_k.push_back(k);
  }
  out.matched_steps = matched_k.size();

  double step_sum = 0;
  for (const RankRow& r : out.ranks) step_sum += r.mean_step_ns;
  out.mean_step_ns = n ? step_sum / static_cast<double>(n) : 0;
  if (matched_k.empty()) return out;

  out.late_threshold_ns =
      std::max(straggler_step_percent / 100.0 * out.mean_step_ns, static_cast<double>(straggler_min_ns));
  int most_median = -1;  // the straggler candidate: largest median lateness, then largest mean
  for (size_t i = 0; i < n; ++i) {
    RankRow& row = out.ranks[i];
    double sum = 0;
    for (uint64_t l : late[i]) sum += static_cast<double>(l);
    row.mean_lateness_ns = sum / static_cast<double>(late[i].size());
    row.median_lateness_ns = Median(late[i]);
    row.last_share = static_cast<double>(row.last_steps) / static_cast<double>(matched_k.size());
    auto most = std::max_element(kinds[i].begin(), kinds[i].end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    row.arrival = ArrivalName(most->first);
    for (size_t k : matched_k) {
      const uint64_t l = *row.lateness_ns[k];
      if (l > 0 && static_cast<double>(l) >= out.late_threshold_ns) row.late_step_list.push_back({k, l});
    }
    row.late_steps = row.late_step_list.size();
    std::stable_sort(row.late_step_list.begin(), row.late_step_list.end(),
                     [](const LateStep& a, const LateStep& b) { return a.lateness_ns > b.lateness_ns; });
    if (row.late_step_list.size() > kLateStepsListed) row.late_step_list.resize(kLateStepsListed);
    if (out.latest < 0 || *row.mean_lateness_ns > *out.ranks[out.latest].mean_lateness_ns)
      out.latest = static_cast<int>(i);
    if (most_median < 0 ||
        std::make_pair(*row.median_lateness_ns, *row.mean_lateness_ns) >
            std::make_pair(*out.ranks[most_median].median_lateness_ns, *out.ranks[most_median].mean_lateness_ns))
      most_median = static_cast<int>(i);
  }
  // Consistent lateness only: a median at the threshold means late by it in half the steps or
  // more; last in half of them or more means it is the one the others wait for.
  const RankRow& c = out.ranks[most_median];
  out.straggler = *c.median_lateness_ns > 0 && *c.median_lateness_ns >= out.late_threshold_ns &&
                  *c.last_share >= kStragglerLastShare;
  if (out.straggler) out.latest = most_median;
  // Ranks that meet in a step are never a step apart: lateness of a step or more, or one that
  // grows by a step, is drift. Ranks that do not meet have no straggler to wait for.
  {  // the straggler candidate's lateness (largest median)
    const std::vector<uint64_t>& l = late[static_cast<size_t>(most_median)];
    const size_t third = l.size() / 3;
    double head = 0, tail = 0;
    for (size_t i = 0; i < third; ++i) head += static_cast<double>(l[i]), tail += static_cast<double>(l[l.size() - 1 - i]);
    if (third > 0) {
      out.lateness_head_ns = head / static_cast<double>(third);
      out.lateness_tail_ns = tail / static_cast<double>(third);
    }
    const bool grows = third > 0 && out.lateness_tail_ns - out.lateness_head_ns >= out.mean_step_ns;
    out.drift = out.synchronised && out.mean_step_ns > 0 &&
                (*out.ranks[static_cast<size_t>(most_median)].median_lateness_ns >= out.mean_step_ns || grows);
    if (out.drift) out.latest = most_median;  // the rank the sentence names
  }
  if (!out.synchronised || out.drift) {
    out.straggler = false;
    return out;
  }
  // What the others pay for the latest rank: their synchronising phases beyond its own.
  const size_t s = static_cast<size_t>(out.latest);
  for (size_t i = 0; i < n; ++i) {
    if (i == s) continue;
    double sum = 0;
    for (size_t k : matched_k) {
      const uint64_t mine = ranks[i].steps[k].sync_ns, theirs = ranks[s].steps[k].sync_ns;
      sum += mine > theirs ? static_cast<double>(mine - theirs) : 0.0;
    }
    out.ranks[i].wait_ns = sum / static_cast<double>(matched_k.size());
  }
  return out;
}

}  // namespace trainprof::collector
