#include "collector/read/process_tree.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string.h>  // sigabbrev_np (glibc 2.32)
#include <tuple>

#include "collector/base/clock_offset.h"

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

  // The last image ended in exec, and no image follows: the exec'd program left no trace (static,
  // setuid). Its end is the parent's waitpid() (or the launcher's, in the header), not "exec'd".
  const ProcessEvent* last_event = nullptr;
  for (const ProcessEvent& e : last.process_events) {
    if ((e.kind == ProcessEventKind::kExec || e.kind == ProcessEventKind::kProcessEnd) &&
        (last_event == nullptr || e.time_ns >= last_event->time_ns)) {
      last_event = &e;
    }
  }
  if (last.end_kind == EndKind::kExec ||
      (last_event != nullptr && last_event->kind == ProcessEventKind::kExec && last.end_kind != EndKind::kNone &&
       last.end_kind != EndKind::kReturned)) {
    p.recorded = Process::Recorded::kExecNotRecorded;
  }
  if (last.end_kind == EndKind::kExec) {
    p.end_known = false;
    p.end_ns = std::max(p.end_ns, last.end_ns);
  } else if (last.end_kind != EndKind::kNone) {
    p.exit = {last.end_kind, last.end_code, ExitInfo::Source::kHeader};
  } else if (end_record != nullptr && end_record->what >= 1 && end_record->what <= static_cast<uint32_t>(EndKind::kReturned)) {
    p.exit = {static_cast<EndKind>(end_record->what), end_record->code, ExitInfo::Source::kProcessEnd};
  }
  // exit(256) is status 0, _exit(-1) 255: what waitpid() reports (older writers kept the argument).
  if (p.exit.kind == EndKind::kExit) p.exit.code &= 0377;
  for (const TraceImage& img : p.images) {
    p.records += img.records;
    p.dropped += img.records_dropped;
    p.truncated = p.truncated || img.truncated;
  }
}

// Where a pid number means one process: host, boot, pid namespace (unknown: "", 0), pid.
using PidKey = std::tuple<std::string, std::string, uint64_t, int32_t>;
PidKey KeyOf(const Process& p, int32_t pid) { return {p.host, p.first().boot_id, p.first().pid_namespace, pid}; }

// Whether `next` (sorted after `prev`, same host, boot, namespace and pid) is the image `prev`
// exec'd. With identities: the same start time and `prev` ended in exec (a pid reused within one
// clock tick still differs there). Without (older files): image_index growing, as before.
bool ContinuesProcess(const TraceImage& prev, const TraceImage& next) {
  if (prev.host != next.host || prev.boot_id != next.boot_id || prev.pid_namespace != next.pid_namespace ||
      prev.pid != next.pid || next.image_index <= prev.image_index) {
    return false;
  }
  if (prev.start_ticks == 0 || next.start_ticks == 0) return prev.start_ticks == next.start_ticks;
  return prev.start_ticks == next.start_ticks && prev.end_kind == EndKind::kExec;
}

// A process known only from its parent's kFork record (and kChildExit, if it was reaped).
Process NotRecordedChild(const Process& parent, int parent_index, int32_t pid, uint64_t fork_ns, bool other_namespace) {
  Process p;
  p.host = parent.host;
  p.pid = pid;
  p.ppid = parent.pid;
  p.recorded = Process::Recorded::kNotRecorded;
  p.parent = parent_index;
  TraceImage img;
  img.file = kNoFile;
  img.pid = pid;
  img.ppid = parent.pid;
  img.host = parent.host;
  img.boot_id = parent.first().boot_id;
  img.pid_namespace = other_namespace ? 0 : parent.first().pid_namespace;
  img.run_id = parent.first().run_id;
  img.start_ns = fork_ns;
  const TraceImage& clock = parent.first();
  // The parent's wall clock unknown (a damaged header, no other process of its host): the child's too.
  img.start_realtime_ns =
      clock.start_realtime_ns == 0 ? 0 : clock.start_realtime_ns + (fork_ns > clock.start_ns ? fork_ns - clock.start_ns : 0);
  p.images.push_back(std::move(img));
  p.start_ns = fork_ns;
  p.end_ns = fork_ns;
  p.start_realtime_ns = p.first().start_realtime_ns;
  return p;
}

