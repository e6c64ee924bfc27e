#include "collector/stats/callsites.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "collector/base/source_path.h"

namespace trainprof::collector {

std::string CallSiteRow::Site() const {
  if (frames.empty()) return "<unknown stack>";
  const SymbolFrame& f = frames.front();
  if (!f.file) return f.function;
  return f.function + " at " + SourceLocation(*f.file, f.line.has_value(), f.line.value_or(0));
}

namespace {

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
      if (g.known && u.count > g.best) {
        g.best = u.count;
        g.frames.assign(shown.frames.begin() + static_cast<ptrdiff_t>(shown.call_site), shown.frames.end());
      }
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
    }
  }
  std::vector<CallSiteRow> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) out.push_back(std::move(g.row));
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
