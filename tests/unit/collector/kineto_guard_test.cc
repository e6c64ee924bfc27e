// JsonGuard (collector/read/kineto_guard.h): bounded tokens, bad bytes replaced, sound JSON parsed
// as it was.
#include "collector/read/kineto_guard.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace trainprof::collector {
namespace {

// The guard's output for `in`, fed `piece` bytes at a time.
std::string Guard(const std::string& in, size_t piece = SIZE_MAX, JsonGuard* g = nullptr) {
  JsonGuard local;
  JsonGuard& guard = g != nullptr ? *g : local;
  std::string out;
  for (size_t at = 0; at < in.size(); at += piece) {
    const size_t n = std::min(piece, in.size() - at);
    std::string buf(n + JsonGuard::kSlack, '\0');
    buf.resize(guard.Filter(in.data() + at, n, buf.data()));
    out += buf;
  }
  return out;
}

TEST(KinetoGuard, SoundJsonParsesTheSameWithWhitespaceRunsKeptAsOneCharacter) {
  const std::string in = "{\"traceEvents\": [\n    {\"name\": \"a  b\\\"c\\u00e9 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", "
                         "\"ts\": 1.5e3, \"ok\": true}\n  ]\n}\n";
  const std::string out = Guard(in);
  EXPECT_EQ(out, "{\"traceEvents\": [\n{\"name\": \"a  b\\\"c\\u00e9 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", "
                 "\"ts\": 1.5e3, \"ok\": true}\n]\n}\n");
  EXPECT_EQ(nlohmann::json::parse(out), nlohmann::json::parse(in));
  for (size_t piece = 1; piece <= 7; ++piece) EXPECT_EQ(Guard(in, piece), out) << "pieces of " << piece;
}

TEST(KinetoGuard, LongStringsAreCutAtACharacterBoundaryAndTheQuoteKept) {
  JsonGuard g;
  // 65535 ASCII bytes, then a 2-byte character that crosses the limit, then an escaped quote and
  // more text past the cut: the string ends at its real closing quote.
  const std::string body = std::string(JsonGuard::kMaxStringBytes - 1, 'a') + "\xc3\xa9" + "\\\"tail" +
                           std::string(1000, 'b');
  const std::string out = Guard("[\"" + body + "\",\"next\"]", 4096, &g);
  const nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].get<std::string>(), std::string(JsonGuard::kMaxStringBytes - 1, 'a') + "\xc3\xa9");
  EXPECT_EQ(j[1], "next");
  EXPECT_EQ(g.strings_cut(), 1u);
  EXPECT_EQ(g.bytes_replaced(), 0u);
}

TEST(KinetoGuard, BytesThatAreNotUtf8AndRawControlCharactersBecomeQuestionMarks) {
  JsonGuard g;
  // \xff cannot lead; \xe0\x80 is an overlong form (two bytes replaced); \x01 and a raw tab are
  // control characters; \xc3 cut by the closing quote.
  const std::string out = Guard(std::string("[\"a\xff" "b\xe0\x80" "c\x01\td\xc3\"]"), 3, &g);
  EXPECT_EQ(out, "[\"a?b??c??d?\"]");
  EXPECT_EQ(nlohmann::json::parse(out)[0], "a?b??c??d?");
  EXPECT_EQ(g.bytes_replaced(), 6u);
}

TEST(KinetoGuard, OverlongBareTokensAreCut) {
  JsonGuard g;
  const std::string out = Guard("[" + std::string(10000, '9') + ",1]", 512, &g);
  EXPECT_EQ(out, "[" + std::string(JsonGuard::kMaxBareBytes, '9') + ",1]");
  EXPECT_EQ(g.tokens_cut(), 1u);
}

}  // namespace
}  // namespace trainprof::collector
