#include "collector/export/selection.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <queue>
#include <tuple>

#include "collector/export/nvtx_walk.h"

namespace trainprof::collector {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// Seconds ("2", "0.25", "1e-3") → ns; "" on success.
std::string ParseSeconds(std::string_view text, const char* what, uint64_t* ns) {
  text = Trim(text);
  double s = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), s);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(s)) {
    return std::string(what) + " " + Quoted(text) + " is not a number of seconds";
  }
  if (s < 0) return std::string(what) + " " + Quoted(text) + " is negative (seconds from the run's start)";
  if (s > 1e9) return std::string(what) + " " + Quoted(text) + " is too large";
  *ns = static_cast<uint64_t>(std::llround(s * 1e9));
  return "";
}

std::string JoinIds(const std::set<int64_t>& ids) {
  std::string out;
  size_t n = 0;
  for (int64_t id : ids) {
    if (n == 10) {
      out += ", ... (" + std::to_string(ids.size()) + " in all)";
      break;
    }
    if (n++ > 0) out += ", ";
    out += std::to_string(id);
  }
  return out;
}

std::string Seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// The N-th range named `name` (by start on the axis) of the selected processes: [begin, end].
std::optional<std::pair<uint64_t, uint64_t>> FindNvtxInstance(const Trace& trace, const TimeAxis& axis,
                                                              const std::vector<bool>& selected, StringId name,
                                                              std::optional<StringId> domain, uint64_t instance,
                                                              uint64_t* found) {
  // The `instance` earliest ranges so far, the latest of them on top: memory grows with N, not
  // with the ranges of that name.
  using Range = std::tuple<uint64_t, uint64_t, size_t>;  // (begin, end, process) on the axis
  std::priority_queue<Range> earliest;
  uint64_t n = 0;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    if (!selected[pi]) continue;
    const ExportClock& clock = axis.clocks[pi];
    for (const TraceImage& img : trace.processes[pi].images) {
      WalkNvtx(
          trace, img,
          [&](const NvtxEvent& b, const NvtxEvent& e, uint64_t) {
            if (b.name != name || (domain && b.domain != *domain)) return;
            ++n;
            if (instance == 0) return;
            const Range r{clock(b.time_ns), clock(e.time_ns), pi};
            if (earliest.size() < instance) {
              earliest.push(r);
            } else if (r < earliest.top()) {
              earliest.pop();
              earliest.push(r);
            }
          },
          [](const NvtxEvent&, uint64_t) {});
    }
  }
  *found = n;
  if (instance == 0 || instance > n) return std::nullopt;
  const auto& [b, e, p] = earliest.top();
  return std::make_pair(b, std::max(b, e));
}

}  // namespace

std::string ParseWindow(std::string_view text, WindowSpec* out) {
  WindowSpec w;
  w.text = std::string(text);
  if (text.substr(0, 5) == "nvtx:") {
    std::string_view rest = text.substr(5);
    const size_t hash = rest.rfind('#');
    if (hash == std::string_view::npos) {
      return "an NVTX window names the instance: nvtx:NAME#N (N = 1 for the first range named NAME)";
    }
    const std::string_view n = rest.substr(hash + 1);
    uint64_t instance = 0;
    auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), instance);
    if (n.empty() || ec != std::errc() || ptr != n.data() + n.size()) {
      return "the instance " + Quoted(n) + " after '#' is not a whole number (nvtx:NAME#N, N from 1)";
    }
    if (instance == 0) return "the instance is counted from 1 (nvtx:NAME#1 is the first range named NAME)";
    if (hash == 0) return "no range name before '#' (nvtx:NAME#N)";
    w.kind = WindowSpec::Kind::kNvtx;
    w.nvtx_name = std::string(rest.substr(0, hash));
    w.instance = instance;
    *out = std::move(w);
    return "";
  }
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return "expected START:END in seconds from the run's start (\"2:5.5\", \"10:\") or nvtx:NAME#N";
  }
  const std::string_view start = Trim(text.substr(0, colon)), end = Trim(text.substr(colon + 1));
  w.kind = WindowSpec::Kind::kSeconds;
  if (!start.empty()) {
    if (std::string e = ParseSeconds(start, "START", &w.begin_ns); !e.empty()) return e;
  }
  if (!end.empty()) {
    if (std::string e = ParseSeconds(end, "END", &w.end_ns); !e.empty()) return e;
    if (w.end_ns <= w.begin_ns) {
      return "END (" + std::string(end) + ") is not after START (" + std::string(start.empty() ? "0" : start) + ")";
    }
  }
  *out = std::move(w);
  return "";
}

