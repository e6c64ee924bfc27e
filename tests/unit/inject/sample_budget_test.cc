// The sampler's share of RLIMIT_SIGPENDING (inject/stacks/sample_budget.h) under `ulimit -i 16`:
// threads that start together count each other's timers that are still being made.
#include "stacks/sample_budget.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace trainprof::inject {
namespace {

class SampleBudget : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(getrlimit(RLIMIT_SIGPENDING, &saved_), 0);
    struct rlimit low = saved_;
    low.rlim_cur = 16;
    ASSERT_EQ(setrlimit(RLIMIT_SIGPENDING, &low), 0);
    NoteSignalQueueLimit();
  }
  void TearDown() override {
    setrlimit(RLIMIT_SIGPENDING, &saved_);
    NoteSignalQueueLimit();
  }
  struct rlimit saved_ {};
};

TEST_F(SampleBudget, FarFromTheLimitNeedsNoRead) {
  uint64_t queued = 7;
  EXPECT_EQ(SignalQueueLimitNow(), 16u);
  EXPECT_TRUE(MayHoldAnotherQueuedSignal(0, 1, &queued));  // 0 + 1 <= 16/16
  EXPECT_EQ(queued, 0u);
}

TEST_F(SampleBudget, TimersBeingMadeCountAgainstHalfTheLimit) {
  uint64_t queued = 0;
  // 9 threads between the check and their timer_create: more than half of 16 whatever the user's
  // queued signals are now; the one that asks with them all pending is refused.
  EXPECT_FALSE(MayHoldAnotherQueuedSignal(0, 9, &queued));
  // Two timers already and one being made take the read, not the fast path: refused as well when
  // 6 more are being made with it.
  EXPECT_FALSE(MayHoldAnotherQueuedSignal(2, 9, &queued));
}

TEST_F(SampleBudget, UnlimitedNeverRefuses) {
  struct rlimit r;
  ASSERT_EQ(getrlimit(RLIMIT_SIGPENDING, &r), 0);
  if (r.rlim_max != RLIM_INFINITY) GTEST_SKIP() << "the hard limit is not unlimited here";
  r.rlim_cur = RLIM_INFINITY;
  ASSERT_EQ(setrlimit(RLIMIT_SIGPENDING, &r), 0);
  NoteSignalQueueLimit();
  uint64_t queued = 0;
  EXPECT_TRUE(MayHoldAnotherQueuedSignal(1000, 1000, &queued));
}

}  // namespace
}  // namespace trainprof::inject
