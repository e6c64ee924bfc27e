#include "collector/stats/gpu_overlap_sweep.h"

#include <algorithm>
#include <utility>

#include "collector/base/add_fields.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {
namespace {

std::optional<double> Share(uint64_t part, uint64_t whole) {
  if (whole == 0) return std::nullopt;
  return Percent(static_cast<double>(part), static_cast<double>(whole));
}

}  // namespace

void SetShares(TemporalBreakdown* t) {
  t->idle_percent = t->compute_percent = t->non_compute_percent = std::nullopt;
  if (t->active_span_ns == 0) return;
  const double span = static_cast<double>(t->active_span_ns);
  t->idle_percent = Percent(static_cast<double>(t->idle_ns), span);
  t->compute_percent = Percent(static_cast<double>(t->compute_ns), span);
  t->non_compute_percent = Percent(static_cast<double>(t->non_compute_ns), span);
}

void SetShares(KernelCategoryBreakdown* c) {
  c->communication_hidden_percent = Share(c->communication_hidden_ns, c->communication_total_ns);
}

void SetShares(StepCommunication* s) { s->hidden_percent = Share(s->hidden_ns, s->communication_ns); }

GpuOverlapSweep::GpuOverlapSweep(std::vector<StepWindow> steps) : steps_(std::move(steps)) {
  for (const StepWindow& s : steps_) per_step_.push_back({.step = s.step});
}

void GpuOverlapSweep::Add(const CategorizedActivity& w) {
  if (w.empty()) return;
  active_begin_ = std::min(active_begin_, w.all.front().begin);
  active_end_ = std::max(active_end_, w.all.back().end);
  busy_ns_ += Length(w.all);
  compute_ns_ += Length(w.of(KernelCategory::kComputation));
  const KernelCategoryBreakdown b = BreakDownCategories(w);
  using K = KernelCategoryBreakdown;  // its ns sums (the percent is set from them at the end)
  AddFields(&categories_, b, &K::computation_ns, &K::communication_ns, &K::memory_ns,
            &K::computation_overlapping_communication_ns, &K::communication_overlapping_memory_ns,
            &K::computation_overlapping_memory_ns, &K::computation_overlapping_communication_overlapping_memory_ns,
            &K::communication_total_ns, &K::communication_hidden_ns);
  if (w.communication.empty()) return;
  const std::vector<StepCommunication> steps = CommunicationPerStep(w, steps_);
  for (size_t i = 0; i < steps.size(); ++i) {
    per_step_[i].communication_ns += steps[i].communication_ns;
    per_step_[i].hidden_ns += steps[i].hidden_ns;
  }
}

TemporalBreakdown GpuOverlapSweep::Temporal() const {
  TemporalBreakdown t;
  if (empty()) return t;
  t.active_span_ns = active_end_ - active_begin_;
  t.idle_ns = t.active_span_ns - busy_ns_;
  t.compute_ns = compute_ns_;
  t.non_compute_ns = busy_ns_ - compute_ns_;
  SetShares(&t);
  return t;
}

KernelCategoryBreakdown GpuOverlapSweep::Categories() const {
  KernelCategoryBreakdown c = categories_;
  SetShares(&c);
  return c;
}

std::vector<StepCommunication> GpuOverlapSweep::Steps() const {
  if (categories_.communication_total_ns == 0) return {};
  std::vector<StepCommunication> out = per_step_;
  for (StepCommunication& s : out) SetShares(&s);
  return out;
}

std::optional<GpuOverlap> GpuOverlapSweep::Result() const {
  if (empty()) return std::nullopt;
  return GpuOverlap{Temporal(), Categories(), Steps()};
}

}  // namespace trainprof::collector
