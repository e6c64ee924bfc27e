#include "collector/stats/functions.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "collector/base/source_path.h"

namespace trainprof::collector {
namespace {

using FunctionKey = std::tuple<std::string, std::optional<std::string>, std::optional<std::string>, bool>;

/// One function's counts in one scope of the merge.
struct Counts {
  uint64_t self = 0;
  uint64_t total = 0;
  std::map<uint32_t, uint64_t> lines;  // line (0: unknown) → samples
};

/// One scope of the merged tables: a process (or all: -1) and a phase ("" : not split by phase).
struct Scope {
  uint64_t samples = 0;
  std::map<size_t, Counts> functions;  // by function index
};

/// A frame as counted: the function's index and the frame's line (0: unknown).
struct CountedFrame {
  uint32_t function = 0;
  uint32_t line = 0;
};

// Functions numbered by their key, each once.
class FunctionIndex {
 public:
  uint32_t Intern(const SymbolFrame& f) {
    auto [it, fresh] = ids_.try_emplace(FunctionKey{f.function, f.file, f.module, f.python}, functions_.size());
    if (fresh) {
      functions_.push_back(f);
      functions_.back().line.reset();
    }
    return static_cast<uint32_t>(it->second);
  }
  const std::vector<SymbolFrame>& functions() const { return functions_; }
  std::vector<SymbolFrame> Take() && { return std::move(functions_); }

 private:
  std::map<FunctionKey, size_t> ids_;
  std::vector<SymbolFrame> functions_;
};

// One process's counts, made scope by scope.
class ProcessCounter {
 public:
  explicit ProcessCounter(Symbolizer* symbols) : symbols_(symbols) {}

  /// The counted frames of stack `id` of `img`, innermost first, each function once (its
  /// innermost frame): symbolized once per image and stack.
  const std::vector<CountedFrame>& Frames(const ImageStacks& stacks, uint64_t id) {
    auto [it, fresh] = cache_.try_emplace(id);
    if (!fresh) return it->second;
    for (SymbolFrame& f : SampleFrames(stacks, id, symbols_)) {
      const uint32_t fn = index_.Intern(f);
      if (std::any_of(it->second.begin(), it->second.end(), [&](const CountedFrame& c) { return c.function == fn; }))
        continue;
      it->second.push_back({fn, f.line.value_or(0)});
    }
    return it->second;
  }
  void NextImage() { cache_.clear(); }

  void Add(const std::string& phase, bool by_phase, const std::vector<CountedFrame>& frames, uint64_t n) {
    AddTo(&process_, frames, n);
    if (by_phase) AddTo(&phases_[phase], frames, n);
  }

  void Into(FunctionCounts* out) && {
    out->process = ToScope(process_);
    for (const auto& [phase, s] : phases_) out->phases[phase] = ToScope(s);
    out->functions = std::move(index_).Take();
  }

 private:
  static void AddTo(Scope* s, const std::vector<CountedFrame>& frames, uint64_t n) {
    s->samples += n;
    for (size_t i = 0; i < frames.size(); ++i) {
      Counts& c = s->functions[frames[i].function];
      if (i == 0) c.self += n;
      c.total += n;
      c.lines[frames[i].line] += n;
    }
  }
  static FunctionScope ToScope(const Scope& s) {
    FunctionScope out;
    out.samples = s.samples;
    for (const auto& [fn, c] : s.functions) {
      out.functions.push_back({static_cast<uint32_t>(fn), c.self, c.total, c.lines});
    }
    return out;
  }

  Symbolizer* symbols_;
  FunctionIndex index_;
  std::map<uint64_t, std::vector<CountedFrame>> cache_;  // this image's stacks
  Scope process_;
  std::map<std::string, Scope> phases_;
};

// The merged tables' scopes, from the processes' counts.
class Tables {
 public:
  /// Adds `scope` of a process whose function i is `global[i]` here, under `key`.
  void Add(std::pair<int, std::string> key, const FunctionScope& scope, const std::vector<uint32_t>& global) {
    Scope& s = scopes_[key];
    s.samples += scope.samples;
    for (const FunctionCount& f : scope.functions) {
      Counts& c = s.functions[global.at(f.function)];
      c.self += f.self;
      c.total += f.total;
      for (const auto& [line, n] : f.lines) c.lines[line] += n;
    }
  }
  FunctionIndex& index() { return index_; }

