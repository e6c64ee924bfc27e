#include "collector/report/warnings.h"

#include <algorithm>
#include <tuple>

namespace trainprof::collector {

void LossLog::Add(Loss kind, uint64_t n, size_t subject, std::string who, std::string detail) {
  if (n == 0) return;
  totals_[kind] += n;
  if (!InfoOf(kind).warning.empty()) notes_.push_back({kind, subject, n, std::move(who), std::move(detail)});
}

std::vector<std::string> LossLog::Warnings() const {
  std::vector<const Note*> order;
  for (const Note& note : notes_) order.push_back(&note);
  auto rank = [](const Note* x) { return std::make_tuple(InfoOf(x->kind).scope, x->subject, x->kind); };
  std::stable_sort(order.begin(), order.end(), [&](const Note* a, const Note* b) { return rank(a) < rank(b); });
  std::vector<std::string> out;
  const Note* line_start = nullptr;  // the first note of the grouped line being made
  for (const Note* note : order) {
    const LossInfo& info = InfoOf(note->kind);
    std::string text = LossText(note->kind, note->n, note->detail);
    const bool joins = line_start != nullptr && !info.group.empty() && InfoOf(line_start->kind).group == info.group &&
                       line_start->subject == note->subject && line_start->who == note->who;
    if (joins) {
      out.back() += ", " + text;
      continue;
    }
    if (!info.group.empty()) text = std::string(info.group) + ": " + text;
    out.push_back(note->who.empty() ? text : note->who + ": " + text);
    line_start = info.group.empty() ? nullptr : note;
  }
  return out;
}

}  // namespace trainprof::collector
