// Process images → processes: merge the images of one process (exec), link parents, derive
// lifetime, exit, rank and role; add the children that left no trace.
//
//   images (any order) ─► group by (host, boot id, pid namespace, pid); an image continues the
//                        previous one only if it has the same start time and the previous one
//                        ended in exec (pid reuse, other namespaces: separate processes; files
//                        without identity: image_index growing)
//                     ─► lifetime: first image's start → last image's end
//                     ─► parent: traced process on the same host with pid == ppid whose lifetime
//                        contains the child's start (pids are reused); for an orphan (ppid 1
//                        after its parent exited) the process whose kFork record names it; a
//                        fork into another pid namespace: the root there that started nearest
//                     ─► a kFork with no traced child, by a --follow-children process: a process
//                        "not recorded" (Process::recorded), from the fork and its reaping; a
//                        kChildExit of no traced or forked child (vfork, clone): one from
//                        its reaping alone (Process::start_known false)
//                     ─► exit: header end_kind, else kProcessEnd, else the parent's kChildExit
//                        (kExit codes & 0377, as waitpid() reports them)
//                     ─► rank (RANK / OMPI / PMI / SLURM variables) and role
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Builds processes in tree order (roots by start time, each followed by its subtree; children by
/// start time). Parent/children/depth are indices into the returned vector.
/// At most kMaxNotRecorded processes are made up from fork and wait records (Process::Recorded::kNotRecorded);
/// further ones are only counted in *not_recorded_omitted (when given): a hostile or runaway trace
/// with millions of FORK records must not cost a Process each.
inline constexpr size_t kMaxNotRecorded = 10000;
std::vector<Process> BuildProcesses(std::vector<TraceImage> images, const StringPool& strings,
                                    size_t* not_recorded_omitted = nullptr);

/// `procs` in tree order: roots by wall-clock start (then host, pid), each followed by its
/// subtree, children by start time; parent, children and depth as indices into the result. Only
/// `parent` is read. BuildProcesses' order; again after AlignHostClocks moved hosts' starts
/// (OrderByAlignedStarts).
std::vector<Process> OrderedAsATree(std::vector<Process> procs);

/// A process as the tree order reads it: `parent` an index into the nodes (-1: a root).
struct TreeNode {
  int parent = -1;
  uint64_t start_ns = 0;
  int32_t pid = 0;
  uint64_t start_realtime_ns = 0;
  std::string_view host;
};
/// OrderedAsATree's order of `nodes`: `order` their indices in tree order; per node (by input
/// index) its depth and its children (input indices, by start time). What the report's merge orders
/// the processes of summaries by.
struct TreeOrderResult {
  std::vector<int> order;
  std::vector<int> depth;
  std::vector<std::vector<int>> children;
};
TreeOrderResult TreeOrder(const std::vector<TreeNode>& nodes);
/// Puts trace->processes in tree order again once their wall-clock starts changed (hosts aligned
/// on one clock, analysis/host_clocks.h): a host whose clock ran ahead no longer lists its
/// processes after those that started later. Nothing moves unless some host was aligned.
void OrderByAlignedStarts(Trace* trace);

/// What a process's role follows from.
struct RoleInputs {
  std::string recorded;    ///< its last image's kRole record ("DataLoader worker", ...; "" none)
  int strength = 0;        ///< the rank variable it has (Process::rank_strength)
  int child_strength = 0;  ///< the strongest of its children's
  std::optional<int64_t> rank;
  bool inherited = false;  ///< its parent has the same rank from a variable of the same strength
  bool root = false;
  bool forked = false;     ///< forked and not exec'd (format::kFlagForkedChild)
};
/// Its role: the recorded one; "launcher" where a child has a stronger rank variable (torchrun,
/// mpirun); "rank N" where its rank is its own (not a DataLoader worker's inherited RANK); "main"
/// for a root; "forked child" or "child". BuildProcesses' rule, which the report's merge applies
/// again once processes summarised apart are linked.
std::string RoleOf(const RoleInputs& in);

/// "exit 0", "exit 3", "signal 9 (SIGKILL)", "exec'd", "returned", "unknown".
std::string DescribeExit(const ExitInfo& exit);
/// "exit", "signal", "exec", "returned", "unknown" (the JSON/CSV exit kind).
const char* ExitKindName(EndKind kind);

}  // namespace trainprof::collector