std::string ParseIdList(std::string_view text, int64_t min, std::vector<int64_t>* out) {
  std::vector<int64_t> ids;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string_view item = Trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (item.empty()) return "an empty item in " + Quoted(text) + " (a comma list: 0,1,2)";
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || ptr != item.data() + item.size()) return Quoted(item) + " is not an integer";
    if (v < min) return Quoted(item) + " is less than " + std::to_string(min);
    ids.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  out->insert(out->end(), ids.begin(), ids.end());
  return "";
}

size_t Selection::selected() const { return static_cast<size_t>(std::count(processes_.begin(), processes_.end(), true)); }

std::optional<Selection> ResolveSelection(const Trace& trace, const TimeAxis& axis, const SelectionSpec& spec,
                                          std::string* error) {
  Selection sel(trace.processes.size());
  std::set<int64_t> pids, ranks;
  for (const Process& p : trace.processes) {
    pids.insert(p.pid);
    if (p.rank) ranks.insert(*p.rank);
  }
  for (int64_t pid : spec.pids) {
    if (!pids.count(pid)) {
      *error = "--pid " + std::to_string(pid) + ": no process of the trace has that pid (pids: " + JoinIds(pids) + ")";
      return std::nullopt;
    }
  }
  for (int64_t rank : spec.ranks) {
    if (!ranks.count(rank)) {
      *error = "--rank " + std::to_string(rank) + ": no process has rank " + std::to_string(rank) +
               (ranks.empty() ? std::string(" (no process of the trace has a rank)")
                              : " (ranks: " + JoinIds(ranks) + ")");
      return std::nullopt;
    }
  }
  const std::set<int64_t> want_pids(spec.pids.begin(), spec.pids.end());
  const std::set<int64_t> want_ranks(spec.ranks.begin(), spec.ranks.end());
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const Process& p = trace.processes[i];
    bool keep = want_pids.empty() || want_pids.count(p.pid);
    if (!want_ranks.empty()) keep = keep && p.rank && want_ranks.count(*p.rank);
    sel.processes_[i] = keep;
  }
  if (sel.selected() == 0) {
    *error = "--pid and --rank select no process together (each option narrows the other)";
    return std::nullopt;
  }

  const WindowSpec& w = spec.window;
  if (w.kind == WindowSpec::Kind::kSeconds) {
    uint64_t run_end = 0;
    for (size_t i = 0; i < trace.processes.size(); ++i) {
      const Process& p = trace.processes[i];
      if (!sel.processes_[i]) continue;
      for (const TraceImage& img : p.images) {
        const uint64_t last = std::max({img.end_ns, img.has_timed_records ? img.last_record_ns : 0, p.end_ns});
        run_end = std::max(run_end, axis.clocks[i](last));
      }
    }
    if (w.begin_ns > run_end) {
      *error = "--window " + w.text + ": starts after the end of the selected processes (" + Seconds(run_end) +
               " after the run's start)";
      return std::nullopt;
    }
    sel.begin_ns_ = w.begin_ns;
    sel.end_ns_ = w.end_ns;
  } else if (w.kind == WindowSpec::Kind::kNvtx) {
    const StringId name = trace.strings.Find(w.nvtx_name);
    uint64_t found = 0;
    std::optional<std::pair<uint64_t, uint64_t>> range;
    if (name != 0) range = FindNvtxInstance(trace, axis, sel.processes_, name, std::nullopt, w.instance, &found);
    // No range has that name: it may be the report's display name of a range of a domain,
    // "DOMAIN:NAME" (a domain's name may hold ':' itself: each split is tried, the first one
    // that names ranges is taken).
    for (size_t colon = w.nvtx_name.find(':'); found == 0 && colon != std::string::npos;
         colon = w.nvtx_name.find(':', colon + 1)) {
      const StringId domain = trace.strings.Find(std::string_view(w.nvtx_name).substr(0, colon));
      const StringId in_domain = trace.strings.Find(std::string_view(w.nvtx_name).substr(colon + 1));
      if (domain == 0 || in_domain == 0) continue;
      range = FindNvtxInstance(trace, axis, sel.processes_, in_domain, domain, w.instance, &found);
    }
    if (!range) {
      *error = "--window " + w.text + ": " +
               (found == 0 ? "no NVTX range named '" + w.nvtx_name + "' in the selected processes"
                           : "the selected processes have " + std::to_string(found) + " range" +
                                 (found == 1 ? "" : "s") + " named '" + w.nvtx_name + "', not " +
                                 std::to_string(w.instance));
      return std::nullopt;
    }
    sel.begin_ns_ = range->first;
    sel.end_ns_ = std::max(range->second, range->first + 1);
  }
  return sel;
}

}  // namespace trainprof::collector
