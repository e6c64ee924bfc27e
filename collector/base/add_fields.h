// Adding a struct of counters to another field by field, the fields named once.
#pragma once

namespace trainprof::collector {

/// Adds each member `fields` names of `from` to the same member of `*to` (counts, ns, bytes: a
/// struct that merges by sums): AddFields(this, o, &FetchStats::fetches, &FetchStats::fetch_ns).
template <typename T, typename... Field>
void AddFields(T* to, const T& from, Field T::*... fields) {
  ((to->*fields += from.*fields), ...);
}

}  // namespace trainprof::collector
