// The schema's encoders write the format's bytes (tag, dt, fields in schema order, varints,
// zigzag, length-prefixed strings), its decoders read them back by name, and the derived sizes
// bound every encoding.
#include "trainprof/records.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trainprof::format {
namespace {

std::vector<uint8_t> Bytes(const uint8_t* begin, const uint8_t* end) { return {begin, end}; }

TEST(RecordSchema, TimedRecordIsTagDtThenFieldsInOrder) {
  uint8_t buf[kMaxFixedRecordBytes];
  const rec::RangePush r{.domain = 3, .name = 300, .category = 0};
  uint8_t* end = EncodeTimed(buf, /*dt=*/1, r);
  // tag 1, dt 1, domain 3, name 300 (LEB128 0xAC 0x02), category 0.
  EXPECT_EQ(Bytes(buf, end), (std::vector<uint8_t>{1, 1, 3, 0xAC, 0x02, 0}));
  EXPECT_LE(static_cast<uint32_t>(end - buf), EncodedBound(r));
}

TEST(RecordSchema, SignedFieldsAreZigzag) {
  uint8_t buf[kMaxFixedRecordBytes];
  uint8_t* end = EncodeTimed(buf, 0, rec::ChildExit{.pid = 7, .kind = 2, .code = -1});
  EXPECT_EQ(Bytes(buf, end), (std::vector<uint8_t>{35, 0, 7, 2, 1}));
  std::vector<uint64_t> values = {7, 2, 1};
  EXPECT_EQ(Decode<rec::ChildExit>(values.data()).code, -1);
}

TEST(RecordSchema, StringIsIdLengthBytes) {
  uint8_t buf[64];
  const rec::String s{.id = 5, .bytes = "step"};
  uint8_t* end = EncodeUntimed(buf, s);
  EXPECT_EQ(Bytes(buf, end), (std::vector<uint8_t>{16, 5, 4, 's', 't', 'e', 'p'}));
  EXPECT_EQ(EncodedBound(s), 1u + 10 + 10 + 4);
  std::vector<uint64_t> values = {5, 4};
  const rec::String back = Decode<rec::String>(values.data(), "step");
  EXPECT_EQ(back.id, 5u);
  EXPECT_EQ(back.bytes, "step");
}

TEST(RecordSchema, GpuKernelRoundTripsByName) {
  rec::GpuKernel k{.zs = -3'000, .ze = 250'000, .device = 1, .context = 7, .stream = 13, .correlation = 4242,
                   .name = 77, .grid_x = 1024, .grid_y = 2, .grid_z = 3, .block_x = 256, .block_y = 4,
                   .block_z = 1, .registers = 40, .static_shared = 4096, .dynamic_shared = 49152, .graph = 9,
                   .launch = 3};
  uint8_t buf[kMaxFixedRecordBytes];
  const uint8_t* end = EncodeUntimed(buf, k);
  const uint8_t* p = buf + 1;
  ASSERT_EQ(buf[0], 50);
  std::vector<uint64_t> values(RecordInfoOf(RecordTag::kGpuKernel).field_count);
  for (uint64_t& v : values) ASSERT_TRUE(GetVarint(&p, end, &v));
  EXPECT_EQ(p, end);
  const auto back = Decode<rec::GpuKernel>(values.data());
  EXPECT_EQ(back.zs, -3'000);
  EXPECT_EQ(back.ze, 250'000);
  EXPECT_EQ(back.correlation, 4242u);
  EXPECT_EQ(back.name, 77u);
  EXPECT_EQ(back.block_x, 256u);
  EXPECT_EQ(back.dynamic_shared, 49152u);
  EXPECT_EQ(back.launch, 3u);
}

TEST(RecordSchema, LargestRecordsFitTheirComputedBounds) {
  // Every field at its widest: 10 bytes a varint.
  rec::GpuKernel k{.zs = INT64_MIN, .ze = INT64_MIN, .device = ~0ull, .context = ~0ull, .stream = ~0ull,
                   .correlation = ~0ull, .name = ~0ull, .grid_x = ~0ull, .grid_y = ~0ull, .grid_z = ~0ull,
                   .block_x = ~0ull, .block_y = ~0ull, .block_z = ~0ull, .registers = ~0ull,
                   .static_shared = ~0ull, .dynamic_shared = ~0ull, .graph = ~0ull, .launch = ~0ull};
  uint8_t buf[kMaxFixedRecordBytes];
  EXPECT_EQ(static_cast<uint32_t>(EncodeUntimed(buf, k) - buf), 181u);
  EXPECT_EQ(kMaxFixedRecordBytes, 181u);
  EXPECT_EQ(EncodedBound(k), 181u);
  EXPECT_EQ(kMaxRecordFields, 18);
  std::string longest(kMaxStringBytes, 'x');
  std::vector<uint8_t> sbuf(kMaxRecordBytes);
  const rec::String s{.id = ~0ull, .bytes = longest};
  EXPECT_LE(static_cast<uint32_t>(EncodeUntimed(sbuf.data(), s) - sbuf.data()), kMaxRecordBytes);
}

TEST(RecordSchema, TableKnowsEveryTagAndItsVersion) {
  EXPECT_EQ(FindRecord(0), nullptr);
  EXPECT_EQ(FindRecord(6), nullptr);
  EXPECT_EQ(FindRecord(200), nullptr);
  ASSERT_NE(FindRecord(1), nullptr);
  EXPECT_STREQ(FindRecord(1)->name, "RANGE_PUSH");
  EXPECT_EQ(FindRecord(1)->varints, 4);
  EXPECT_EQ(FindRecord(48)->since, 2u);  // CUDA records came with version 2
  EXPECT_EQ(FindRecord(16)->has_bytes, true);
  EXPECT_EQ(RecordInfoOf(RecordTag::kGpuMemcpy).varints, 14);
  EXPECT_EQ(RecordInfoOf(RecordTag::kCapture).cls, RecordClass::kTimed);
  EXPECT_EQ(RecordInfoOf(RecordTag::kGpuDevice).cls, RecordClass::kDefinition);
  EXPECT_EQ(std::size(kRecords), 35u);
  EXPECT_EQ(FindRecord(64)->since, 3u);  // stacks came with version 3
  EXPECT_EQ(FindRecord(68)->since, 5u);  // what the sampler could not sample: version 5
  EXPECT_EQ(RecordInfoOf(RecordTag::kSamplePaused).cls, RecordClass::kTimed);
}

}  // namespace
}  // namespace trainprof::format
