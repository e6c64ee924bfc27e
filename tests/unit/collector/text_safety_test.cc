// Text safety of names from traced programs: UTF-8 replacement (all formats), control escapes (text).
#include "collector/base/text_safety.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace trainprof::collector {
namespace {

// What the JSON report makes of a string: nlohmann's dump with error_handler_t::replace.
std::string AsInJson(const std::string& s) {
  std::string dumped = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(dumped).get<std::string>();
}

TEST(TextSafety, ValidUtf8KeepsValidText) {
  for (const std::string& s : std::vector<std::string>{"", "plain", "caf\xC3\xA9", "\xE2\x82\xAC 5", "\xF0\x9F\x98\x80",
                                                      "a\tb\nc", std::string(1, '\0')}) {
    EXPECT_EQ(ValidUtf8(s), s);
  }
}

TEST(TextSafety, ValidUtf8ReplacesLikeTheJsonReport) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(ValidUtf8("bad \xff\xfe name"), "bad " + r + r + " name");
  EXPECT_EQ(ValidUtf8("cut \xE2\x82"), "cut " + r);              // a sequence cut at the end
  EXPECT_EQ(ValidUtf8("\xE2\x82x"), r + "x");                     // cut, then ASCII
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), r + r);                        // overlong
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), r + r + r);                // a surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), r + r + r + r);        // beyond U+10FFFF
  EXPECT_EQ(ValidUtf8("\xE2\xC3\xA9"), r + "\xC3\xA9");           // the failing byte starts over
  const char* cases[] = {"bad \xff\xfe name", "cut \xE2\x82", "\xC0\xAF", "\xED\xA0\x80", "\xE0\x80\xBF",
                         "\xF0\x80\x80\x80", "\xF4\x90\x80\x80", "\xE2\xC3\xA9", "\x80\x80", "\xF0\x9F\x98"};
  for (const char* c : cases) EXPECT_EQ(ValidUtf8(c), AsInJson(c)) << c;
  // Random bytes, biased towards UTF-8 lead and continuation bytes.
  std::mt19937 rng(42);
  const uint8_t alphabet[] = {'a', 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                              0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF};
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 9, '\0');
    for (char& c : s) c = static_cast<char>(alphabet[rng() % sizeof alphabet]);
    ASSERT_EQ(ValidUtf8(s), AsInJson(s)) << testing::PrintToString(s);
  }
}

TEST(TextSafety, EscapeControls) {
  EXPECT_EQ(EscapeControls("plain name"), "plain name");
  EXPECT_EQ(EscapeControls("a\tb\nc\rd"), "a\\tb\\nc\\rd");
  EXPECT_EQ(EscapeControls(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeControls("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(EscapeControls("c1 \xC2\x85 nbsp \xC2\xA0"), "c1 \\u0085 nbsp \xC2\xA0");
  EXPECT_EQ(EscapeControls("caf\xC3\xA9 \xff"), "caf\xC3\xA9 \xEF\xBF\xBD");
  EXPECT_EQ(EscapeControls("C:\\dir"), "C:\\dir");  // backslashes stay: escaping is idempotent
  EXPECT_EQ(EscapeControls(EscapeControls("a\tb")), "a\\tb");
}

}  // namespace
}  // namespace trainprof::collector
