// IdMap: the dense array for counted-up ids (CUPTI correlation ids), the hash map for ids spread
// thin, and the same answers from both: the first value of an id stays, absent ids are absent.
#include "collector/base/id_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace trainprof::collector {
namespace {

// Every id of `ids` (repeats included) with value i (its position), looked up against
// std::unordered_map::emplace of the same, over every id in `probe`.
void ExpectAsUnorderedMap(const std::vector<uint64_t>& ids, const std::vector<uint64_t>& probe) {
  IdSpan span;
  for (uint64_t id : ids) span.Add(id);
  IdMap<uint64_t> map(span);
  std::unordered_map<uint64_t, uint64_t> want;
  for (size_t i = 0; i < ids.size(); ++i) {
    map.Emplace(ids[i], i);
    want.emplace(ids[i], i);
  }
  EXPECT_EQ(map.size(), want.size());
  for (uint64_t id : probe) {
    const uint64_t* got = map.Find(id);
    auto it = want.find(id);
    if (it == want.end()) {
      EXPECT_EQ(got, nullptr) << id;
    } else {
      ASSERT_NE(got, nullptr) << id;
      EXPECT_EQ(*got, it->second) << id;
    }
  }
}

TEST(IdMap, CountedUpIdsWithGapsAndRepeats) {
  std::vector<uint64_t> ids, probe;
  for (uint64_t id = 100; id < 5'000; id += (id % 7 == 0 ? 3 : 1)) ids.push_back(id);
  ids.push_back(150);  // a repeat: the first value stays
  ids.push_back(4'000);
  for (uint64_t id = 0; id < 5'200; ++id) probe.push_back(id);
  probe.push_back(UINT64_MAX);
  ExpectAsUnorderedMap(ids, probe);
}

TEST(IdMap, IdsSpreadThinUseTheHashMapWithTheSameAnswers) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> ids, probe;
  for (int i = 0; i < 2'000; ++i) ids.push_back(rng());
  ids.push_back(0);
  ids.push_back(UINT64_MAX);  // the widest span there is
  ids.push_back(ids[10]);
  probe = ids;
  for (int i = 0; i < 2'000; ++i) probe.push_back(rng());
  probe.push_back(1);
  ExpectAsUnorderedMap(ids, probe);
}

TEST(IdMap, IdsOutsideTheSpanAndAnEmptyMap) {
  IdSpan span;
  span.Add(10);
  span.Add(20);
  IdMap<int> map(span);
  map.Emplace(15, 1);
  map.Emplace(1'000'000, 2);  // outside the span given: kept all the same
  map.Emplace(15, 3);
  ASSERT_NE(map.Find(15), nullptr);
  EXPECT_EQ(*map.Find(15), 1);
  ASSERT_NE(map.Find(1'000'000), nullptr);
  EXPECT_EQ(*map.Find(1'000'000), 2);
  EXPECT_EQ(map.Find(16), nullptr);
  EXPECT_EQ(map.Find(9), nullptr);
  EXPECT_EQ(map.size(), 2u);

  IdMap<int> none{IdSpan{}};
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.Find(0), nullptr);
  none.Emplace(0, 5);
  ASSERT_NE(none.Find(0), nullptr);
  EXPECT_EQ(*none.Find(0), 5);
}

}  // namespace
}  // namespace trainprof::collector
