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

using Kind = SharedInstant::Kind;
constexpr size_t kKinds = kSharedInstantKinds;
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
  std::array<std::map<std::pair<StringId, uint32_t>, int64_t>, kKinds> ends;
};

// `wall`: the host's files give wall-clock starts (else its monotonic clock stands for one).
RankInstants InstantsOf(const ClockInput& p, bool wall) {
  RankInstants r;
  r.rank = *p.rank;
  r.host = std::string(p.host);
  const int64_t offset = wall ? RealtimeOffset(p.start_realtime_ns, p.start_ns) : 0;
  std::map<std::pair<Kind, StringId>, uint32_t> order;
  for (const SharedInstant& i : *p.instants) {
    const uint32_t k = order[{i.kind, i.name}]++;
    r.ends[static_cast<size_t>(i.kind)][{i.name, k}] = ShiftedTime(i.end_ns, offset);
  }
  return r;
}

}  // namespace

const char* SharedInstantKindName(SharedInstant::Kind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::vector<SharedInstant> SharedInstantsOf(const Process& p, const ProcessPhases& phases, const StringPool& strings) {
  std::vector<SharedInstant> found;
  if (!p.rank) return found;
  const StringId barrier = strings.Find("barrier");
  const bool blocking = !HasGpuActivity(p);  // gloo: the call returns when the collective is done
  for (const PhaseThread& t : phases.threads) {
    for (const PhaseRange& range : t.ranges) {
      if (range.phase == Phase::kInitProcessGroup) {
        found.push_back({range.end_ns, Kind::kInitProcessGroup, 0});
      } else if (range.phase == Phase::kCollective && barrier != 0 && range.name == barrier) {
        found.push_back({range.end_ns, Kind::kBarrier, range.name});
      } else if (range.phase == Phase::kCollective && blocking) {
        found.push_back({range.end_ns, Kind::kCollective, range.name});
      }
    }
  }
  // NCCL kernels end together on every rank of the collective (its last step waits for all of
  // them): the reader's notes of a trainprof image, a Kineto image's kernels.
  std::unordered_map<StringId, bool> nccl_names;
  auto nccl = [&](StringId name) {  // cached: demangling is slow
    auto [it, inserted] = nccl_names.try_emplace(name, false);
    if (inserted) it->second = IsNcclKernel(strings.Get(name));
    return it->second;
  };
  for (const TraceImage& img : p.images) {
    if (img.source == ImageSource::kKineto) {
      for (const GpuKernel& k : img.cuda.kernels) {
        if (nccl(k.name)) found.push_back({k.end_ns, Kind::kNcclKernel, k.name});
      }
    } else {
      for (const KernelEnd& e : img.nccl_kernel_ends) found.push_back({e.end_ns, Kind::kNcclKernel, e.name});
    }
  }
  std::sort(found.begin(), found.end(), [](const SharedInstant& a, const SharedInstant& b) {
    return std::tie(a.end_ns, a.kind, a.name) < std::tie(b.end_ns, b.kind, b.name);
  });
  return found;
}

namespace {

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

HostClockEstimate EstimateHostClocks(const std::vector<ClockInput>& processes) {
  HostClockEstimate out;
  for (const ClockInput& p : processes) out.start_realtime_ns.push_back(p.start_realtime_ns);
  std::map<std::string, std::set<int64_t>, std::less<>> host_ranks;  // distinct ranks (DataLoader workers share theirs)
  std::set<std::string, std::less<>> walled;                         // hosts whose files give a wall-clock start
  for (const ClockInput& p : processes) {
    if (p.rank) host_ranks[std::string(p.host)].insert(*p.rank);
    if (p.start_realtime_ns != 0) walled.insert(std::string(p.host));
  }
  if (host_ranks.size() < 2) return out;
  static const std::vector<SharedInstant> kNone;
  std::vector<RankInstants> ranks;
  for (const ClockInput& p : processes) {
    if (!p.rank) continue;
    const bool wall = walled.count(p.host) > 0;
    if (wall && p.start_realtime_ns == 0) continue;  // a damaged header on a host whose others are fine
    ClockInput with = p;
    if (with.instants == nullptr) with.instants = &kNone;
    ranks.push_back(InstantsOf(with, wall));
  }
  // The reference: the host of the lowest rank that has a wall clock and shares instants (a
  // torch.profiler trace of rank 0 from another job has none); else of the lowest rank with a
  // wall clock. Among ranks equal, the host first by name: the same whatever the order.
  const RankInstants* lowest = nullptr;
  for (int pass = 0; pass < 2 && lowest == nullptr; ++pass) {
    for (const RankInstants& r : ranks) {
      const bool any = std::any_of(r.ends.begin(), r.ends.end(), [](const auto& e) { return !e.empty(); });
      if (walled.count(r.host) == 0 || (pass == 0 && !any)) continue;
      if (lowest == nullptr || std::tie(r.rank, r.host) < std::tie(lowest->rank, lowest->host)) lowest = &r;
    }
  }
  if (lowest == nullptr) return out;  // no host has a wall clock: nothing to align them on
  out.reference = lowest->host;
  std::map<std::string, std::vector<const RankInstants*>> by_host;
  for (const RankInstants& r : ranks) by_host[r.host].push_back(&r);
  for (const auto& [host, ranks_there] : host_ranks) {
    HostClock c;
    c.host = host;
    c.source = host == out.reference ? "reference" : "wall_clock";
    if (host != out.reference) {
      for (size_t k = 0; k < kKinds; ++k) {
        if (auto e = Estimate(by_host[host], by_host[out.reference], host, static_cast<Kind>(k))) {
          c = std::move(*e);
          break;
        }
      }
    }
    c.wall_clock = walled.count(host) > 0;
    if (!c.wall_clock && c.source == "wall_clock") c.source = "unknown";
    c.ranks = ranks_there.size();
    out.clocks.push_back(std::move(c));
  }
  // Every process of an aligned host, ranked or not (its launcher, DataLoader workers), moves; on
  // a host without wall-clock starts, its monotonic start becomes one.
  for (size_t i = 0; i < processes.size(); ++i) {
    const ClockInput& p = processes[i];
    const HostClock* h = nullptr;
    for (const HostClock& c : out.clocks) {
      if (c.host == p.host) h = &c;
    }
    if (h == nullptr || h->source == "reference" || h->source == "wall_clock" || h->source == "unknown") continue;
    const uint64_t from = h->wall_clock ? p.start_realtime_ns : p.start_ns;
    if (from == 0) continue;
    out.start_realtime_ns[i] = static_cast<uint64_t>(std::max<int64_t>(ShiftedTime(from, -h->offset_ns), 1));
  }
  return out;
}

void AlignHostClocks(Trace* trace) {
  const StringId domain = trace->strings.Find("trainprof");
  std::vector<std::vector<SharedInstant>> instants(trace->processes.size());
  std::vector<ClockInput> in;
  for (size_t i = 0; i < trace->processes.size(); ++i) {
    const Process& p = trace->processes[i];
    if (p.rank) instants[i] = SharedInstantsOf(p, CollectPhases(p, domain), trace->strings);
    in.push_back({p.host, p.rank, p.start_realtime_ns, p.start_ns, &instants[i]});
  }
  HostClockEstimate e = EstimateHostClocks(in);
  trace->host_clocks = std::move(e.clocks);
  trace->clock_reference = std::move(e.reference);
  for (size_t i = 0; i < trace->processes.size(); ++i) trace->processes[i].start_realtime_ns = e.start_realtime_ns[i];
}

}  // namespace trainprof::collector
