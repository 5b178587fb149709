// Temporary files in the data directory that replicas share (server/scratch_names.h): two
// stores on one root, as two replicas' would be, never write the same temporary file, even
// though in containers their pids are alike, and one that opens leaves the other's alone.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "server/file_blob_store.h"
#include "server/scratch_names.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

TEST(ScratchNames, NameTheHostAndDifferOnEveryCall) {
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::set<std::string> names;
  for (int i = 0; i < 100; ++i) {
    const std::string name = UniqueScratchName();
    EXPECT_EQ(name.rfind(std::string(host) + "-" + std::to_string(::getpid()) + "-", 0), 0u)
        << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 100u);
}

TEST(ScratchNames, TwoBlobStoresOnOneRootNeverShareATemporaryPath) {
  const fs::path root = fs::path(::testing::TempDir()) / ("scratch_" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto first = FileBlobStore::Open(root.string());
  auto second = FileBlobStore::Open(root.string());
  ASSERT_TRUE(first.ok() && second.ok());
  std::set<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    paths.insert((*first)->TempPath());
    paths.insert((*second)->TempPath());
  }
  EXPECT_EQ(paths.size(), 6u);
  for (const std::string& p : paths) EXPECT_EQ(p.rfind(root.string() + "/tmp/", 0), 0u) << p;
  fs::remove_all(root);
}

// A replica that starts must not delete another's upload in progress from the shared temporary
// directory; a file nobody wrote to for over a day is a crash's leftover and goes.
TEST(ScratchNames, OpeningAStoreKeepsFreshTemporaryFilesAndRemovesStaleOnes) {
  const fs::path root = fs::path(::testing::TempDir()) / ("stale_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "tmp");
  const fs::path fresh = root / "tmp" / "other-replica-upload";
  const fs::path stale = root / "tmp" / "crashed-upload";
  std::ofstream(fresh) << "in progress";
  std::ofstream(stale) << "left over";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(25));
  ASSERT_TRUE(FileBlobStore::Open(root.string()).ok());
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(stale));
  fs::remove_all(root);
}

}  // namespace
}  // namespace boardlab::server
