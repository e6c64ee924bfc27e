#include "collector/stats/callsites.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "collector/base/source_path.h"

namespace trainprof::collector {

std::string FrameSiteText(const SymbolFrame& f) {
  if (!f.file) return f.function;
  return f.function + " at " + SourceLocation(*f.file, f.line.has_value(), f.line.value_or(0));
}

std::string CallSiteRow::Site() const {
  if (frames.empty()) return "<unknown stack>";
  std::string s = FrameSiteText(frames.front());
  if (via) s += ", via " + FrameSiteText(*via);
  if (caller) s += ", from " + FrameSiteText(*caller);
  if (callers_cut) s += ", from more than " + std::to_string(kCallerStacks) + " call paths (not split)";
  return s;
}

namespace {

std::vector<const SymbolFrame*> UserChain(const std::vector<SymbolFrame>& frames);

// Adds the events of one stack (frames outward of the call site) to a group's callers: to the one
// of the same user frames (UserChain), else a new one.
void AddCaller(std::vector<SymbolFrame> frames, uint64_t calls, uint64_t total_ns, CallSiteGroup* g) {
  if (frames.size() > kCallerFrames) frames.resize(kCallerFrames);
  const std::vector<const SymbolFrame*> chain = UserChain(frames);
  auto same = [&](const std::vector<const SymbolFrame*>& other) {
    return std::equal(chain.begin(), chain.end(), other.begin(), other.end(),
                      [](const SymbolFrame* a, const SymbolFrame* b) { return a->Key() == b->Key(); });
  };
  for (CallerStack& c : g->callers) {
    if (same(UserChain(c.frames))) {
      c.calls += calls;
      c.total_ns += total_ns;
      return;
    }
  }
  if (g->callers.size() >= kCallerStacks) {
    g->callers_cut = true;
    return;
  }
  g->callers.push_back({std::move(frames), calls, total_ns});
}

// The user frames of a caller stack, outward, at most kCallerDepth.
std::vector<const SymbolFrame*> UserChain(const std::vector<SymbolFrame>& frames) {
  std::vector<const SymbolFrame*> out;
  for (const SymbolFrame& f : frames) {
    if (out.size() == kCallerDepth) break;
    if (IsUserFrame(f)) out.push_back(&f);
  }
  return out;
}

using FrameKey = decltype(std::declval<const SymbolFrame&>().Key());

// The rows of one group split by caller: per distinct user frame at the first depth where the
// callers' user frames differ; {} when they do not (or the callers were cut).
std::vector<CallSiteRow> SplitByCaller(const CallSiteRow& whole, const std::vector<CallerStack>& callers, bool cut) {
  if (cut || callers.size() < 2 || whole.frames.empty()) return {};
  std::vector<std::vector<const SymbolFrame*>> chains;
  for (const CallerStack& c : callers) chains.push_back(UserChain(c.frames));
  auto at = [](const std::vector<const SymbolFrame*>& chain, size_t d) {
    return d < chain.size() ? std::optional<FrameKey>(chain[d]->Key()) : std::nullopt;
  };
  // Two frames present at a depth differ; a stack without a frame there (a shorter or cut one)
  // differs from none. Its events go to a row without a caller when the others split.
  for (size_t d = 0; d < kCallerDepth; ++d) {
    const SymbolFrame* first = nullptr;
    bool differ = false;
    for (const auto& chain : chains) {
      if (d >= chain.size()) continue;
      if (first == nullptr) first = chain[d];
      differ = differ || chain[d]->Key() != first->Key();
    }
    const bool any = first != nullptr;
    if (!any) return {};
    if (!differ) continue;
    struct Part {
      CallSiteRow row;
      uint64_t best = 0;
    };
    std::vector<Part> parts;  // by first caller
    for (size_t i = 0; i < callers.size(); ++i) {
      const std::optional<FrameKey> key = at(chains[i], d);
      auto it = std::find_if(parts.begin(), parts.end(), [&](const Part& p) {
        return (p.row.caller ? std::optional<FrameKey>(p.row.caller->Key()) : std::nullopt) == key;
      });
      if (it == parts.end()) {
        Part p;
        p.row.kind = whole.kind;
        p.row.name = whole.name;
        if (key) p.row.caller = *chains[i][d];
        if (key && d > 0) p.row.via = *chains[i][0];  // shared by all: they differ first at d
        parts.push_back(std::move(p));
        it = parts.end() - 1;
      }
      it->row.calls += callers[i].calls;
      it->row.total_ns += callers[i].total_ns;
      if (callers[i].calls > it->best) {
        it->best = callers[i].calls;
        it->row.frames.assign(1, whole.frames.front());
        it->row.frames.insert(it->row.frames.end(), callers[i].frames.begin(), callers[i].frames.end());
      }
    }
    std::vector<CallSiteRow> out;
    for (Part& p : parts) out.push_back(std::move(p.row));
    return out;
  }
  return {};
}

using SiteKey = std::tuple<std::string, std::optional<std::string>, std::optional<uint32_t>, std::optional<std::string>,
                           bool>;
using GroupKey = std::tuple<StackedKind, std::string, bool, SiteKey>;

GroupKey KeyOf(const CallSiteGroup& g) {
  SiteKey site;
  if (g.known) site = {g.site.function, g.site.file, g.site.line, g.site.module, g.site.python};
  return {g.kind, g.name, g.known, site};
}

}  // namespace

std::vector<CallSiteGroup> CallSiteGroupsOf(const Trace& trace, size_t process, Symbolizer* symbols) {
  std::map<GroupKey, CallSiteGroup> groups;
  for (const TraceImage& img : trace.processes[process].images) {
    if (img.stacks.stacks.empty() && img.stacks.uses.empty()) {
      bool any = false;
      for (const CudaCall& c : img.cuda.calls) any = any || c.stack != 0;
      if (!any) continue;
    }
    for (NamedStackUse& u : StackUsesOf(img, trace.strings)) {
      ShownStack shown = symbols->Show(img.stacks, u.stack);
      CallSiteGroup key{.kind = u.kind, .name = u.name};
      key.known = shown.known && shown.call_site < shown.frames.size();
      if (key.known) key.site = shown.frames[shown.call_site];
      auto [it, fresh] = groups.try_emplace(KeyOf(key));
      CallSiteGroup& g = it->second;
      if (fresh) g = std::move(key);
      g.calls += u.count;
      g.total_ns += u.total_ns;
      if (!g.known) continue;
      if (u.count > g.best) {
        g.best = u.count;
        g.frames.assign(shown.frames.begin() + static_cast<ptrdiff_t>(shown.call_site), shown.frames.end());
      }
      AddCaller(std::vector<SymbolFrame>(shown.frames.begin() + static_cast<ptrdiff_t>(shown.call_site) + 1,
                                         shown.frames.end()),
                u.count, u.total_ns, &g);
    }
  }
  std::vector<CallSiteGroup> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

std::vector<CallSiteRow> MergeCallSites(const std::vector<const std::vector<CallSiteGroup>*>& per_process) {
  struct Group {
    CallSiteRow row;
    uint64_t best = 0;  // calls of the stack whose frames the row shows
    CallSiteGroup callers;  // its callers, over the processes
  };
  std::map<GroupKey, Group> groups;
  for (const std::vector<CallSiteGroup>* process : per_process) {
    for (const CallSiteGroup& p : *process) {
      Group& g = groups[KeyOf(p)];
      g.row.kind = p.kind;
      g.row.name = p.name;
      g.row.calls += p.calls;
      g.row.total_ns += p.total_ns;
      if (p.known && p.best > g.best) {
        g.best = p.best;
        g.row.frames = p.frames;
      }
      g.callers.callers_cut = g.callers.callers_cut || p.callers_cut;
      for (const CallerStack& c : p.callers) AddCaller(c.frames, c.calls, c.total_ns, &g.callers);
    }
  }
  std::vector<CallSiteRow> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) {
    std::vector<CallSiteRow> split = SplitByCaller(g.row, g.callers.callers, g.callers.callers_cut);
    if (split.empty()) {
      g.row.callers_cut = g.callers.callers_cut && !g.row.frames.empty();
      out.push_back(std::move(g.row));
    } else {
      for (CallSiteRow& r : split) out.push_back(std::move(r));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const CallSiteRow& a, const CallSiteRow& b) {
    return std::tie(b.total_ns, b.calls) < std::tie(a.total_ns, a.calls);
  });
  return out;
}

std::vector<CallSiteRow> CallSites(const Trace& trace, Symbolizer* symbols, int process) {
  std::vector<std::vector<CallSiteGroup>> groups;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    if (process >= 0 && static_cast<size_t>(process) != pi) continue;
    groups.push_back(CallSiteGroupsOf(trace, pi, symbols));
  }
  std::vector<const std::vector<CallSiteGroup>*> per_process;
  for (const auto& g : groups) per_process.push_back(&g);
  return MergeCallSites(per_process);
}

}  // namespace trainprof::collector
