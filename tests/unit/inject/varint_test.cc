#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "trainprof/trace_format.h"

namespace trainprof::format {
namespace {

TEST(Varint, RoundTripsBoundaryValues) {
  const std::vector<uint64_t> values = {0,       1,        127,        128,        16383, 16384, 1u << 21,
                                        (1ull << 35) - 1, 1ull << 56, std::numeric_limits<uint64_t>::max()};
  for (uint64_t v : values) {
    uint8_t buf[10];
    uint8_t* end = PutVarint(buf, v);
    const uint8_t* p = buf;
    uint64_t got = 0;
    ASSERT_TRUE(GetVarint(&p, end, &got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_EQ(p, end);
  }
}

TEST(Varint, EncodedSizes) {
  uint8_t buf[10];
  EXPECT_EQ(PutVarint(buf, 127) - buf, 1);
  EXPECT_EQ(PutVarint(buf, 128) - buf, 2);
  EXPECT_EQ(PutVarint(buf, 1'000'000) - buf, 3);  // a 1 ms delta fits in 3 bytes
  EXPECT_EQ(PutVarint(buf, std::numeric_limits<uint64_t>::max()) - buf, 10);
}

TEST(Varint, RejectsTruncatedAndOverlongInput) {
  uint8_t cut[2] = {0x80, 0x80};
  const uint8_t* p = cut;
  uint64_t v;
  EXPECT_FALSE(GetVarint(&p, cut + 2, &v));
  EXPECT_EQ(p, cut);
  uint8_t overlong[11];
  for (auto& b : overlong) b = 0xff;
  overlong[10] = 0x01;
  p = overlong;
  EXPECT_FALSE(GetVarint(&p, overlong + 11, &v));
  uint8_t too_big[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  p = too_big;
  EXPECT_FALSE(GetVarint(&p, too_big + 10, &v));
}

// GetVarintFast (the reader's path with 10 bytes of look-ahead) against GetVarint: every length
// 1..10, each byte's continuation bit and payload varied, valid and invalid 10th bytes, and
// encodings of boundary values; the same verdict, value and end.
TEST(Varint, FastPathAgreesWithGetVarint) {
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  int valid = 0, invalid = 0;
  for (int round = 0; round < 200'000; ++round) {
    uint8_t buf[16];
    const uint64_t r = next();
    for (int i = 0; i < 16; ++i) buf[i] = static_cast<uint8_t>(next());
    const int length = static_cast<int>(r % 11) + 1;  // 11: no terminating byte within 10
    for (int i = 0; i < 16; ++i) {
      if (i < length - 1) buf[i] |= 0x80;
      if (i == length - 1 && length <= 10) buf[i] &= 0x7f;
    }
    if (length == 10 && (r >> 8) % 2 == 0) buf[9] &= 0x01;  // a valid 10-byte varint half the time
    const uint8_t* p_slow = buf;
    const uint8_t* p_fast = buf;
    uint64_t slow = 0, fast = 0;
    const bool ok_slow = GetVarint(&p_slow, buf + 16, &slow);
    const bool ok_fast = GetVarintFast(&p_fast, &fast);
    ASSERT_EQ(ok_fast, ok_slow) << "round " << round << " length " << length;
    ASSERT_EQ(p_fast, p_slow) << "round " << round;
    if (ok_slow) {
      ASSERT_EQ(fast, slow) << "round " << round;
      ++valid;
    } else {
      ++invalid;
    }
  }
  EXPECT_GT(valid, 150'000);
  EXPECT_GT(invalid, 10'000);  // 11-byte runs and 10th bytes above 1
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384}, (uint64_t{1} << 56) - 1,
                     uint64_t{1} << 56, (uint64_t{1} << 63) - 1, uint64_t{1} << 63, std::numeric_limits<uint64_t>::max()}) {
    uint8_t buf[16] = {};
    uint8_t* end = PutVarint(buf, v);
    const uint8_t* p = buf;
    uint64_t got = 0;
    ASSERT_TRUE(GetVarintFast(&p, &got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_EQ(p, end) << v;
  }
}

TEST(ZigZag, RoundTrips) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{-9}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  }
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
}

}  // namespace
}  // namespace trainprof::format
