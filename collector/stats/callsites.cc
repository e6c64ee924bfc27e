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

std::vector<CallSiteRow> CallSites(const Trace& trace, Symbolizer* symbols, int process) {
  struct Group {
    CallSiteRow row;
    uint64_t best = 0;  // calls of the stack whose frames the row shows
  };
  using SiteKey = std::tuple<std::string, std::optional<std::string>, std::optional<uint32_t>,
                             std::optional<std::string>, bool>;
  std::map<std::tuple<StackedKind, std::string, bool, SiteKey>, Group> groups;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    if (process >= 0 && static_cast<size_t>(process) != pi) continue;
    for (const TraceImage& img : trace.processes[pi].images) {
      if (img.stacks.stacks.empty() && img.stacks.uses.empty()) {
        bool any = false;
        for (const CudaCall& c : img.cuda.calls) any = any || c.stack != 0;
        if (!any) continue;
      }
      for (NamedStackUse& u : StackUsesOf(img, trace.strings)) {
        ShownStack shown = symbols->Show(img.stacks, u.stack);
        SiteKey site;
        const bool known = shown.known && shown.call_site < shown.frames.size();
        if (known) {
          const SymbolFrame& f = shown.frames[shown.call_site];
          site = {f.function, f.file, f.line, f.module, f.python};
        }
        Group& g = groups[{u.kind, u.name, known, site}];
        g.row.kind = u.kind;
        g.row.name = u.name;
        g.row.calls += u.count;
        g.row.total_ns += u.total_ns;
        if (known && u.count > g.best) {
          g.best = u.count;
          g.row.frames.assign(shown.frames.begin() + static_cast<ptrdiff_t>(shown.call_site), shown.frames.end());
        }
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

}  // namespace trainprof::collector
