// server/web/sessions.h: browser sessions live for their lifetime, end on sign-out, and the table
// never grows past its limit.

#include "server/web/sessions.h"

#include <set>

#include "gtest/gtest.h"

namespace boardlab::server::web {
namespace {

TEST(WebSessionsTest, ASessionCarriesItsCallerUntilItExpires) {
  WebSessions sessions(/*lifetime_ms=*/1000, /*max_sessions=*/10);
  const std::string id = sessions.Create(Caller{"ci", Role::kClient}, 5000);
  EXPECT_EQ(id.size(), 64u);
  std::optional<Caller> found = sessions.Find(id, 5999);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tenant, "ci");
  EXPECT_EQ(found->role, Role::kClient);
  EXPECT_FALSE(sessions.Find(id, 6000));
  EXPECT_FALSE(sessions.Find(id, 5500));  // an expired session is gone for good
}

TEST(WebSessionsTest, UnknownIdsFindNothingAndSignOutEndsASession) {
  WebSessions sessions(1000, 10);
  const std::string id = sessions.Create(Caller{"ci", Role::kAdmin}, 0);
  EXPECT_FALSE(sessions.Find("", 0));
  EXPECT_FALSE(sessions.Find(std::string(64, '0'), 0));
  sessions.Remove(id);
  EXPECT_FALSE(sessions.Find(id, 0));
  sessions.Remove(id);  // twice is harmless
}

TEST(WebSessionsTest, IdsAreFreshAndAFullTableDropsTheOldest) {
  WebSessions sessions(1000, 3);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(sessions.Create(Caller{"t", Role::kClient}, i));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 4u);
  EXPECT_EQ(sessions.size(), 3u);
  EXPECT_FALSE(sessions.Find(ids[0], 10));
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(sessions.Find(ids[i], 10)) << i;
}

}  // namespace
}  // namespace boardlab::server::web
