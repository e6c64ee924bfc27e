// host_clocks.h: shared instants per rank, matched by order, and the per-host medians.
#include "collector/analysis/host_clocks.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "collector/analysis/training_steps.h"
#include "collector/base/clock_offset.h"
#include "collector/base/kernel_names.h"

namespace trainprof::collector {
namespace {

enum class Kind : uint8_t { kBarrier, kCollective, kNcclKernel, kInitProcessGroup, kCount };
constexpr const char* kKindNames[] = {"barrier", "collective", "nccl_kernel", "init_process_group"};

// The median of ns values in integers (wall-clock times near 2^61 have no ns left in a double);
// the mean of the two middle values for an even count, rounded down.
int64_t MedianOf(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n == 0) return 0;
  if (n % 2 == 1) return v[n / 2];
  return static_cast<int64_t>((static_cast<__int128>(v[n / 2 - 1]) + v[n / 2]) >> 1);
}

bool HasGpuActivity(const Process& p) {
  return std::any_of(p.images.begin(), p.images.end(), [](const TraceImage& i) { return i.cuda.any_activity(); });
}

// One ranked process: its host and the wall-clock ends of its shared instants, per kind, each
// keyed by (name, order among the process's instants of that name).
struct RankInstants {
  int64_t rank = 0;
  std::string host;
  std::array<std::map<std::pair<StringId, uint32_t>, int64_t>, static_cast<size_t>(Kind::kCount)> ends;
};

// `wall`: the host's files give wall-clock starts (else its monotonic clock stands for one).
// `nccl`: whether a name (a StringId of the trace) is an NCCL kernel's, cached (demangling is slow).
RankInstants InstantsOf(const Process& p, const ProcessPhases& phases, StringId barrier, bool wall,
                        const std::function<bool(StringId)>& nccl) {
  RankInstants r;
  r.rank = *p.rank;
  r.host = p.host;
  const int64_t offset = wall ? RealtimeOffset(p.start_realtime_ns, p.start_ns) : 0;
  const bool blocking = !HasGpuActivity(p);  // gloo: the call returns when the collective is done
  std::vector<std::pair<uint64_t, std::pair<Kind, StringId>>> found;  // (end, (kind, name))
  for (const PhaseThread& t : phases.threads) {
    for (const PhaseRange& range : t.ranges) {
      if (range.phase == Phase::kInitProcessGroup) {
        found.push_back({range.end_ns, {Kind::kInitProcessGroup, 0}});
      } else if (range.phase == Phase::kCollective && barrier != 0 && range.name == barrier) {
        found.push_back({range.end_ns, {Kind::kBarrier, range.name}});
      } else if (range.phase == Phase::kCollective && blocking) {
        found.push_back({range.end_ns, {Kind::kCollective, range.name}});
      }
    }
  }
  // NCCL kernels end together on every rank of the collective (its last step waits for all of
  // them): the reader's notes of a trainprof image, a Kineto image's kernels.
  for (const TraceImage& img : p.images) {
    if (img.source == ImageSource::kKineto) {
      for (const GpuKernel& k : img.cuda.kernels) {
        if (nccl(k.name)) found.push_back({k.end_ns, {Kind::kNcclKernel, k.name}});
      }
    } else {
      for (const KernelEnd& e : img.nccl_kernel_ends) found.push_back({e.end_ns, {Kind::kNcclKernel, e.name}});
    }
  }
  std::sort(found.begin(), found.end());
  std::map<std::pair<Kind, StringId>, uint32_t> order;
  for (const auto& [end, key] : found) {
    const uint32_t k = order[key]++;
    r.ends[static_cast<size_t>(key.first)][{key.second, k}] = ShiftedTime(end, offset);
  }
  return r;
}

// The estimate of `host` (its ranks: `here`) against the reference (its ranks: `there`) from
// the instants of `kind` both have; nullopt when they share none. Reads only the two hosts' ranks:
// hosts × their instants in all, not hosts × ranks.
std::optional<HostClock> Estimate(const std::vector<const RankInstants*>& here_ranks,
                                  const std::vector<const RankInstants*>& there_ranks, const std::string& host,
                                  Kind kind) {
  const size_t kk = static_cast<size_t>(kind);
  std::map<std::pair<StringId, uint32_t>, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_key;
  for (const RankInstants* r : here_ranks) {
    for (const auto& [key, end] : r->ends[kk]) by_key[key].first.push_back(end);
  }
  if (by_key.empty()) return std::nullopt;
  for (const RankInstants* r : there_ranks) {
    for (const auto& [key, end] : r->ends[kk]) {
      if (auto it = by_key.find(key); it != by_key.end()) it->second.second.push_back(end);
    }
  }
  std::vector<int64_t> diffs;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> matched;  // per instant: (host, ref) ends
  for (auto& [key, ends] : by_key) {
    auto& [here, there] = ends;
    if (here.empty() || there.empty()) continue;
    diffs.push_back(MedianOf(here) - MedianOf(there));  // both near 2^61: no overflow
    matched.push_back({std::move(here), std::move(there)});
  }
  if (diffs.empty()) return std::nullopt;
  HostClock c;
  c.host = host;
  c.offset_ns = MedianOf(diffs);
  c.source = kKindNames[kk];
  c.instants = diffs.size();
  std::vector<int64_t> spreads;
  for (const auto& [here, there] : matched) {
    int64_t lo = there.front(), hi = there.front();
    for (int64_t v : there) lo = std::min(lo, v), hi = std::max(hi, v);
    for (int64_t v : here) {
      const int64_t aligned = ShiftedTime(static_cast<uint64_t>(std::max<int64_t>(v, 0)), -c.offset_ns);
      lo = std::min(lo, aligned), hi = std::max(hi, aligned);
    }
    spreads.push_back(hi - lo);
  }
  c.uncertainty_ns = static_cast<uint64_t>(std::max<int64_t>(MedianOf(spreads), 0));
  return c;
}

}  // namespace

