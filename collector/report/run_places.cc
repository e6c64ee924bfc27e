// run_places.h: each process once, linked, named, on one clock, in tree order, cut to --rank.
#include "collector/report/run_places.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

#include "collector/read/process_tree.h"
#include "collector/read/rank_filter.h"

namespace trainprof::collector {
namespace {

// Where the processes of `run` go in the report: parent links from their places' keys (a process's
// identity: host, boot, pid namespace, pid and start, whichever summary holds it), in tree order
// (read/process_tree.h TreeOrder) on the hosts' aligned clocks.
struct Placement {
  std::vector<size_t> order;       // run indices in report order
  std::vector<int> parent, depth;  // per report index
  std::vector<std::vector<int>> children;
};

// A child summarised apart from its parent has the exit status its own file gives, or none; its
// parent's wait saw it (`made_up`: the child its parent's file alone made up, "not recorded"). As
// read/process_tree.h takes it: where the child's file has no status (or "returned"), with the end
// where it has none.
void TakeExitSeenByParent(const ProcessInfo& made_up, ProcessSummary* child) {
  ProcessInfo& info = child->info;
  if (made_up.exit_source != "parent_wait" || (info.exit_kind != "unknown" && info.exit_kind != "returned")) return;
  const bool end_known = info.exit_kind != "unknown";
  info.exit_kind = made_up.exit_kind;
  info.exit_code = made_up.exit_code;
  info.exit_text = made_up.exit_text;
  info.exit_source = made_up.exit_source;
  std::erase_if(child->losses, [](const LossNote& n) { return n.kind == Loss::no_exit_record; });
  if (!end_known && made_up.end_ns > info.end_ns) {
    info.end_ns = child->facts.end_ns = made_up.end_ns;
    info.wall_ns = info.end_ns > info.start_ns ? info.end_ns - info.start_ns : 0;
  }
}

// Each process's parent (an index into run.processes, -1: a root): the process its place names,
// else, for a process summarised apart from its parent (one trace file at a time), the process of
// its host, boot and pid namespace whose pid is its ppid and whose lifetime holds its start (the
// rule of read/process_tree.h).
std::vector<int> ParentsOf(const std::vector<ProcessSummary>& processes) {
  const size_t n = processes.size();
  std::map<ProcessKey, int> by_key;
  std::map<std::tuple<std::string_view, std::string_view, uint64_t, int32_t>, std::vector<int>> by_pid;
  for (size_t i = 0; i < n; ++i) {
    const ProcessKey& k = processes[i].place.key;
    by_key.emplace(k, static_cast<int>(i));
    if (processes[i].info.recorded != "no") by_pid[{k.host, k.boot_id, k.pid_namespace, k.pid}].push_back(static_cast<int>(i));
  }
  std::vector<int> parents(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const ProcessSummary& s = processes[i];
    if (s.place.parent) {
      auto it = by_key.find(*s.place.parent);
      if (it != by_key.end() && it->second != static_cast<int>(i)) parents[i] = it->second;
      continue;
    }
    const ProcessKey& k = s.place.key;
    auto it = by_pid.find({k.host, k.boot_id, k.pid_namespace, s.info.ppid});
    if (it == by_pid.end() || s.info.ppid <= 0) continue;
    for (int c : it->second) {
      const ProcessInfo& p = processes[static_cast<size_t>(c)].info;
      if (c == static_cast<int>(i) || p.start_ns > s.info.start_ns || (p.end_ns != 0 && p.end_ns < s.info.start_ns)) continue;
      if (parents[i] < 0 || processes[static_cast<size_t>(parents[i])].info.start_ns < p.start_ns) parents[i] = c;
    }
  }
  // Summaries that name each other as parents (forged: a process is its ancestor's ancestor) would
  // leave the cycle out of the tree: its first process met becomes a root.
  std::vector<uint8_t> state(n, 0);  // 0 unseen, 1 on the walk, 2 done
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> walk;
    size_t at = i;
    while (state[at] == 0) {
      state[at] = 1;
      walk.push_back(at);
      if (parents[at] < 0) break;
      at = static_cast<size_t>(parents[at]);
    }
    if (state[at] == 1 && parents[at] >= 0) parents[at] = -1;  // the walk came back to itself
    for (size_t w : walk) state[w] = 2;
  }
  return parents;
}

Placement PlaceProcesses(const RunSummaries& run, const std::vector<uint64_t>& starts, const std::vector<int>& parents) {
  const size_t n = run.processes.size();
  std::vector<TreeNode> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    const ProcessSummary& s = run.processes[i];
    nodes[i] = {parents[i], s.info.start_ns, s.info.pid, starts[i], s.info.host};
  }
  const TreeOrderResult tree = TreeOrder(nodes);
  Placement out;
  std::vector<int> at(n, -1);
  for (size_t k = 0; k < tree.order.size(); ++k) at[static_cast<size_t>(tree.order[k])] = static_cast<int>(k);
  for (int i : tree.order) {
    out.order.push_back(static_cast<size_t>(i));
    out.parent.push_back(nodes[i].parent >= 0 ? at[static_cast<size_t>(nodes[i].parent)] : -1);
    out.depth.push_back(tree.depth[i]);
    std::vector<int> kids;
    for (int c : tree.children[i]) kids.push_back(at[static_cast<size_t>(c)]);
    out.children.push_back(std::move(kids));
  }
  return out;
}

