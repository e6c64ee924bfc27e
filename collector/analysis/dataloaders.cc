#include "collector/analysis/dataloaders.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace trainprof::collector {
namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> ParseFlag(std::string_view s) {
  if (s == "1") return true;
  if (s == "0") return false;
  return std::nullopt;
}

// Whether a worker's own description agrees with its loader's.
bool Agrees(const LoaderDescription& worker, const LoaderDescription& loader) {
  if (!worker.dataset.empty() && worker.dataset != loader.dataset) return false;
  return !worker.num_workers || !loader.num_workers || *worker.num_workers == *loader.num_workers;
}

}  // namespace

std::optional<LoaderDescription> ParseLoaderName(std::string_view name) {
  constexpr std::string_view kPrefix = "DataLoader#";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  LoaderDescription d;
  name.remove_prefix(kPrefix.size());
  bool first = true;
  while (!name.empty()) {
    const size_t space = name.find(' ');
    const std::string_view word = name.substr(0, space);
    name = space == std::string_view::npos ? std::string_view() : name.substr(space + 1);
    if (first) {
      d.id = ParseInt(word);  // "?" or garbage: none
      first = false;
      continue;
    }
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "dataset") d.dataset = std::string(value);
    else if (key == "batch_size") d.batch_size = ParseInt(value);
    else if (key == "num_workers") d.num_workers = ParseInt(value);
    else if (key == "persistent_workers") d.persistent_workers = ParseFlag(value);
    else if (key == "pin_memory") d.pin_memory = ParseFlag(value);
    else if (key == "worker_id") d.worker_id = ParseInt(value);
  }
  return d;
}

LoaderTies TieLoaders(const RunView& run, int process, const std::vector<int>& workers) {
  const StringPool& strings = *run.strings;
  LoaderTies out;
  out.worker_loader.assign(workers.size(), -1);
  std::map<int64_t, size_t> by_id;  // loader id → index into out.loaders
  std::vector<std::pair<uint64_t, size_t>> iters;  // (time of iter(loader), loader), main process
  auto loader_of = [&](const LoaderDescription& d, uint64_t t) -> size_t {
    auto [it, fresh] = by_id.emplace(*d.id, out.loaders.size());
    if (fresh) {
      out.loaders.push_back({d, {}, t, {}});
    }
    return it->second;
  };
  for (const PhaseThread& th : run.phases[process]->threads) {
    auto mark = th.loader_marks.begin();
    for (const LoaderMark& m : th.loader_marks) {
      const auto d = ParseLoaderName(strings.Get(m.name));
      if (!d || !d->id) continue;
      const size_t l = loader_of(*d, m.time_ns);
      if (m.phase == Phase::kDataLoader) iters.push_back({m.time_ns, l});
    }
    // Each wait: the kDataLoaderBatch mark inside it (ranges and marks both by time).
    for (const PhaseRange& r : th.ranges) {
      if (r.phase != Phase::kDataWait) continue;
      while (mark != th.loader_marks.end() && mark->time_ns < r.begin_ns) ++mark;
      for (auto m = mark; m != th.loader_marks.end() && m->time_ns <= r.end_ns; ++m) {
        if (m->phase != Phase::kDataLoaderBatch) continue;
        const auto d = ParseLoaderName(strings.Get(m->name));
        if (d && d->id) out.loaders[by_id.at(*d->id)].waits.push_back({r.begin_ns, r.end_ns});
        break;
      }
    }
  }
  std::sort(iters.begin(), iters.end());
  for (size_t w = 0; w < workers.size(); ++w) {
    std::optional<LoaderDescription> own;
    for (const PhaseThread& th : run.phases[workers[w]]->threads) {
      for (const LoaderMark& m : th.loader_marks) {
        if (!own && m.phase == Phase::kDataLoader) own = ParseLoaderName(strings.Get(m.name));
      }
    }
    if (!own) continue;  // no mark: an older shim, or the worker died before its loop
    int tied = -1;
    if (own->id) {
      auto it = by_id.find(*own->id);
      if (it != by_id.end() && Agrees(*own, out.loaders[it->second].description)) tied = static_cast<int>(it->second);
    }
    if (tied < 0) {  // spawned: the last iter() of a matching loader before the worker started
      const uint64_t start = run.facts[workers[w]]->start_ns;
      for (const auto& [t, l] : iters) {
        if (t > start) break;
        if (Agrees(*own, out.loaders[l].description)) tied = static_cast<int>(l);
      }
    }
    out.worker_loader[w] = tied;
    if (tied >= 0) out.loaders[tied].workers.push_back(workers[w]);
  }
  return out;
}

}  // namespace trainprof::collector
