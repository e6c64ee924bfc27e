// The stack table (inject/stacks/stack_table.h): one id per distinct stack, the STACK write once
// and before the id is handed out, a full table still giving ids (counted), many threads at once.
#include "stacks/stack_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace trainprof::inject {
namespace {

struct Written {
  std::mutex mu;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // id → words, as the STACK record had them
  int writes = 0;
  void operator()(uint32_t id, const uint64_t* w, size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    ++writes;
    EXPECT_TRUE(stacks.emplace(id, std::vector<uint64_t>(w, w + n)).second) << "id " << id << " written twice";
  }
};

struct TableDeleter {
  void operator()(StackTable* t) const { StackTable::Destroy(t); }
};
using TablePtr = std::unique_ptr<StackTable, TableDeleter>;

std::vector<uint64_t> Stack(uint64_t seed, size_t n) {
  std::vector<uint64_t> w;
  for (size_t i = 0; i < n; ++i) w.push_back((0x400000 + seed * 0x1000 + i * 8) << 1);
  return w;
}

TEST(StackTable, SameStackSameIdWrittenOnce) {
  TablePtr t(StackTable::Create(64, 4096));
  ASSERT_NE(t, nullptr);
  Written out;
  auto ref = std::ref(out);
  const auto a = Stack(1, 5), b = Stack(2, 5), a_prefix = Stack(1, 4);
  uint32_t ia = t->Intern(a.data(), a.size(), ref);
  uint32_t ib = t->Intern(b.data(), b.size(), ref);
  uint32_t ip = t->Intern(a_prefix.data(), a_prefix.size(), ref);
  EXPECT_EQ(ia, 1u);
  EXPECT_EQ(ib, 2u);
  EXPECT_EQ(ip, 3u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(t->Intern(a.data(), a.size(), ref), ia);
    EXPECT_EQ(t->Intern(b.data(), b.size(), ref), ib);
  }
  EXPECT_EQ(out.writes, 3);
  EXPECT_EQ(out.stacks[ia], a);
  EXPECT_EQ(out.stacks[ip], a_prefix);
  EXPECT_EQ(t->Count(), 3u);
  EXPECT_EQ(t->Undeduplicated(), 0u);
}

TEST(StackTable, EmptyStackIsNoStack) {
  TablePtr t(StackTable::Create(64, 4096));
  Written out;
  EXPECT_EQ(t->Intern(nullptr, 0, std::ref(out)), 0u);
  EXPECT_EQ(out.writes, 0);
}

TEST(StackTable, FullTableStillRecordsEveryStackAndCountsIt) {
  TablePtr t(StackTable::Create(16, 1 << 16));  // 16 slots
  Written out;
  auto ref = std::ref(out);
  std::vector<uint32_t> ids;
  for (uint64_t s = 0; s < 40; ++s) {
    auto w = Stack(s, 3);
    ids.push_back(t->Intern(w.data(), w.size(), ref));
  }
  EXPECT_EQ(std::set<uint32_t>(ids.begin(), ids.end()).size(), 40u);  // all distinct ids
  EXPECT_EQ(out.writes, 40);                                          // every one written
  EXPECT_EQ(t->Undeduplicated(), 24u);                                // 40 - 16 slots
  // The first 16 are still deduplicated; the others get a fresh id (and STACK) each time.
  auto first = Stack(0, 3);
  EXPECT_EQ(t->Intern(first.data(), first.size(), ref), ids[0]);
  auto late = Stack(39, 3);
  EXPECT_NE(t->Intern(late.data(), late.size(), ref), ids[39]);
  EXPECT_EQ(out.stacks[ids[39]], late);
  EXPECT_EQ(t->Undeduplicated(), 25u);
}

TEST(StackTable, FullArenaStillRecordsEveryStack) {
  TablePtr t(StackTable::Create(1024, 10));  // room for 10 words of frames
  Written out;
  auto ref = std::ref(out);
  auto a = Stack(1, 8), b = Stack(2, 8);
  uint32_t ia = t->Intern(a.data(), a.size(), ref);
  uint32_t ib = t->Intern(b.data(), b.size(), ref);  // does not fit: recorded, not kept
  EXPECT_NE(ia, ib);
  EXPECT_EQ(t->Intern(a.data(), a.size(), ref), ia);
  EXPECT_EQ(out.stacks[ib], b);
  EXPECT_EQ(t->Undeduplicated(), 1u);
}

TEST(StackTable, ThreadsAgreeOnIdsAndEachStackIsWrittenOnce) {
  TablePtr t(StackTable::Create(1 << 12, 1 << 20));
  Written out;
  constexpr int kThreads = 8, kStacks = 200, kRounds = 20;
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(kStacks));
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      while (!go.load()) {
      }
      for (int r = 0; r < kRounds; ++r) {
        for (int s = 0; s < kStacks; ++s) {
          int k = (s + th * 37) % kStacks;  // threads meet the stacks in different orders
          auto w = Stack(static_cast<uint64_t>(k), 1 + k % 20);
          uint32_t id = t->Intern(w.data(), w.size(), std::ref(out));
          if (r == kRounds - 1) seen[th][k] = id;
        }
      }
    });
  }
  go.store(true);
  for (auto& th : threads) th.join();
  // Every id a thread got was written, before it was handed out, with that thread's stack. A stack
  // may have got a second id when threads met it at once (one found the slot claimed but not yet
  // published, and took another), never a wrong one.
  for (int s = 0; s < kStacks; ++s) {
    auto w = Stack(static_cast<uint64_t>(s), 1 + s % 20);
    for (int th = 0; th < kThreads; ++th) EXPECT_EQ(out.stacks[seen[th][s]], w) << "stack " << s;
  }
  // Every id handed out was written exactly once (Written checks), and no more were made than
  // one per stack plus one per collision of threads.
  EXPECT_EQ(static_cast<uint32_t>(out.writes), t->Count());
  EXPECT_LE(t->Count(), static_cast<uint32_t>(kStacks * kThreads));
  // Once quiet, a stack's id is stable and no new STACK is written.
  const int writes = out.writes;
  for (int s = 0; s < kStacks; ++s) {
    auto w = Stack(static_cast<uint64_t>(s), 1 + s % 20);
    uint32_t a = t->Intern(w.data(), w.size(), std::ref(out));
    EXPECT_EQ(t->Intern(w.data(), w.size(), std::ref(out)), a);
  }
  EXPECT_EQ(out.writes, writes);
}

}  // namespace
}  // namespace trainprof::inject