// Cuts `p` to the processes whose rank is one of `ranks` (in their order; a process whose parent
// is left out becomes a root), as read/rank_filter.h KeepRanks cuts a trace.
void KeepRanksOf(const RunSummaries& run, const std::vector<int64_t>& ranks, Placement* p) {
  const std::set<int64_t> wanted(ranks.begin(), ranks.end());
  std::vector<int> new_index(p->order.size(), -1);
  Placement kept;
  for (size_t k = 0; k < p->order.size(); ++k) {
    const ProcessInfo& info = run.processes[p->order[k]].info;
    if (!info.rank || wanted.count(*info.rank) == 0) continue;
    new_index[k] = static_cast<int>(kept.order.size());
    kept.order.push_back(p->order[k]);
    kept.parent.push_back(p->parent[k]);
    kept.children.push_back(p->children[k]);
  }
  for (size_t k = 0; k < kept.order.size(); ++k) {
    int& parent = kept.parent[k];
    parent = parent >= 0 ? new_index[static_cast<size_t>(parent)] : -1;
    std::vector<int> kids;
    for (int c : kept.children[k]) {
      if (new_index[static_cast<size_t>(c)] >= 0) kids.push_back(new_index[static_cast<size_t>(c)]);
    }
    kept.children[k] = std::move(kids);
    kept.depth.push_back(parent >= 0 ? kept.depth[static_cast<size_t>(parent)] + 1 : 0);
  }
  *p = std::move(kept);
}

// Keeps the processes of *run (and their splits) whose `keep` is true; returns each one's new index
// (-1: left out).
std::vector<int> KeepProcesses(RunSummaries* run, const std::vector<bool>& keep) {
  const bool splits = run->splits.size() == run->processes.size();
  run->sources.resize(run->processes.size());
  std::vector<int> new_index(run->processes.size(), -1);
  std::vector<ProcessSummary> kept;
  std::vector<StepSplit> kept_splits;
  std::vector<std::string> kept_sources;
  for (size_t i = 0; i < run->processes.size(); ++i) {
    if (!keep[i]) continue;
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(run->processes[i]));
    kept_sources.push_back(std::move(run->sources[i]));
    if (splits) kept_splits.push_back(std::move(run->splits[i]));
  }
  run->processes = std::move(kept);
  run->splits = std::move(kept_splits);
  run->sources = std::move(kept_sources);
  return new_index;
}

}  // namespace

