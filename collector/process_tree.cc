#include "collector/process_tree.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string.h>  // sigabbrev_np (glibc 2.32)
#include <tuple>

namespace trainprof::collector {
namespace {

// Rank variables in order of preference; "strength" 2 = set by the launcher for this very process
// (torchrun, mpirun), 1 = SLURM task variables, which a launcher inside an srun task also has.
struct RankVar {
  const char* name;
  int strength;
};
constexpr RankVar kRankVars[] = {{"RANK", 2}, {"OMPI_COMM_WORLD_RANK", 2}, {"PMI_RANK", 2}, {"SLURM_PROCID", 1}};
constexpr RankVar kLocalRankVars[] = {{"LOCAL_RANK", 2}, {"OMPI_COMM_WORLD_LOCAL_RANK", 2}, {"SLURM_LOCALID", 1}};
constexpr RankVar kWorldSizeVars[] = {{"WORLD_SIZE", 2}, {"OMPI_COMM_WORLD_SIZE", 2}, {"SLURM_NTASKS", 1}};

template <size_t N>
std::optional<int64_t> FindInt(const Process& p, const RankVar (&vars)[N], int* strength) {
  for (const RankVar& var : vars) {
    for (auto img = p.images.rbegin(); img != p.images.rend(); ++img) {
      const std::string* v = img->Env(var.name);
      if (v == nullptr) continue;
      int64_t out = 0;
      auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
      if (ec == std::errc() && end == v->data() + v->size()) {
        if (strength != nullptr) *strength = var.strength;
        return out;
      }
    }
  }
  if (strength != nullptr) *strength = 0;
  return std::nullopt;
}

void DeriveLifetime(Process& p) {
  const TraceImage& last = p.last();
  p.ppid = p.first().ppid;
  p.start_ns = p.first().start_ns;
  p.start_realtime_ns = p.first().start_realtime_ns;
  const ProcessEvent* end_record = nullptr;
  for (const ProcessEvent& e : last.process_events) {
    if (e.kind == ProcessEventKind::kProcessEnd && (end_record == nullptr || e.time_ns >= end_record->time_ns)) end_record = &e;
  }
  if (last.end_ns != 0) {
    p.end_ns = last.end_ns;
    p.end_known = true;
  } else if (end_record != nullptr) {
    p.end_ns = end_record->time_ns;
    p.end_known = true;
  } else {
    p.end_ns = p.start_ns;
    for (const TraceImage& img : p.images) {
      if (img.has_timed_records) p.end_ns = std::max(p.end_ns, img.last_record_ns);
    }
  }
  p.wall_ns = p.end_ns > p.start_ns ? p.end_ns - p.start_ns : 0;

  if (last.end_kind != EndKind::kNone) {
    p.exit = {last.end_kind, last.end_code, ExitInfo::Source::kHeader};
  } else if (end_record != nullptr && end_record->what >= 1 && end_record->what <= static_cast<uint32_t>(EndKind::kReturned)) {
    p.exit = {static_cast<EndKind>(end_record->what), end_record->code, ExitInfo::Source::kProcessEnd};
  }
  for (const TraceImage& img : p.images) {
    p.records += img.records;
    p.dropped += img.records_dropped;
    p.truncated = p.truncated || img.truncated;
  }
}

}  // namespace

std::vector<Process> BuildProcesses(std::vector<TraceImage> images, const StringPool& strings) {
  std::sort(images.begin(), images.end(), [](const TraceImage& a, const TraceImage& b) {
    return std::tie(a.host, a.pid, a.start_ns, a.image_index, a.file) <
           std::tie(b.host, b.pid, b.start_ns, b.image_index, b.file);
  });
  std::vector<Process> procs;
  for (TraceImage& img : images) {
    // The next image of the same pid continues the process (exec); image_index restarting
    // means the pid was reused by a new process.
    bool continues = !procs.empty() && procs.back().host == img.host && procs.back().pid == img.pid &&
                     img.image_index > procs.back().last().image_index;
    if (!continues) {
      procs.emplace_back();
      procs.back().host = img.host;
      procs.back().pid = img.pid;
    }
    procs.back().images.push_back(std::move(img));
  }
  for (Process& p : procs) DeriveLifetime(p);

  // Parents: same host, pid == ppid, alive at the child's start; the latest such start wins.
  std::map<std::pair<std::string, int32_t>, std::vector<int>> by_pid;
  for (size_t i = 0; i < procs.size(); ++i) by_pid[{procs[i].host, procs[i].pid}].push_back(static_cast<int>(i));
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& child = procs[i];
    auto it = by_pid.find({child.host, child.ppid});
    if (it == by_pid.end()) continue;
    int best = -1;
    for (int q : it->second) {
      const Process& cand = procs[q];
      if (q == static_cast<int>(i) || cand.start_ns > child.start_ns) continue;
      if (cand.end_known && cand.end_ns < child.start_ns) continue;
      if (best < 0 || cand.start_ns > procs[best].start_ns) best = q;
    }
    // Damaged headers could make a loop (equal start times): never close one.
    bool loop = false;
    for (int a = best; a >= 0 && !loop; a = procs[a].parent) loop = a == static_cast<int>(i);
    if (best >= 0 && !loop) child.parent = best;
  }