// Children that a --follow-children process reaped (kChildExit) but that are neither a traced
// process nor a fork record's: started by vfork or clone (as Python's subprocess and glibc's
// system() do; the library hooks fork and posix_spawn only), and their program left no trace
// (setuid, setgid, file capabilities, static, LD_PRELOAD cleared). Each child a parent has claims the
// earliest wait for its pid (`seen_as`) at or after its start; every wait left is a child not
// recorded, its start unknown (start_known false; its reaping stands for it). Processes
// [0, traced) are the traced ones; appended children count against kMaxNotRecorded.
void AddReapedChildrenNotRecorded(std::vector<Process>& procs, size_t traced, std::vector<int32_t>& seen_as,
                                  size_t* not_recorded_omitted) {
  std::vector<std::vector<size_t>> kids(traced);
  for (size_t i = 0; i < procs.size(); ++i) {
    const int parent = procs[i].parent;
    if (parent >= 0 && static_cast<size_t>(parent) < traced) kids[static_cast<size_t>(parent)].push_back(i);
  }
  for (size_t q = 0; q < traced; ++q) {
    bool follow = false;
    std::vector<ProcessEvent> waits;
    for (const TraceImage& img : procs[q].images) {
      follow = follow || (img.flags & format::kFlagFollowChildren) != 0;
      for (const ProcessEvent& e : img.process_events) {
        if (e.kind == ProcessEventKind::kChildExit && static_cast<int32_t>(static_cast<uint32_t>(e.value)) > 0 &&
            e.what >= 1 && e.what <= static_cast<uint32_t>(EndKind::kReturned)) {
          waits.push_back(e);
        }
      }
    }
    if (!follow || waits.empty()) continue;  // without --follow-children, children never record
    std::stable_sort(waits.begin(), waits.end(), [](const ProcessEvent& a, const ProcessEvent& b) { return a.time_ns < b.time_ns; });
    std::vector<bool> claimed(waits.size(), false);
    for (size_t k : kids[q]) {
      for (size_t w = 0; w < waits.size(); ++w) {
        if (!claimed[w] && waits[w].value == static_cast<uint64_t>(static_cast<uint32_t>(seen_as[k])) &&
            waits[w].time_ns >= procs[k].start_ns) {
          claimed[w] = true;
          break;
        }
      }
    }
    for (size_t w = 0; w < waits.size(); ++w) {
      if (claimed[w]) continue;
      if (procs.size() - traced >= kMaxNotRecorded) {
        if (not_recorded_omitted != nullptr) ++*not_recorded_omitted;
        continue;
      }
      const auto pid = static_cast<int32_t>(static_cast<uint32_t>(waits[w].value));
      Process child = NotRecordedChild(procs[q], static_cast<int>(q), pid, waits[w].time_ns, false);
      child.start_known = false;
      procs.push_back(std::move(child));
      seen_as.push_back(pid);
    }
  }
}

// A process whose header's wall-clock start was unusable (the reader left it 0: damage) takes
// its host's offset between CLOCK_REALTIME and CLOCK_MONOTONIC from the earliest process of the
// same host and boot that has one (one monotonic clock per boot), so that it stays on the
// report's and the export's time axis; with none there, it stays unknown (0).
void FillUnknownRealtime(std::vector<Process>& procs) {
  std::map<std::pair<std::string, std::string>, const Process*> clock;  // (host, boot) → earliest known
  for (const Process& p : procs) {
    if (p.start_realtime_ns == 0) continue;
    const Process*& c = clock[{p.host, p.first().boot_id}];
    if (c == nullptr || p.start_ns < c->start_ns) c = &p;
  }
  for (Process& p : procs) {
    if (p.start_realtime_ns != 0) continue;
    auto it = clock.find({p.host, p.first().boot_id});
    if (it == clock.end()) continue;
    const int64_t offset = RealtimeOffset(it->second->start_realtime_ns, it->second->start_ns);
    auto at = [&](uint64_t ns) { return static_cast<uint64_t>(std::max<int64_t>(ShiftedTime(ns, offset), 1)); };
    p.start_realtime_ns = at(p.start_ns);
    for (TraceImage& img : p.images) {
      if (img.start_realtime_ns == 0) img.start_realtime_ns = at(img.start_ns);
    }
  }
}

}  // namespace