RunPlaces PlaceRun(RunSummaries* run, const std::vector<int64_t>& ranks) {
  RunPlaces out;
  // A process summarised twice (a trace and its summary file, or two summary files of one trace):
  // the first is kept, and the report says so.
  std::vector<std::string> twice;
  {
    std::map<ProcessKey, size_t> seen;
    std::vector<bool> keep(run->processes.size(), true);
    for (size_t i = 0; i < run->processes.size(); ++i) {
      auto [first, inserted] = seen.emplace(run->processes[i].place.key, i);
      if (inserted) continue;
      const ProcessInfo& info = run->processes[i].info;
      run->sources.resize(run->processes.size());
      auto from = [&](size_t k) {
        const std::string& source = run->sources[k];
        const std::vector<std::string>& files = run->processes[k].info.files;
        return source.empty() ? (files.empty() ? std::string("its parent's trace") : files.front()) : source;
      };
      twice.push_back("pid " + std::to_string(info.pid) + (info.host.empty() ? "" : " on " + info.host) +
                      " is in two of the inputs (a trace and its summary, or one trace summarised twice): from " +
                      from(first->second) + " it is kept, from " + from(i) + " left out");
      keep[i] = false;
    }
    KeepProcesses(run, keep);
  }
  // A trace file in two inputs (a trace and its summary) is one file.
  {
    std::set<std::string> paths;
    std::erase_if(run->files, [&](const FileStatus& f) { return !paths.insert(f.path).second; });
  }
  // A child summarised apart from its parent (one trace file at a time) was made up there from
  // its parent's fork and wait records ("not recorded"): that made-up one goes where the child's
  // own summary is here.
  std::vector<int> parents = ParentsOf(run->processes);
  {
    std::map<std::pair<int, int32_t>, size_t> recorded_children;  // (parent, pid) → index
    for (size_t i = 0; i < run->processes.size(); ++i) {
      if (parents[i] >= 0 && run->processes[i].info.recorded != "no") recorded_children[{parents[i], run->processes[i].info.pid}] = i;
    }
    std::vector<bool> keep(run->processes.size(), true);
    for (size_t i = 0; i < run->processes.size(); ++i) {
      auto child = parents[i] >= 0 && run->processes[i].info.recorded == "no"
                       ? recorded_children.find({parents[i], run->processes[i].info.pid})
                       : recorded_children.end();
      if (child == recorded_children.end()) continue;
      // What only the parent saw: the child's exit status from its wait (read/process_tree.h).
      TakeExitSeenByParent(run->processes[i].info, &run->processes[child->second]);
      keep[i] = false;
    }
    const std::vector<int> new_index = KeepProcesses(run, keep);
    std::vector<int> kept_parents;
    for (size_t i = 0; i < parents.size(); ++i) {
      if (new_index[i] >= 0) kept_parents.push_back(parents[i] >= 0 ? new_index[static_cast<size_t>(parents[i])] : -1);
    }
    parents = std::move(kept_parents);
  }
  // Roles from the linked tree (read/process_tree.h RoleOf): a launcher summarised apart from its
  // ranks, a child apart from its parent, are named as in one run over all the files.
  {
    std::vector<int> child_strength(run->processes.size(), 0);
    for (size_t i = 0; i < run->processes.size(); ++i) {
      if (parents[i] >= 0) {
        int& c = child_strength[static_cast<size_t>(parents[i])];
        c = std::max(c, run->processes[i].place.rank_strength);
      }
    }
    for (size_t i = 0; i < run->processes.size(); ++i) {
      ProcessSummary& s = run->processes[i];
      if (s.info.recorded == "no") continue;  // made up from a parent's records: a child, as it was made
      const ProcessSummary* parent = parents[i] >= 0 ? &run->processes[static_cast<size_t>(parents[i])] : nullptr;
      const bool inherited = parent != nullptr && parent->info.rank == s.info.rank &&
                             parent->place.rank_strength == s.place.rank_strength;
      s.info.role = s.facts.role = RoleOf({s.place.recorded_role, s.place.rank_strength, child_strength[i], s.info.rank,
                                           inherited, parent == nullptr, s.place.forked_child});
    }
  }
  // Every host on one clock, from every process's shared instants (before any is cut by --rank).
  std::vector<ClockInput> clock_inputs;
  for (const ProcessSummary& s : run->processes) {
    clock_inputs.push_back({s.info.host, s.info.rank, s.place.file_start_realtime_ns, s.info.start_ns, &s.place.instants});
  }
  HostClockEstimate clocks = EstimateHostClocks(clock_inputs);
  for (size_t i = 0; i < run->processes.size(); ++i) {
    run->processes[i].info.start_realtime_ns = clocks.start_realtime_ns[i];
    run->processes[i].facts.start_realtime_ns = clocks.start_realtime_ns[i];
  }
  Placement place = PlaceProcesses(*run, clocks.start_realtime_ns, parents);
  std::vector<FileStatus> files = std::move(run->files);
  if (!ranks.empty()) {
    std::set<int64_t> present;
    for (const ProcessSummary& s : run->processes) {
      if (s.info.rank) present.insert(*s.info.rank);
    }
    if (std::string missing = MissingRank(present, ranks); !missing.empty()) throw std::invalid_argument(missing);
    KeepRanksOf(*run, ranks, &place);
    // The files of left-out processes go; a file no process names (no usable image) stays.
    std::set<std::string> named, kept_named;
    for (const ProcessSummary& s : run->processes) named.insert(s.info.files.begin(), s.info.files.end());
    for (size_t i : place.order) kept_named.insert(run->processes[i].info.files.begin(), run->processes[i].info.files.end());
    std::vector<FileStatus> kept_files;
    for (FileStatus& f : files) {
      if (named.count(f.path) == 0 || kept_named.count(f.path) > 0) kept_files.push_back(std::move(f));
    }
    files = std::move(kept_files);
    std::set<std::string> hosts;
    for (size_t i : place.order) hosts.insert(run->processes[i].info.host);
    std::vector<HostClock> kept_clocks;
    for (HostClock& h : clocks.clocks) {
      if (hosts.count(h.host) > 0 || h.host == clocks.reference) kept_clocks.push_back(std::move(h));
    }
    clocks.clocks = std::move(kept_clocks);
  }
  const size_t n = place.order.size();
  std::vector<ProcessSummary> summaries;  // in report order
  summaries.reserve(n);
  std::vector<StepSplit> splits;
  const bool have_splits = run->splits.size() == run->processes.size();
  for (size_t k = 0; k < n; ++k) {
    summaries.push_back(std::move(run->processes[place.order[k]]));
    summaries.back().facts.children = place.children[k];
    if (have_splits) splits.push_back(std::move(run->splits[place.order[k]]));
  }
  run->processes = {};
  run->splits = {};
  out.summaries = std::move(summaries);
  out.splits = std::move(splits);
  out.parent = std::move(place.parent);
  out.depth = std::move(place.depth);
  out.files = std::move(files);
  out.clocks = std::move(clocks);
  out.warnings = std::move(twice);
  return out;
}

}  // namespace trainprof::collector
