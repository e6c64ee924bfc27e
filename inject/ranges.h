// Range and mark records shared by the NVTX handlers and the C API (hot path, inline). With a
// capture range configured they are gated (capture.h); otherwise that costs one relaxed load.
// Levels follow the NVTX docs: push returns the 0-based level of the range being started, pop the
// level of the range being ended, or -1 when nothing was pushed (the pop is still recorded).
// Domains 1..kMaxDomains-1 have their levels counted per thread; domains past that (up to
// format::kMaxDomainIds) are recorded with their own id just the same (the reader matches their
// nesting), but push and pop return 0 there, and under a capture range they are recorded while
// capturing.
#pragma once

#include <cstdint>

#include "capture.h"
#include "recorder.h"
#include "stacks/stacks.h"

namespace trainprof::inject {

/// `may_stack` false: never a stack, even with --backtrace=nvtx (operators, itt_collector.cc).
inline int PushRange(ThreadState* t, uint32_t domain, uint32_t name, uint32_t category, bool may_stack = true) {
  if (__builtin_expect(domain >= kMaxDomains, 0)) {
    if (CapturingNowLazy()) RecordTimed(t, format::rec::RangePush{.domain = domain, .name = name, .category = category});
    return 0;
  }
  if (CaptureConfigured()) return CapturePushRange(t, domain, name, category);
  int level = t->depth[domain]++;
  const format::rec::RangePush r{.domain = domain, .name = name, .category = category};
  if (__builtin_expect(may_stack && NvtxStacksOn(), 0)) {
    RecordTimedWithStack(t, r);
  } else {
    RecordTimed(t, r);
  }
  return level;
}

inline int PopRange(ThreadState* t, uint32_t domain) {
  if (__builtin_expect(domain >= kMaxDomains, 0)) {
    if (CapturingNowLazy()) RecordTimed(t, format::rec::RangePop{.domain = domain});
    return 0;
  }
  if (CaptureConfigured()) return CapturePopRange(t, domain);
  RecordTimed(t, format::rec::RangePop{.domain = domain});
  if (t->depth[domain] == 0) return -1;
  return --t->depth[domain];
}

inline void MarkEvent(ThreadState* t, uint32_t domain, uint32_t name, uint32_t category) {
  if (!CapturingNowLazy()) return;
  const format::rec::Mark r{.domain = domain, .name = name, .category = category};
  if (__builtin_expect(NvtxStacksOn(), 0)) {
    RecordTimedWithStack(t, r);
  } else {
    RecordTimed(t, r);
  }
}

/// Names a category of a domain (nvtxNameCategory / nvtxDomainNameCategory).
inline void NameCategory(ThreadState* t, uint32_t domain, uint32_t category, uint32_t name) {
  RecordDefinition(t, format::rec::CategoryName{.domain = domain, .category = category, .name = name});
}

}  // namespace trainprof::inject