void AlignHostClocks(Trace* trace) {
  trace->host_clocks.clear();
  trace->clock_reference.clear();
  std::map<std::string, std::set<int64_t>> host_ranks;  // distinct ranks (DataLoader workers share theirs)
  std::set<std::string> walled;                          // hosts whose files give a wall-clock start
  for (const Process& p : trace->processes) {
    if (p.rank) host_ranks[p.host].insert(*p.rank);
    if (p.start_realtime_ns != 0) walled.insert(p.host);
  }
  if (host_ranks.size() < 2) return;
  const StringId domain = trace->strings.Find("trainprof");
  const StringId barrier = trace->strings.Find("barrier");
  std::unordered_map<StringId, bool> nccl_names;
  auto nccl = [&](StringId name) {
    auto [it, inserted] = nccl_names.try_emplace(name, false);
    if (inserted) it->second = IsNcclKernel(trace->strings.Get(name));
    return it->second;
  };
  std::vector<RankInstants> ranks;
  for (const Process& p : trace->processes) {
    if (!p.rank) continue;
    const bool wall = walled.count(p.host) > 0;
    if (wall && p.start_realtime_ns == 0) continue;  // a damaged header on a host whose others are fine
    ranks.push_back(InstantsOf(p, CollectPhases(p, domain), barrier, wall, nccl));
  }
  // The reference: the host of the lowest rank that has a wall clock and shares instants (a
  // torch.profiler trace of rank 0 from another job has none); else of the lowest rank with a
  // wall clock.
  const RankInstants* lowest = nullptr;
  for (int pass = 0; pass < 2 && lowest == nullptr; ++pass) {
    for (const RankInstants& r : ranks) {
      const bool any = std::any_of(r.ends.begin(), r.ends.end(), [](const auto& e) { return !e.empty(); });
      if (walled.count(r.host) == 0 || (pass == 0 && !any)) continue;
      if (lowest == nullptr || r.rank < lowest->rank) lowest = &r;
    }
  }
  if (lowest == nullptr) return;  // no host has a wall clock: nothing to align them on
  trace->clock_reference = lowest->host;
  std::map<std::string, std::vector<const RankInstants*>> by_host;
  for (const RankInstants& r : ranks) by_host[r.host].push_back(&r);
  for (const auto& [host, ranks_there] : host_ranks) {
    HostClock c;
    c.host = host;
    c.source = host == trace->clock_reference ? "reference" : "wall_clock";
    if (host != trace->clock_reference) {
      for (size_t k = 0; k < static_cast<size_t>(Kind::kCount); ++k) {
        if (auto e = Estimate(by_host[host], by_host[trace->clock_reference], host, static_cast<Kind>(k))) {
          c = std::move(*e);
          break;
        }
      }
    }
    c.wall_clock = walled.count(host) > 0;
    if (!c.wall_clock && c.source == "wall_clock") c.source = "unknown";
    c.ranks = ranks_there.size();
    trace->host_clocks.push_back(std::move(c));
  }
  // Every process of an aligned host, ranked or not (its launcher, DataLoader workers), moves; on
  // a host without wall-clock starts, its monotonic start becomes one.
  for (Process& p : trace->processes) {
    const HostClock* h = nullptr;
    for (const HostClock& c : trace->host_clocks) {
      if (c.host == p.host) h = &c;
    }
    if (h == nullptr || h->source == "reference" || h->source == "wall_clock" || h->source == "unknown") continue;
    const uint64_t from = h->wall_clock ? p.start_realtime_ns : p.start_ns;
    if (from == 0) continue;
    p.start_realtime_ns = static_cast<uint64_t>(std::max<int64_t>(ShiftedTime(from, -h->offset_ns), 1));
  }
}

}  // namespace trainprof::collector
