#include "collector/analysis/input_pipeline.h"

#include <algorithm>

#include "collector/base/add_fields.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {
namespace {

// Traced descendants of `root` that look like DataLoader workers.
std::vector<int> FindWorkers(const RunView& run, const InputContext& ctx) {
  std::vector<int> out;
  std::vector<int> todo = run.facts[ctx.process]->children;
  while (!todo.empty()) {
    int c = todo.back();
    todo.pop_back();
    if ((*ctx.training)[c]) continue;  // a training process of its own, with its own workers
    const ProcessFacts& p = *run.facts[c];
    if (p.role == kWorkerRole || run.phases[c]->Count(Phase::kFetch) > 0) out.push_back(c);
    todo.insert(todo.end(), p.children.begin(), p.children.end());  // forkserver: workers are grandchildren
  }
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    return std::make_pair(run.facts[a]->start_ns, a) < std::make_pair(run.facts[b]->start_ns, b);
  });
  return out;
}

size_t MostAlive(const std::vector<WorkerStats>& workers) {
  std::vector<std::pair<uint64_t, int>> edges;  // (time, +1 start / -1 end); ends first at a tie
  for (const WorkerStats& w : workers) {
    edges.push_back({w.start_ns, +1});
    edges.push_back({std::max(w.end_ns, w.start_ns), -1});
  }
  std::sort(edges.begin(), edges.end());
  int alive = 0, most = 0;
  for (const auto& [t, d] : edges) {
    alive += d;
    most = std::max(most, alive);
  }
  return workers.empty() ? 0 : std::max<size_t>(1, static_cast<size_t>(most));  // a zero-length life still ran
}

// Whether a loader's waits are data waits of training steps.
bool LoaderFeeds(const InputContext& ctx, const LoaderIdentity& l) {
  return Length(Intersect(Union(std::vector<Interval>(l.waits)), ctx.waits_all)) > 0;
}

std::vector<LoaderStats> MeasureLoaders(const RunView& run, const InputContext& ctx, const LoaderTies& ties) {
  std::vector<LoaderStats> out;
  for (const LoaderIdentity& l : ties.loaders) {
    LoaderStats s;
    s.description = l.description;
    const IntervalSet waits = Union(std::vector<Interval>(l.waits));
    s.waits = l.waits.size();
    for (const Interval& w : l.waits) {
      s.wait_ns += w.end - w.begin;
      if (LengthWithin(ctx.waits_all, w.begin, w.end) > 0) ++s.training_waits;
    }
    s.feeds_training = s.training_waits > 0;
    std::vector<WorkerStats> lives;
    for (int c : l.workers) {
      s.fetch.Add(MeasureFetches(*run.phases[c]));
      const ProcessFacts& p = *run.facts[c];
      WorkerStats w;
      w.start_ns = p.start_ns;
      w.end_ns = std::max(p.end_ns, p.start_ns);
      lives.push_back(w);
    }
    s.worker_processes = l.workers.size();
    s.concurrent_workers = MostAlive(lives);
    if (l.workers.empty()) s.fetch = MeasureFetches(*run.phases[ctx.process], &waits);  // num_workers=0
    out.push_back(std::move(s));
  }
  // Those feeding training steps first, most training waits first; then by first use.
  std::stable_sort(out.begin(), out.end(), [](const LoaderStats& a, const LoaderStats& b) {
    return a.training_waits > b.training_waits;
  });
  return out;
}

}  // namespace

bool InputPipeline::workers_persistent() const {
  bool any = false;
  for (const LoaderStats& l : loaders) {
    if (!l.feeds_training) continue;
    if (l.description.persistent_workers != true) return false;
    any = true;
  }
  return any;
}

const char* LoadingName(Loading l) {
  switch (l) {
    case Loading::kWorkers: return "workers";
    case Loading::kMainProcess: return "main_process";
    default: return "none";
  }
}

void FetchStats::Add(const FetchStats& o) {
  using F = FetchStats;
  AddFields(this, o, &F::fetches, &F::fetch_ns, &F::getitem_ns, &F::collate_ns, &F::getitem_calls, &F::getitem_total_ns);
}