TreeOrderResult TreeOrder(const std::vector<TreeNode>& nodes) {
  // parent is the only link read: children and depth are made here.
  TreeOrderResult out;
  out.children.resize(nodes.size());
  out.depth.assign(nodes.size(), 0);
  std::vector<int> roots;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].parent >= 0) {
      out.children[static_cast<size_t>(nodes[i].parent)].push_back(static_cast<int>(i));
    } else {
      roots.push_back(static_cast<int>(i));
    }
  }
  auto by_start = [&](int a, int b) {
    return std::tie(nodes[a].start_ns, nodes[a].pid) < std::tie(nodes[b].start_ns, nodes[b].pid);
  };
  for (auto& k : out.children) std::sort(k.begin(), k.end(), by_start);
  std::sort(roots.begin(), roots.end(), [&](int a, int b) {
    return std::tie(nodes[a].start_realtime_ns, nodes[a].host, nodes[a].pid) <
           std::tie(nodes[b].start_realtime_ns, nodes[b].host, nodes[b].pid);
  });
  std::vector<int> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    out.order.push_back(i);
    const std::vector<int>& kids = out.children[static_cast<size_t>(i)];
    for (auto k = kids.rbegin(); k != kids.rend(); ++k) {
      out.depth[static_cast<size_t>(*k)] = out.depth[static_cast<size_t>(i)] + 1;
      stack.push_back(*k);
    }
  }
  return out;
}

