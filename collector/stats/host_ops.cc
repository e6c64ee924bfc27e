#include "collector/stats/host_ops.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace trainprof::collector {
namespace {

constexpr int32_t kNone = -1;

// The call tree of one image's ops, as torch's EventList._build_tree makes it.
struct Tree {
  std::vector<int32_t> parent;
  std::vector<std::vector<uint32_t>> children;
  std::vector<bool> dropped;
};

// Indices of `ops` by thread, then (begin, -end); equal keys keep the input order (torch sorts the
// same way, stably, over its event list).
std::vector<uint32_t> TreeOrder(const std::vector<HostOp>& ops) {
  std::vector<uint32_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const HostOp& x = ops[a];
    const HostOp& y = ops[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
    return x.end_ns > y.end_ns;
  });
  return order;
}

// _populate_cpu_children: a stack of open parents per thread; an event whose begin is at or past
// the top's end, or whose end is past it, closes the top.
void Nest(const std::vector<HostOp>& ops, const std::vector<uint32_t>& order, Tree* t) {
  std::vector<uint32_t> open;
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    const HostOp& e = ops[i];
    if (k > 0 && ops[order[k - 1]].thread != e.thread) open.clear();
    while (!open.empty()) {
      const HostOp& p = ops[open.back()];
      if (e.begin_ns >= p.end_ns || e.end_ns > p.end_ns) {
        open.pop_back();
        continue;
      }
      t->parent[i] = static_cast<int32_t>(open.back());
      t->children[open.back()].push_back(i);
      break;
    }
    open.push_back(i);
  }
}

// _remove_dup_nodes: an event that is the only child of a parent of its name is dropped, its
// children going to the parent; passes in event order until one drops nothing.
void DropDuplicates(const std::vector<HostOp>& ops, const std::vector<uint32_t>& order, Tree* t) {
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i : order) {
      const int32_t p = t->parent[i];
      if (t->dropped[i] || p == kNone || ops[p].name != ops[i].name || t->children[p].size() != 1) continue;
      t->children[p] = std::move(t->children[i]);
      t->children[i].clear();
      for (uint32_t c : t->children[p]) t->parent[c] = p;
      t->dropped[i] = true;
      changed = true;
    }
  }
}

uint64_t Duration(const HostOp& e) { return e.end_ns > e.begin_ns ? e.end_ns - e.begin_ns : 0; }

std::vector<HostOpStat> ByName(std::unordered_map<StringId, HostOpStat>&& m) {
  std::vector<HostOpStat> v;
  v.reserve(m.size());
  for (auto& [name, s] : m) v.push_back(s);
  std::sort(v.begin(), v.end(), [](const HostOpStat& a, const HostOpStat& b) { return a.name < b.name; });
  return v;
}

// One table's totals per name while they are summed.
using Sums = std::unordered_map<StringId, HostOpStat>;

void AddTo(Sums* m, const HostOpStat& s) {
  HostOpStat& t = (*m)[s.name];
  t.name = s.name;
  t.calls += s.calls;
  t.self_ns += s.self_ns;
  t.total_ns += s.total_ns;
}

// Rows of a table: by self time descending, then name; percents of `wall_ns`.
std::vector<HostOpRow> Rows(const Sums& sums, const std::unordered_map<StringId, uint64_t>& processes,
                            uint64_t wall_ns, const StringPool& strings) {
  std::vector<HostOpRow> rows;
  rows.reserve(sums.size());
  auto pct = [wall_ns](uint64_t ns) { return wall_ns == 0 ? 0.0 : 100.0 * static_cast<double>(ns) / wall_ns; };
  for (const auto& [name, s] : sums) {
    auto it = processes.find(name);
    rows.push_back({std::string(strings.Get(name)), s.calls, s.self_ns, s.total_ns, pct(s.self_ns), pct(s.total_ns),
                    it == processes.end() ? 0 : it->second});
  }
  std::sort(rows.begin(), rows.end(), [](const HostOpRow& a, const HostOpRow& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    return a.name < b.name;
  });
  return rows;
}

// Keeps the first `top` rows (0: all); returns how many went.
size_t KeepTop(std::vector<HostOpRow>* rows, size_t top) {
  const size_t before = rows->size();
  if (top > 0) rows->resize(std::min(before, top));
  return before - rows->size();
}

}  // namespace

std::vector<HostOpCall> HostOpCallsOf(const std::vector<HostOp>& ops) {
  const size_t n = ops.size();
  Tree t{std::vector<int32_t>(n, kNone), std::vector<std::vector<uint32_t>>(n), std::vector<bool>(n, false)};
  const std::vector<uint32_t> order = TreeOrder(ops);
  Nest(ops, order, &t);
  DropDuplicates(ops, order, &t);
  std::vector<HostOpCall> calls;
  calls.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (t.dropped[i]) continue;
    const uint64_t total = Duration(ops[i]);
    uint64_t children = 0;
    for (uint32_t c : t.children[i]) children += Duration(ops[c]);
    calls.push_back({i, total > children ? total - children : 0, total});
  }
  return calls;
}

HostOpTotals HostOpTotalsOf(const std::vector<HostOp>& ops) {
  Sums by_kind[2];
  for (const HostOpCall& c : HostOpCallsOf(ops)) {
    const bool op = ops[c.op].kind == HostOpKind::kOperator;
    AddTo(&by_kind[op ? 0 : 1], {ops[c.op].name, 1, c.self_ns, c.total_ns});
  }
  return {ByName(std::move(by_kind[0])), ByName(std::move(by_kind[1]))};
}

HostOpTotals ProcessHostOpTotals(const Process& p) {
  Sums own[2];
  for (const TraceImage& img : p.images) {
    if (img.host_ops.empty()) continue;
    HostOpTotals t = HostOpTotalsOf(img.host_ops);
    for (const HostOpStat& s : t.operators) AddTo(&own[0], s);
    for (const HostOpStat& s : t.python_functions) AddTo(&own[1], s);
  }
  return {ByName(std::move(own[0])), ByName(std::move(own[1]))};
}

HostOpTables BuildHostOpTables(const std::vector<const HostOpTotals*>& totals, const std::vector<uint64_t>& walls,
                               const StringPool& strings, size_t top) {
  Sums sums[2];
  std::unordered_map<StringId, uint64_t> having[2];  // name -> processes with it
  uint64_t wall[2] = {0, 0};
  size_t with[2] = {0, 0};
  for (size_t i = 0; i < totals.size(); ++i) {
    Sums own[2];
    for (const HostOpStat& s : totals[i]->operators) AddTo(&own[0], s);
    for (const HostOpStat& s : totals[i]->python_functions) AddTo(&own[1], s);
    for (int k = 0; k < 2; ++k) {
      if (own[k].empty()) continue;
      wall[k] += i < walls.size() ? walls[i] : 0;
      ++with[k];
      for (const auto& [name, s] : own[k]) {
        AddTo(&sums[k], s);
        ++having[k][name];
      }
    }
  }
  HostOpTables r;
  r.operators = Rows(sums[0], having[0], wall[0], strings);
  r.operators_omitted = KeepTop(&r.operators, top);
  r.python_functions = Rows(sums[1], having[1], wall[1], strings);
  r.python_functions_omitted = KeepTop(&r.python_functions, top);
  r.operators_wall_ns = wall[0];
  r.operators_processes = with[0];
  r.python_functions_wall_ns = wall[1];
  r.python_functions_processes = with[1];
  return r;
}

}  // namespace trainprof::collector
