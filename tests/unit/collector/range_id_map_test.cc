// RangeIdMap (collector/read/range_id_map.h) against std::unordered_map: inserts, finds and
// erases (Insert and InsertNew) in a random order, with ids that collide on their home slot, so that every erase's
// backward shift is exercised, including runs that wrap around the end of the table.
#include "collector/read/range_id_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace trainprof::collector {
namespace {

TEST(RangeIdMap, AgreesWithUnorderedMapThroughInsertsAndErases) {
  RangeIdMap<uint64_t> map;
  std::unordered_map<uint64_t, uint64_t> want;
  uint64_t seed = 12345;
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  std::vector<uint64_t> ids;
  for (int step = 0; step < 200'000; ++step) {
    const uint64_t r = next();
    // Few distinct ids (dense collisions) mixed with range-id-like ones: (thread + 1) << 40 | n.
    const uint64_t id = r % 3 == 0 ? (r >> 8) % 97 : ((r >> 8) % 4 + 1) << 40 | (r >> 16) % 5000;
    if ((r >> 4) % 3 != 0 && (r >> 6) % 2 == 0) {
      // InsertNew: adds only an absent id, and leaves a present one's value as it was.
      uint64_t* fresh = map.InsertNew(id);
      ASSERT_EQ(fresh != nullptr, want.count(id) == 0) << step;
      if (fresh != nullptr) {
        EXPECT_EQ(*fresh, 0u) << step;  // value-initialised, whatever an erased entry left there
        *fresh = r;
        want[id] = r;
      }
    } else if (want.count(id) == 0 && (r >> 4) % 3 != 0) {
      map.Insert(id, r);
      want[id] = r;
    } else {
      EXPECT_EQ(map.Erase(id), want.erase(id) == 1) << step;
    }
    if (step % 1000 == 0) {
      ASSERT_EQ(map.size(), want.size()) << step;
      for (const auto& [k, v] : want) {
        const uint64_t* got = map.Find(k);
        ASSERT_NE(got, nullptr) << k;
        ASSERT_EQ(*got, v) << k;
      }
    }
  }
  size_t seen = 0;
  map.ForEach([&](uint64_t id, uint64_t& v) {
    ++seen;
    ASSERT_EQ(want.at(id), v);
  });
  EXPECT_EQ(seen, want.size());
  EXPECT_GT(seen, 100u);
  EXPECT_EQ(map.Find(uint64_t{999} << 40), nullptr);
  EXPECT_FALSE(map.Erase(uint64_t{999} << 40));
}

TEST(RangeIdMap, ClearEmptiesItWhetherItsTableIsKeptOrGivenBack) {
  for (uint64_t n : {10u, 5'000u}) {  // 32 slots' worth stay; thousands are given back
    RangeIdMap<uint64_t> map;
    for (uint64_t id = 1; id <= n; ++id) map.Insert(id * 7, id);
    ASSERT_EQ(map.size(), n);
    map.Clear();
    EXPECT_EQ(map.size(), 0u) << n;
    EXPECT_EQ(map.Find(7), nullptr) << n;
    size_t seen = 0;
    map.ForEach([&](uint64_t, uint64_t&) { ++seen; });
    EXPECT_EQ(seen, 0u) << n;
    // Usable again, the same ids included.
    for (uint64_t id = 1; id <= 3; ++id) map.Insert(id * 7, id + 100);
    EXPECT_EQ(map.size(), 3u);
    ASSERT_NE(map.Find(14), nullptr);
    EXPECT_EQ(*map.Find(14), 102u);
    EXPECT_EQ(map.Find(7 * n), n > 3 ? nullptr : map.Find(7 * n));
    EXPECT_TRUE(map.Erase(21));
    EXPECT_EQ(map.size(), 2u);
  }
}

}  // namespace
}  // namespace trainprof::collector