std::vector<Process> OrderedAsATree(std::vector<Process> procs) {
  std::vector<TreeNode> nodes;
  nodes.reserve(procs.size());
  for (const Process& p : procs) nodes.push_back({p.parent, p.start_ns, p.pid, p.start_realtime_ns, p.host});
  const TreeOrderResult tree = TreeOrder(nodes);
  std::vector<int> new_index(procs.size());
  for (size_t n = 0; n < tree.order.size(); ++n) new_index[tree.order[n]] = static_cast<int>(n);
  std::vector<Process> out;
  out.reserve(procs.size());
  for (int i : tree.order) {
    Process& p = procs[i];
    p.depth = tree.depth[i];
    p.parent = p.parent >= 0 ? new_index[p.parent] : -1;
    p.children.clear();
    for (int k : tree.children[i]) p.children.push_back(new_index[k]);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Process> BuildProcesses(std::vector<TraceImage> images, const StringPool& strings,
                                    size_t* not_recorded_omitted) {
  if (not_recorded_omitted != nullptr) *not_recorded_omitted = 0;
  std::sort(images.begin(), images.end(), [](const TraceImage& a, const TraceImage& b) {
    return std::tie(a.host, a.boot_id, a.pid_namespace, a.pid, a.start_ns, a.image_index, a.file) <
           std::tie(b.host, b.boot_id, b.pid_namespace, b.pid, b.start_ns, b.image_index, b.file);
  });
  std::vector<Process> procs;
  for (TraceImage& img : images) {
    bool continues = !procs.empty() && ContinuesProcess(procs.back().last(), img);
    if (!continues) {
      procs.emplace_back();
      procs.back().host = img.host;
      procs.back().pid = img.pid;
    }
    procs.back().images.push_back(std::move(img));
  }
  for (Process& p : procs) DeriveLifetime(p);
  FillUnknownRealtime(procs);

  // Parents: same host, boot and pid namespace, pid == ppid, alive at the child's start; the
  // latest such start wins.
  std::map<PidKey, std::vector<int>> by_pid;
  for (size_t i = 0; i < procs.size(); ++i) by_pid[KeyOf(procs[i], procs[i].pid)].push_back(static_cast<int>(i));
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& child = procs[i];
    auto it = by_pid.find(KeyOf(child, child.ppid));
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
  struct Fork {
    int parent;
    uint64_t time_ns;
    int32_t pid;  // as the parent sees it
    bool other_namespace;
    int child = -1;  // the process it made, once known
  };
  std::vector<Fork> fork_list;
  std::map<PidKey, std::vector<size_t>> forks;  // same-namespace forks by the child's key
  for (size_t i = 0; i < procs.size(); ++i) {
    for (const TraceImage& img : procs[i].images) {
      for (const ProcessEvent& e : img.process_events) {
        if (e.kind != ProcessEventKind::kFork) continue;
        const bool other = (e.value & format::kForkOtherNamespace) != 0;
        const auto pid = static_cast<int32_t>(static_cast<uint32_t>(e.value));
        if (pid <= 0) continue;
        fork_list.push_back({static_cast<int>(i), e.time_ns, pid, other});
        if (!other) forks[KeyOf(procs[i], pid)].push_back(fork_list.size() - 1);
      }
    }
  }
  auto closes_loop = [&](int parent, int child) {
    for (int a = parent; a >= 0; a = procs[a].parent)
      if (a == child) return true;
    return false;
  };
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& child = procs[i];
    if (child.parent >= 0) continue;
    auto it = forks.find(KeyOf(child, child.pid));
    if (it == forks.end()) continue;
    int best = -1;
    uint64_t best_gap = UINT64_MAX;
    for (size_t f : it->second) {
      auto [q, t] = std::pair{fork_list[f].parent, fork_list[f].time_ns};
      if (q == static_cast<int>(i) || procs[q].start_ns > child.start_ns) continue;
      uint64_t gap = t > child.start_ns ? t - child.start_ns : child.start_ns - t;
      if (gap < best_gap) {
        best = q;
        best_gap = gap;
      }
    }
    if (best >= 0 && !closes_loop(best, static_cast<int>(i))) child.parent = best;
  }

  // Which fork made which child: per parent and pid, each child takes the unclaimed fork nearest
  // its start (a pid reused by two children of one parent has two forks). A fork into another pid
  // namespace (unshare --pid --fork) made the unlinked root of another namespace that started
  // nearest to it: that process is its child (its own header says ppid 0).
  std::map<std::pair<int, int32_t>, std::vector<size_t>> forks_by_parent;
  for (size_t f = 0; f < fork_list.size(); ++f) {
    if (!fork_list[f].other_namespace) forks_by_parent[{fork_list[f].parent, fork_list[f].pid}].push_back(f);
  }
  auto gap = [](uint64_t a, uint64_t b) { return a > b ? a - b : b - a; };
  // The pid each process has in its parent's records (kChildExit): its own, except for a child
  // forked into another pid namespace.
  std::vector<int32_t> seen_as(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) seen_as[i] = procs[i].pid;
  for (size_t i = 0; i < procs.size(); ++i) {
    if (procs[i].parent < 0) continue;
    auto it = forks_by_parent.find({procs[i].parent, procs[i].pid});
    if (it == forks_by_parent.end()) continue;
    size_t best = SIZE_MAX;
    for (size_t f : it->second) {
      if (fork_list[f].child >= 0) continue;
      if (best == SIZE_MAX || gap(fork_list[f].time_ns, procs[i].start_ns) < gap(fork_list[best].time_ns, procs[i].start_ns)) best = f;
    }
    if (best != SIZE_MAX) fork_list[best].child = static_cast<int>(i);
  }
  for (Fork& f : fork_list) {
    if (!f.other_namespace) continue;
    const Process& parent = procs[f.parent];
    int best = -1;
    for (size_t i = 0; i < procs.size(); ++i) {
      const Process& q = procs[i];
      if (q.parent >= 0 || static_cast<int>(i) == f.parent || q.host != parent.host ||
          q.first().boot_id != parent.first().boot_id || q.first().pid_namespace == 0 ||
          q.first().pid_namespace == parent.first().pid_namespace || q.ppid != 0) {
        continue;
      }
      if (best < 0 || gap(q.start_ns, f.time_ns) < gap(procs[best].start_ns, f.time_ns)) best = static_cast<int>(i);
    }
    if (best >= 0 && !closes_loop(f.parent, best)) {
      procs[best].parent = f.parent;
      f.child = best;
      seen_as[best] = f.pid;
    }
  }
  // A fork that made no traced process, by a process that meant its children to record
  // (--follow-children): the child left no trace. It is shown from the fork and its reaping.
  const size_t traced = procs.size();
  for (const Fork& f : fork_list) {
    if (f.child >= 0 || f.parent >= static_cast<int>(traced)) continue;
    bool follow = false;
    for (const TraceImage& img : procs[f.parent].images) follow = follow || (img.flags & format::kFlagFollowChildren) != 0;
    if (!follow) continue;
    if (procs.size() - traced >= kMaxNotRecorded) {
      if (not_recorded_omitted != nullptr) ++*not_recorded_omitted;
      continue;
    }
    procs.push_back(NotRecordedChild(procs[f.parent], f.parent, f.pid, f.time_ns, f.other_namespace));
    seen_as.push_back(f.pid);
  }
  AddReapedChildrenNotRecorded(procs, traced, seen_as, not_recorded_omitted);

  // The parent's waitpid() of a process that left no end of its own (killed by a signal, or it
  // recorded nothing): its exit status, and the time it was reaped as its end, the best bound we
  // have (its last record would make a process SIGKILLed while idle look short-lived). The status
  // also replaces "returned": the library saw main return but not the status, which the parent's
  // waitpid() did see.
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& p = procs[i];
    const bool want_exit = p.exit.kind == EndKind::kNone || p.exit.kind == EndKind::kReturned;
    if ((!want_exit && p.end_known) || p.parent < 0) continue;
    const ProcessEvent* seen = nullptr;
    for (const TraceImage& img : procs[p.parent].images) {
      for (const ProcessEvent& e : img.process_events) {
        if (e.kind != ProcessEventKind::kChildExit || e.value != static_cast<uint64_t>(static_cast<uint32_t>(seen_as[i])) ||
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
  for (Process& p : procs)
    if (p.exit.kind == EndKind::kExit) p.exit.code &= 0377;

  // Ranks and roles.
  std::vector<int> strength(procs.size(), 0);
  for (size_t i = 0; i < procs.size(); ++i) {
    procs[i].rank = FindInt(procs[i], kRankVars, &strength[i]);
    procs[i].local_rank = FindInt(procs[i], kLocalRankVars, nullptr);
    procs[i].world_size = FindInt(procs[i], kWorldSizeVars, nullptr);
  }
  std::vector<int> child_strength(procs.size(), 0);
  for (size_t i = 0; i < procs.size(); ++i) {
    procs[i].rank_strength = strength[i];
    if (procs[i].parent >= 0) child_strength[procs[i].parent] = std::max(child_strength[procs[i].parent], strength[i]);
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    Process& p = procs[i];
    StringId role = 0;
    for (const TraceImage& img : p.images)
      if (img.role != 0) role = img.role;
    // A rank's DataLoader workers inherit its RANK: a rank variable names a rank only where
    // the parent does not have the same one.
    const bool inherited = p.parent >= 0 && procs[p.parent].rank == p.rank && strength[p.parent] == strength[i];
    p.role = RoleOf({role != 0 ? std::string(strings.Get(role)) : std::string(), strength[i], child_strength[i], p.rank,
                     inherited, p.parent < 0, (p.last().flags & format::kFlagForkedChild) != 0});
  }

  return OrderedAsATree(std::move(procs));
}

std::string RoleOf(const RoleInputs& in) {
  if (!in.recorded.empty()) return in.recorded;
  if (in.child_strength > in.strength) return "launcher";
  if (in.rank && !in.inherited) return "rank " + std::to_string(*in.rank);
  if (in.root) return "main";
  return in.forked ? "forked child" : "child";
}

void OrderByAlignedStarts(Trace* trace) {
  const bool moved = std::any_of(trace->host_clocks.begin(), trace->host_clocks.end(), [](const HostClock& c) {
    return c.source != "reference" && c.source != "wall_clock" && c.source != "unknown";
  });
  if (moved) trace->processes = OrderedAsATree(std::move(trace->processes));
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
