// The stack-room check (inject/stacks/stack_room.h): the pure span rule, and HasStackRoom on a
// thread with a PTHREAD_STACK_MIN stack, with and without its bounds noted.
#include "stacks/stack_room.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <pthread.h>

namespace trainprof::inject {
namespace {

TEST(StackRoom, SpanRule) {
  const StackSpan s{0x10000, 0x14000};  // 16 KiB
  EXPECT_TRUE(SpanHasRoom(s, 0x13000, 0x3000));   // exactly 12 KiB below
  EXPECT_FALSE(SpanHasRoom(s, 0x12fff, 0x3000));  // one byte short
  EXPECT_FALSE(SpanHasRoom(s, 0x14001, 0x10));    // sp above the span: another stack
  EXPECT_FALSE(SpanHasRoom(s, 0xffff, 0));        // below it
  EXPECT_FALSE(SpanHasRoom(StackSpan{}, 0x13000, 0));  // unknown
}

struct Probe {
  bool note = false;
  bool small_need = false;  // 4 KiB: a thread at its start has that
  bool big_need = false;    // 64 KiB: more than the whole stack
  bool budget = false;      // the library's budget at the bottom of a deep recursion
  StackSpan noted;
  uintptr_t sp = 0;
  size_t granted = 0;  // the stack size the thread really got (pthread_getattr_np)
};

// Recurses until about `left` bytes of the noted or probed stack remain, then asks for the budget.
__attribute__((noinline)) bool AtDepth(int depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  if (depth > 0) return AtDepth(depth - 1) && pad[0] == static_cast<char>(depth);
  return HasStackRoom(kStackCaptureBudget);
}

void* OnSmallStack(void* arg) {
  auto* p = static_cast<Probe*>(arg);
  pthread_attr_t self;
  if (pthread_getattr_np(pthread_self(), &self) == 0) {
    pthread_attr_getstacksize(&self, &p->granted);
    pthread_attr_destroy(&self);
  }
  if (p->note) NoteThreadStack();
  p->noted = NotedThreadStack();
  p->sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  p->small_need = HasStackRoom(4096);
  p->big_need = HasStackRoom(64 * 1024);
  p->budget = AtDepth(6);  // ~6 KiB deeper: less than the 12 KiB budget left of 16 KiB
  return nullptr;
}

Probe RunOnSmallStack(bool note) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  Probe p;
  p.note = note;
  pthread_t t;
  EXPECT_EQ(pthread_create(&t, &attr, OnSmallStack, &p), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  return p;
}

// TSan's pthread_create raises a stack below its own minimum to that minimum (the CI's TSan suite
// got 921088 bytes for a PTHREAD_STACK_MIN request), so under TSan no program gets a small stack
// and there is nothing to test; the normal and ASan builds run these.
#define SKIP_UNLESS_THE_STACK_IS_SMALL(p)                                                  \
  if ((p).granted > 2 * static_cast<size_t>(PTHREAD_STACK_MIN))                            \
  GTEST_SKIP() << "asked for a " << PTHREAD_STACK_MIN << "-byte stack, got " << (p).granted \
               << " (a sanitizer runtime enlarges small stacks)"

TEST(StackRoom, NotedBoundsOfAMinimalStackAnswerWithoutRunningIntoTheGuard) {
  const Probe p = RunOnSmallStack(true);
  SKIP_UNLESS_THE_STACK_IS_SMALL(p);
  ASSERT_LT(p.noted.lo, p.noted.hi);
  EXPECT_GE(p.noted.hi - p.noted.lo, static_cast<uintptr_t>(PTHREAD_STACK_MIN) / 2);
  EXPECT_LE(p.noted.hi - p.noted.lo, static_cast<uintptr_t>(PTHREAD_STACK_MIN));
  EXPECT_TRUE(p.sp > p.noted.lo && p.sp <= p.noted.hi);
  EXPECT_TRUE(p.small_need);
  EXPECT_FALSE(p.big_need);
  EXPECT_FALSE(p.budget);
}

TEST(StackRoom, UnknownBoundsAreProbedAndAGuardPageSaysNo) {
  const Probe p = RunOnSmallStack(false);
  SKIP_UNLESS_THE_STACK_IS_SMALL(p);
  EXPECT_EQ(p.noted.lo, p.noted.hi);
  EXPECT_TRUE(p.small_need);
  EXPECT_FALSE(p.big_need);
  EXPECT_FALSE(p.budget);
}

TEST(StackRoom, TheMainThreadHasRoom) {
  NoteThreadStack();
  const StackSpan s = NotedThreadStack();
  EXPECT_LT(s.lo, s.hi);
  EXPECT_TRUE(HasStackRoom(kStackCaptureBudget));
}

// A thread whose bounds were never noted (started by a library we did not interpose, as Python's
// threads are without --sample) is probed; the budget's range touches 3 or 4 pages depending on
// where in its page the stack pointer is, and every position must find the room an 8 MiB stack
// has (only positions that touched 4 pages were refused once: a Python thread's NVTX ranges lost
// their stacks).
bool RoomAtOffset(size_t pad) {
  volatile char* below = static_cast<volatile char*>(__builtin_alloca(pad + 1));
  below[0] = 0;
  return HasStackRoom(kStackCaptureBudget);
}

void* EveryAlignment(void* out) {
  auto* refused = static_cast<int*>(out);
  const StackSpan noted = NotedThreadStack();
  if (noted.lo < noted.hi) *refused = -1;  // the probe would not be what answers
  for (size_t pad = 0; pad < 4096; pad += 16) {
    if (!RoomAtOffset(pad)) ++*refused;
  }
  return nullptr;
}

TEST(StackRoom, UnknownBoundsOfALargeStackHaveRoomAtEveryAlignment) {
  int refused = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 8 << 20);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, &attr, EveryAlignment, &refused), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(refused, 0);
}

}  // namespace
}  // namespace trainprof::inject
