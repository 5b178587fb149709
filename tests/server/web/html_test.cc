// server/web/html.h: escaping for the pages, URL encoding and form decoding.

#include "server/web/html.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace boardlab::server::web {
namespace {

using ::testing::HasSubstr;

TEST(HtmlEscapeTest, EscapesMarkupAndBothQuotes) {
  EXPECT_EQ(HtmlEscape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("plain text, µs and 日本"), "plain text, µs and 日本");
}

TEST(HtmlEscapeTest, ReplacesBytesThatAreNotValidUtf8OrControlCharacters) {
  EXPECT_EQ(HtmlEscape(std::string("a\xff"
                                   "b\x01"
                                   "c\xc3",
                                   6)),
            "a?b?c?");
  EXPECT_EQ(HtmlEscape("tab\tline\n"), "tab\tline\n");
}

TEST(UrlEncodeTest, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(UrlEncode("j00000001"), "j00000001");
  EXPECT_EQ(UrlEncode("a b/c?d=e&f\"<"), "a%20b%2Fc%3Fd%3De%26f%22%3C");
  EXPECT_EQ(UrlEncode("-._~"), "-._~");
}

TEST(ParseFormTest, DecodesPlusPercentAndKeepsTheLastOfARepeatedName) {
  auto fields = ParseForm("token=a+b%2Bc%3D&next=%2Fjobs%3Fstate%3Ddone&x&token=last&&");
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(fields->at("token"), "last");
  EXPECT_EQ(fields->at("next"), "/jobs?state=done");
  EXPECT_EQ(fields->at("x"), "");
  EXPECT_EQ(fields->size(), 3u);
  auto first = ParseForm("token=a+b%2Bc%3D");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->at("token"), "a b+c=");
}

TEST(ParseFormTest, AMalformedEscapeIsAnError) {
  for (const char* bad : {"a=%", "a=%4", "a=%zz", "%g0=1"}) {
    auto fields = ParseForm(bad);
    ASSERT_FALSE(fields.ok()) << bad;
    EXPECT_EQ(fields.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(fields.status().message()), HasSubstr("malformed URL encoding"));
  }
}

TEST(PercentDecodeTest, KeepsPlusSigns) {
  auto decoded = PercentDecode("a+b%20c");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, "a+b c");
  EXPECT_FALSE(PercentDecode("%2").ok());
}

}  // namespace
}  // namespace boardlab::server::web
