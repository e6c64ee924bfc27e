// Call sites: the ranges, marks and CUDA calls that have stacks (`trainprof run --backtrace`),
// grouped per (what, call site) over every process, with count and total time — "load_batch at
// callsites.cc:20 — 30 calls, 1.2 ms in range 'io'". The call site is the first user frame of the
// stack (symbols/symbolizer.h: Python frames first where present, outside trainprof's shim and
// the libraries a call passes through — torch, nvtx, Lightning, the standard library; else the innermost native frame outside NVTX/CUDA). docs/report.md,
// "Call sites".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/model/stack_uses.h"
#include "collector/symbols/symbolizer.h"

namespace trainprof::collector {

struct CallSiteRow {
  StackedKind kind = StackedKind::kRange;
  std::string name;   ///< the range, mark or CUDA API
  uint64_t calls = 0;
  uint64_t total_ns = 0;  ///< summed durations (0 for marks)
  /// From the call site outward (innermost first): the stack of the group's most frequent one.
  /// Empty: the stack id was not defined (damage).
  std::vector<SymbolFrame> frames;
  /// Where the callers of one call site differ (a helper of the user's own that opens the range
  /// for several callers: an RAII scope class, a context manager, a decorator), the row is one
  /// caller's: the first user frame outward of the call site at which the callers' stacks differ.
  std::optional<SymbolFrame> caller;
  /// With a caller found past the call site's own caller, that one (shared by the split rows):
  /// the user frame that called the call site.
  std::optional<SymbolFrame> via;
  /// The call site was reached by more distinct call paths than a summary keeps (kCallerStacks):
  /// the row holds them all, not split.
  bool callers_cut = false;
  /// "load_batch at callsites.cc:20" (ShortSourcePath of the file), "load_batch", "<unknown stack>";
  /// with a caller: "ScopedRange at helpers.h:12, from train_step at train.cc:40" ("timed at
  /// helpers.py:10, via fetch at io.py:31, from loop_a at io.py:37" where the split is past the
  /// call site's own caller); cut: "..., from more than 64 call paths (not split)".
  std::string Site() const;
};

/// "function at file:line" (ShortSourcePath of the file), or "function" without a file.
std::string FrameSiteText(const SymbolFrame& f);

/// One caller of a call-site group: the stacks whose user frames outward of the call site (up to
/// kCallerDepth of them) are the same; `frames` is the first such stack outward of the call site
/// (the call site left out; at most kCallerFrames), and the events are all of theirs.
struct CallerStack {
  std::vector<SymbolFrame> frames;
  uint64_t calls = 0;
  uint64_t total_ns = 0;
};
inline constexpr size_t kCallerFrames = 48;   ///< frames kept of each caller stack
inline constexpr size_t kCallerStacks = 64;   ///< distinct callers (user frame paths) kept per group
inline constexpr size_t kCallerDepth = 8;     ///< user frames outward compared for a difference

/// One process's stacked events of one (kind, name, call site): what the call-site table merges
/// (its share of a report's summaries, collector/summary/).
struct CallSiteGroup {
  StackedKind kind = StackedKind::kRange;
  std::string name;
  bool known = false;  ///< the stack was defined and has a user frame
  SymbolFrame site;    ///< the call site's frame (known only)
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t best = 0;  ///< calls of the one stack whose frames `frames` are (the group's most frequent)
  std::vector<SymbolFrame> frames;  ///< that stack from the call site outward
  /// Its distinct stacks outward of the call site (known only), by first use; none kept past
  /// kCallerStacks (`callers_cut`: the group is then never split by caller).
  std::vector<CallerStack> callers;
  bool callers_cut = false;
};

/// The groups of trace.processes[process], in key order (kind, name, known, site).
std::vector<CallSiteGroup> CallSiteGroupsOf(const Trace& trace, size_t process, Symbolizer* symbols);

/// The table of the processes of these groups: groups of one key summed, their frames those of
/// the most frequent stack (the first process's of equal counts); the largest total time first
/// (then calls, key). A group whose callers differ (their stacks' user frames outward of the call
/// site, compared up to kCallerDepth of them) becomes a row per caller: per distinct user frame at
/// the first depth where they differ (CallSiteRow::caller), with that caller's most frequent stack.
std::vector<CallSiteRow> MergeCallSites(const std::vector<const std::vector<CallSiteGroup>*>& per_process);

/// Every stacked event of `trace`, grouped per (kind, name, call site); the largest total time
/// first (then calls, name).
/// `process`: only that one (an index into trace.processes); -1: all.
std::vector<CallSiteRow> CallSites(const Trace& trace, Symbolizer* symbols, int process = -1);

}  // namespace trainprof::collector
