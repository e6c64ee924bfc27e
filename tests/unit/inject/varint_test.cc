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
