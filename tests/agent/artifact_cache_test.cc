// agent/artifact_cache.h: downloads on a miss, verified hits, corrupted files fetched again.

#include "agent/artifact_cache.h"

#include "gtest/gtest.h"
#include "tests/agent/agent_test_support.h"

namespace boardlab::agent {
namespace {

TEST(ArtifactCache, HitsAreVerifiedAndACorruptedFileIsFetchedAgain) {
  testing::ScratchDir dir;
  testing::FakeBlobStore store;
  ArtifactCache cache(dir / "cache", store);
  const v1::Digest digest = store.Add("artifact bytes");
  absl::StatusOr<std::string> path = cache.Fetch(digest);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(testing::ReadText(*path), "artifact bytes");
  ASSERT_TRUE(cache.Fetch(digest).ok());
  EXPECT_EQ(cache.downloads(), 1);
  // A file changed in place (new size, modification time) is hashed again and replaced.
  testing::WriteText(*path, "corrupted");
  ASSERT_TRUE(cache.Fetch(digest).ok());
  EXPECT_EQ(cache.downloads(), 2);
  EXPECT_EQ(testing::ReadText(*path), "artifact bytes");
  // A new cache (an agent restart) hashes an intact file once and does not download it.
  ArtifactCache restarted(dir / "cache", store);
  ASSERT_TRUE(restarted.Fetch(digest).ok());
  EXPECT_EQ(restarted.downloads(), 0);
}

}  // namespace
}  // namespace boardlab::agent