FetchStats MeasureFetches(const ProcessPhases& phases, const IntervalSet* within) {
  FetchStats s;
  for (const PhaseThread& t : phases.threads) {
    IntervalSet fetch = t.by_phase[static_cast<size_t>(Phase::kFetch)];
    if (fetch.empty()) continue;
    uint64_t fetches = t.count[static_cast<size_t>(Phase::kFetch)];
    uint64_t fetch_ns = t.total_ns[static_cast<size_t>(Phase::kFetch)];
    uint64_t getitem_calls = t.count[static_cast<size_t>(Phase::kGetItem)];
    uint64_t getitem_total_ns = t.total_ns[static_cast<size_t>(Phase::kGetItem)];
    if (within != nullptr) {  // only the fetches that begin inside `within`, and what is in them
      std::vector<Interval> kept;
      fetches = fetch_ns = 0;
      for (const PhaseRange& r : t.ranges) {
        if (r.phase != Phase::kFetch || LengthWithin(*within, r.begin_ns, r.begin_ns + 1) == 0) continue;
        kept.push_back({r.begin_ns, r.end_ns});
        ++fetches;
        fetch_ns += r.end_ns - r.begin_ns;
      }
      fetch = Union(std::move(kept));
      getitem_calls = getitem_total_ns = 0;
      for (const PhaseRange& r : t.ranges) {
        if (r.phase != Phase::kGetItem || LengthWithin(fetch, r.begin_ns, r.begin_ns + 1) == 0) continue;
        ++getitem_calls;
        getitem_total_ns += r.end_ns - r.begin_ns;
      }
    }
    const IntervalSet getitem = Intersect(t.by_phase[static_cast<size_t>(Phase::kGetItem)], fetch);
    const IntervalSet collate = Subtract(Intersect(t.by_phase[static_cast<size_t>(Phase::kCollate)], fetch), getitem);
    s.fetches += fetches;
    s.fetch_ns += fetch_ns;
    s.getitem_ns += Length(getitem);
    s.collate_ns += Length(collate);
    s.getitem_calls += getitem_calls;
    s.getitem_total_ns += getitem_total_ns;
  }
  return s;
}

InputPipeline AnalyzeInput(const RunView& run, const InputContext& ctx) {
  InputPipeline in;
  IntervalSet startups;
  const std::vector<int> found = FindWorkers(run, ctx);
  const LoaderTies ties = TieLoaders(run, ctx.process, found);
  in.loaders = MeasureLoaders(run, ctx, ties);
  for (size_t i = 0; i < found.size(); ++i) {
    const int c = found[i];
    const ProcessFacts& p = *run.facts[c];
    const ProcessPhases& ph = *run.phases[c];
    const int loader = ties.worker_loader[i];
    const bool feeding = loader < 0 || LoaderFeeds(ctx, ties.loaders[loader]);
    if (!feeding || LengthWithin(ctx.steps, p.start_ns, std::max(p.end_ns, p.start_ns)) == 0) {
      ++in.other_workers;
      continue;
    }
    WorkerStats w;
    w.process = c;
    w.pid = p.pid;
    w.start_ns = p.start_ns;
    w.end_ns = std::max(p.end_ns, p.start_ns);
    w.fetch = MeasureFetches(ph);
    const IntervalSet fetches = ph.Union(Phase::kFetch);
    const uint64_t ready = fetches.empty() ? w.end_ns : std::max(fetches.front().begin, w.start_ns);
    w.startup_ns = ready - w.start_ns;
    w.init_fn_calls = ph.Count(Phase::kWorkerInit);
    w.init_fn_ns = ph.TotalNs(Phase::kWorkerInit);
    w.spawned = p.spawned;
    in.spawned_workers += w.spawned;
    if (ready > w.start_ns) startups.push_back({w.start_ns, ready});
    // Judged only once it fetches: start-up is counted on its own.
    const IntervalSet window = Clip(ctx.waits_counted, ready, w.end_ns);
    w.window_ns = Length(window);
    w.busy_ns = Length(Intersect(fetches, window));
    if (w.window_ns > 0) w.busy_percent = Percent(w.busy_ns, w.window_ns);
    if (w.end_ns > ready && !fetches.empty()) w.lifetime_busy_percent = Percent(Length(fetches), w.end_ns - ready);
    in.fetch.Add(w.fetch);
    in.window_ns += w.window_ns;
    in.busy_ns += w.busy_ns;
    in.startup_ns += w.startup_ns;
    in.init_fn_calls += w.init_fn_calls;
    in.init_fn_ns += w.init_fn_ns;
    in.workers.push_back(std::move(w));
  }
  in.worker_processes = in.workers.size();
  in.concurrent_workers = MostAlive(in.workers);
  if (in.window_ns > 0) in.busy_percent = Percent(in.busy_ns, in.window_ns);
  const IntervalSet starting = Union(std::move(startups));
  in.startup_wait_ns = Length(Intersect(ctx.waits_all, starting));
  in.startup_wait_counted_ns = Length(Intersect(ctx.waits_counted, starting));

  if (in.fetch.fetches > 0) {
    in.loading = Loading::kWorkers;
  } else {
    FetchStats own = MeasureFetches(*run.phases[ctx.process]);
    if (own.fetches > 0) {
      in.loading = Loading::kMainProcess;
      in.fetch = own;
      FetchStats feeding;  // the fetches inside the waits of the loaders feeding the steps
      for (const LoaderStats& l : in.loaders)
        if (l.feeds_training) feeding.Add(l.fetch);
      if (feeding.fetches > 0) in.fetch = feeding;
    }
  }
  return in;
}

}  // namespace trainprof::collector