  /// The rows of the scopes `order` names, in that order, each scope's rows sorted.
  std::vector<FunctionRow> Rows(const std::vector<std::pair<int, std::string>>& order) const {
    std::vector<FunctionRow> out;
    for (const auto& key : order) {
      auto it = scopes_.find(key);
      if (it == scopes_.end()) continue;
      const Scope& s = it->second;
      const size_t first = out.size();
      for (const auto& [fn, c] : s.functions) {
        const SymbolFrame& f = index_.functions()[fn];
        FunctionRow r{.function = f.function, .file = f.file, .module = f.module, .python = f.python,
                      .process = key.first, .phase = key.second, .self_samples = c.self,
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
  std::vector<std::string> Phases() const {
    std::vector<std::pair<uint64_t, std::string>> v;
    for (const auto& [key, s] : scopes_) {
      if (key.first == -1 && !key.second.empty()) v.push_back({s.samples, key.second});
    }
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return std::tie(b.first, a.second) < std::tie(a.first, b.second);
    });
    std::vector<std::string> out;
    for (auto& [n, name] : v) out.push_back(std::move(name));
    return out;
  }

 private:
  FunctionIndex index_;
  std::map<std::pair<int, std::string>, Scope> scopes_;
};

}  // namespace

std::string FunctionRow::Location() const {
  if (!file) return module.value_or("");
  return SourceLocation(*file, line.has_value(), line.value_or(0));
}

FunctionCounts CountFunctions(const Process& p, Symbolizer* symbols, const ProcessSamplePhaseOf& phase_of) {
  FunctionCounts out;
  ProcessCounter counter(symbols);
  for (size_t ii = 0; ii < p.images.size(); ++ii) {
    const ImageStacks& st = p.images[ii].stacks;
    if (st.samples.empty()) continue;
    // Counted per (stack, phase) first: a stack is symbolized once, a sample costs a map step.
    std::map<std::pair<uint64_t, std::string_view>, uint64_t> counts;
    for (const Sample& s : st.samples) {
      ++out.samples;
      if (s.python_missed > 0) ++out.python_missed_samples;
      std::string_view phase;
      if (phase_of) {
        phase = phase_of(ii, s.thread, s.time_ns);
        if (phase.empty()) phase = "other";
      }
      ++counts[{s.stack, phase}];
    }
    counter.NextImage();
    for (const auto& [key, n] : counts) {
      counter.Add(std::string(key.second), static_cast<bool>(phase_of), counter.Frames(st, key.first), n);
    }
  }
  std::move(counter).Into(&out);
  return out;
}

FunctionTables MergeFunctionCounts(const std::vector<const FunctionCounts*>& per_process) {
  FunctionTables out;
  Tables tables;
  std::vector<std::pair<int, std::string>> process_order;
  for (size_t pi = 0; pi < per_process.size(); ++pi) {
    const FunctionCounts& c = *per_process[pi];
    out.samples += c.samples;
    out.python_missed_samples += c.python_missed_samples;
    if (c.samples == 0) continue;
    std::vector<uint32_t> global;
    global.reserve(c.functions.size());
    for (const SymbolFrame& f : c.functions) global.push_back(tables.index().Intern(f));
    tables.Add({-1, ""}, c.process, global);
    tables.Add({static_cast<int>(pi), ""}, c.process, global);
    for (const auto& [phase, scope] : c.phases) tables.Add({-1, phase}, scope, global);
    process_order.push_back({static_cast<int>(pi), ""});
  }
  if (out.samples == 0) return out;
  out.merged = tables.Rows({{-1, ""}});
  for (FunctionRow& r : out.merged) r.process = -1;
  out.by_process = tables.Rows(process_order);
  std::vector<std::pair<int, std::string>> order;
  for (std::string& ph : tables.Phases()) order.push_back({-1, std::move(ph)});
  out.by_phase = tables.Rows(order);
  return out;
}

FunctionTables BuildFunctionTables(const Trace& trace, Symbolizer* symbols, const SamplePhaseOf& phase_of) {
  std::vector<FunctionCounts> counts;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    ProcessSamplePhaseOf of;
    if (phase_of) of = [&, pi](size_t image, uint32_t thread, uint64_t t) { return phase_of(pi, image, thread, t); };
    counts.push_back(CountFunctions(trace.processes[pi], symbols, of));
  }
  std::vector<const FunctionCounts*> per_process;
  for (const FunctionCounts& c : counts) per_process.push_back(&c);
  return MergeFunctionCounts(per_process);
}

}  // namespace trainprof::collector