  // Orphans: a child whose parent exited before it opened its trace reads ppid 1 (or a
  // subreaper). The parent's kFork record still names it: take the fork nearest the child's start.
  std::map<std::pair<std::string, uint64_t>, std::vector<std::pair<int, uint64_t>>> forks;  // → (proc, time)
  for (size_t i = 0; i < procs.size(); ++i) {
    for (const TraceImage& img : procs[i].images) {
      for (const ProcessEvent& e : img.process_events) {
        if (e.kind == ProcessEventKind::kFork) forks[{procs[i].host, e.value}].push_back({static_cast<int>(i), e.time_ns});
      }
    }
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& child = procs[i];
    if (child.parent >= 0) continue;
    auto it = forks.find({child.host, static_cast<uint64_t>(static_cast<uint32_t>(child.pid))});
    if (it == forks.end()) continue;
    int best = -1;
    uint64_t best_gap = UINT64_MAX;
    for (auto [q, t] : it->second) {
      if (q == static_cast<int>(i) || procs[q].start_ns > child.start_ns) continue;
      uint64_t gap = t > child.start_ns ? t - child.start_ns : child.start_ns - t;
      if (gap < best_gap) {
        best = q;
        best_gap = gap;
      }
    }
    bool loop = false;
    for (int a = best; a >= 0 && !loop; a = procs[a].parent) loop = a == static_cast<int>(i);
    if (best >= 0 && !loop) child.parent = best;
  }

  // The parent's waitpid() of a process that left no end of its own (killed by a signal, or it
  // recorded nothing): its exit status, and the time it was reaped as its end, the best bound we
  // have (its last record would make a process SIGKILLed while idle look short-lived). The status
  // also replaces "returned": the library saw main return but not the status, which the parent's
  // waitpid() did see.
  for (Process& p : procs) {
    const bool want_exit = p.exit.kind == EndKind::kNone || p.exit.kind == EndKind::kReturned;
    if ((!want_exit && p.end_known) || p.parent < 0) continue;
    const ProcessEvent* seen = nullptr;
    for (const TraceImage& img : procs[p.parent].images) {
      for (const ProcessEvent& e : img.process_events) {
        if (e.kind != ProcessEventKind::kChildExit || e.value != static_cast<uint64_t>(static_cast<uint32_t>(p.pid)) ||
            e.time_ns < p.start_ns || e.what < 1 || e.what > static_cast<uint32_t>(EndKind::kReturned)) {
          continue;
        }
        if (seen == nullptr || e.time_ns < seen->time_ns) seen = &e;
      }
    }
    if (seen == nullptr) continue;
    if (want_exit) p.exit = {static_cast<EndKind>(seen->what), seen->code, ExitInfo::Source::kParentWait};
    if (!p.end_known) {
      p.end_ns = std::max(p.end_ns, seen->time_ns);
      p.end_known = true;
      p.wall_ns = p.end_ns > p.start_ns ? p.end_ns - p.start_ns : 0;
    }
  }

