#include "collector/stats/functions.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "collector/base/source_path.h"

namespace trainprof::collector {
namespace {

using FunctionKey = std::tuple<std::string, std::optional<std::string>, std::optional<std::string>, bool>;

/// One function's counts in one scope.
struct Counts {
  uint64_t self = 0;
  uint64_t total = 0;
  std::map<uint32_t, uint64_t> lines;  // line (0: unknown) → samples
};

/// One scope of the table: a process (or all: -1) and a phase ("" : not split by phase).
struct Scope {
  uint64_t samples = 0;
  std::map<size_t, Counts> functions;  // by function index
};

/// A frame as counted: the function's index and the frame's line (0: unknown).
struct CountedFrame {
  size_t function = 0;
  uint32_t line = 0;
};

class Tables {
 public:
  explicit Tables(Symbolizer* symbols) : symbols_(symbols) {}

  /// The counted frames of stack `id` of `img`, innermost first, each function once (its
  /// innermost frame): symbolized once per image and stack.
  const std::vector<CountedFrame>& Frames(const ImageStacks& stacks, uint64_t id) {
    auto [it, fresh] = cache_.try_emplace(id);
    if (!fresh) return it->second;
    for (SymbolFrame& f : SampleFrames(stacks, id, symbols_)) {
      const size_t fn = Intern(f);
      if (std::any_of(it->second.begin(), it->second.end(), [&](const CountedFrame& c) { return c.function == fn; }))
        continue;
      it->second.push_back({fn, f.line.value_or(0)});
    }
    return it->second;
  }
  void NextImage() { cache_.clear(); }

  void Add(std::pair<int, std::string_view> scope, const std::vector<CountedFrame>& frames, uint64_t n) {
    Scope& s = scopes_[scope];
    s.samples += n;
    for (size_t i = 0; i < frames.size(); ++i) {
      Counts& c = s.functions[frames[i].function];
      if (i == 0) c.self += n;
      c.total += n;
      c.lines[frames[i].line] += n;
    }
  }

  /// The rows of the scopes `order` names, in that order, each scope's rows sorted.
  std::vector<FunctionRow> Rows(const std::vector<std::pair<int, std::string_view>>& order) const {
    std::vector<FunctionRow> out;
    for (const auto& key : order) {
      auto it = scopes_.find(key);
      if (it == scopes_.end()) continue;
      const Scope& s = it->second;
      const size_t first = out.size();
      for (const auto& [fn, c] : s.functions) {
        const SymbolFrame& f = functions_[fn];
        FunctionRow r{.function = f.function, .file = f.file, .module = f.module, .python = f.python,
                      .process = key.first, .phase = std::string(key.second), .self_samples = c.self,
                      .total_samples = c.total};
        r.self_share = s.samples == 0 ? 0 : 100.0 * static_cast<double>(c.self) / static_cast<double>(s.samples);
        r.total_share = s.samples == 0 ? 0 : 100.0 * static_cast<double>(c.total) / static_cast<double>(s.samples);
        uint64_t best = 0;
        for (const auto& [line, n] : c.lines) {  // ascending: the lowest line wins a tie
          if (line != 0 && n > best) {
            best = n;
            r.line = line;
          }
        }
        out.push_back(std::move(r));
      }
      std::sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(), [](const FunctionRow& a, const FunctionRow& b) {
        return std::tie(b.self_samples, b.total_samples, a.function, a.file, a.module) <
               std::tie(a.self_samples, a.total_samples, b.function, b.file, b.module);
      });
    }
    return out;
  }

  /// The phases seen, by their samples (descending), then name; "other" like any.
  std::vector<std::string_view> Phases() const {
    std::vector<std::pair<uint64_t, std::string_view>> v;
    for (const auto& [key, s] : scopes_) {
      if (key.first == -1 && !key.second.empty()) v.push_back({s.samples, key.second});
    }
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return std::tie(b.first, a.second) < std::tie(a.first, b.second);
    });
    std::vector<std::string_view> out;
    for (const auto& [n, name] : v) out.push_back(name);
    return out;
  }

 private:
  size_t Intern(const SymbolFrame& f) {
    auto [it, fresh] = ids_.try_emplace(FunctionKey{f.function, f.file, f.module, f.python}, functions_.size());
    if (fresh) functions_.push_back(f);
    return it->second;
  }

  Symbolizer* symbols_;
  std::map<FunctionKey, size_t> ids_;
  std::vector<SymbolFrame> functions_;
  std::map<uint64_t, std::vector<CountedFrame>> cache_;  // this image's stacks
  std::map<std::pair<int, std::string_view>, Scope> scopes_;
};

}  // namespace

std::string FunctionRow::Location() const {
  if (!file) return module.value_or("");
  return SourceLocation(*file, line.has_value(), line.value_or(0));
}

FunctionTables BuildFunctionTables(const Trace& trace, Symbolizer* symbols, const SamplePhaseOf& phase_of) {
  FunctionTables out;
  Tables tables(symbols);
  std::vector<std::pair<int, std::string_view>> process_order;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    const Process& p = trace.processes[pi];
    bool any = false;
    for (size_t ii = 0; ii < p.images.size(); ++ii) {
      const ImageStacks& st = p.images[ii].stacks;
      if (st.samples.empty()) continue;
      any = true;
      // Counted per (stack, phase) first: a stack is symbolized once, a sample costs a map step.
      std::map<std::pair<uint64_t, std::string_view>, uint64_t> counts;
      for (const Sample& s : st.samples) {
        ++out.samples;
        if (s.python_missed > 0) ++out.python_missed_samples;
        std::string_view phase;
        if (phase_of) {
          phase = phase_of(pi, ii, s.thread, s.time_ns);
          if (phase.empty()) phase = "other";
        }
        ++counts[{s.stack, phase}];
      }
      tables.NextImage();
      for (const auto& [key, n] : counts) {
        const std::vector<CountedFrame>& frames = tables.Frames(st, key.first);
        tables.Add({-1, ""}, frames, n);
        tables.Add({static_cast<int>(pi), ""}, frames, n);
        if (phase_of) tables.Add({-1, key.second}, frames, n);
      }
    }
    if (any) process_order.push_back({static_cast<int>(pi), ""});
  }
  if (out.samples == 0) return out;
  out.merged = tables.Rows({{-1, ""}});
  for (FunctionRow& r : out.merged) r.process = -1;
  out.by_process = tables.Rows(process_order);
  if (phase_of) {
    std::vector<std::pair<int, std::string_view>> order;
    for (std::string_view ph : tables.Phases()) order.push_back({-1, ph});
    out.by_phase = tables.Rows(order);
  }
  return out;
}

}  // namespace trainprof::collector