  // Ranks and roles.
  std::vector<int> strength(procs.size(), 0);
  for (size_t i = 0; i < procs.size(); ++i) {
    procs[i].rank = FindInt(procs[i], kRankVars, &strength[i]);
    procs[i].local_rank = FindInt(procs[i], kLocalRankVars, nullptr);
    procs[i].world_size = FindInt(procs[i], kWorldSizeVars, nullptr);
  }
  std::vector<int> child_strength(procs.size(), 0);
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i].parent >= 0) child_strength[procs[i].parent] = std::max(child_strength[procs[i].parent], strength[i]);
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& p = procs[i];
    StringId role = 0;
    for (const TraceImage& img : p.images)
      if (img.role != 0) role = img.role;
    // A rank's DataLoader workers inherit its RANK: a rank variable names a rank only where
    // the parent does not have the same one.
    bool inherited = p.parent >= 0 && procs[p.parent].rank == p.rank && strength[p.parent] == strength[i];
    if (role != 0) {
      p.role = std::string(strings.Get(role));
    } else if (child_strength[i] > strength[i]) {
      p.role = "launcher";
    } else if (p.rank && !inherited) {
      p.role = "rank " + std::to_string(*p.rank);
    } else if (p.parent < 0) {
      p.role = "main";
    } else if (p.last().flags & format::kFlagForkedChild) {
      p.role = "forked child";
    } else {
      p.role = "child";
    }
  }

  // Tree order.
  std::vector<std::vector<int>> kids(procs.size());
  std::vector<int> roots;
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i].parent >= 0) {
      kids[procs[i].parent].push_back(static_cast<int>(i));
    } else {
      roots.push_back(static_cast<int>(i));
    }
  }
  auto by_start = [&](int a, int b) {
    return std::tie(procs[a].start_ns, procs[a].pid) < std::tie(procs[b].start_ns, procs[b].pid);
  };
  for (auto& k : kids) std::sort(k.begin(), k.end(), by_start);
  std::sort(roots.begin(), roots.end(), [&](int a, int b) {
    return std::tie(procs[a].start_realtime_ns, procs[a].host, procs[a].pid) <
           std::tie(procs[b].start_realtime_ns, procs[b].host, procs[b].pid);
  });
  std::vector<int> order;
  std::vector<int> depth(procs.size(), 0);
  std::vector<int> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    order.push_back(i);
    for (auto k = kids[i].rbegin(); k != kids[i].rend(); ++k) {
      depth[*k] = depth[i] + 1;
      stack.push_back(*k);
    }
  }
  std::vector<int> new_index(procs.size());
  for (size_t n = 0; n < order.size(); ++n) new_index[order[n]] = static_cast<int>(n);
  std::vector<Process> out;
  out.reserve(procs.size());
  for (int i : order) {
    Process& p = procs[i];
    p.depth = depth[i];
    p.parent = p.parent >= 0 ? new_index[p.parent] : -1;
    p.children.clear();
    for (int k : kids[i]) p.children.push_back(new_index[k]);
    out.push_back(std::move(p));
  }
  return out;
}

const char* ExitKindName(EndKind kind) {
  switch (kind) {
    case EndKind::kExit: return "exit";
    case EndKind::kSignal: return "signal";
    case EndKind::kExec: return "exec";
    case EndKind::kReturned: return "returned";
    default: return "unknown";
  }
}

std::string DescribeExit(const ExitInfo& exit) {
  switch (exit.kind) {
    case EndKind::kExit: return "exit " + std::to_string(exit.code);
    case EndKind::kSignal: {
      std::string s = "signal " + std::to_string(exit.code);
      const char* abbrev = exit.code > 0 && exit.code < 65 ? sigabbrev_np(static_cast<int>(exit.code)) : nullptr;
      if (abbrev != nullptr) s += std::string(" (SIG") + abbrev + ")";
      return s;
    }
    case EndKind::kExec: return "exec'd";
    case EndKind::kReturned: return "returned";
    default: return "unknown";
  }
}

}  // namespace trainprof::collector
