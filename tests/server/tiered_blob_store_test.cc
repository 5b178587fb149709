// server/tiered_blob_store.h: small blobs in the database, large ones and old ones in files.

#include "server/tiered_blob_store.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "server/clock.h"
#include "server/sqlite_store.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class TieredBlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("tiered_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = SqliteStore::Open((dir_ / "boardlab.db").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    Reopen();
  }
  void TearDown() override {
    blobs_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    blobs_.reset();
    blobs_ = Another();
  }
  // Another blob store on the same database and directory (another replica's).
  std::unique_ptr<TieredBlobStore> Another(int64_t known_present_ms = kMaxKnownPresentMs) {
    auto files = FileBlobStore::Open((dir_ / "blobs").string());
    EXPECT_TRUE(files.ok()) << files.status();
    return std::make_unique<TieredBlobStore>(*std::move(files), *store_, known_present_ms);
  }
  // SQL on the database behind the stores' back, as another program would run it.
  void Sql(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "boardlab.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  // Regular files below blobs/ (the temporary directory aside).
  int BlobFiles() const {
    int n = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir_ / "blobs")) {
      n += entry.is_regular_file() ? 1 : 0;
    }
    return n;
  }

  fs::path dir_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<TieredBlobStore> blobs_;
};

TEST_F(TieredBlobStoreTest, SmallBlobsAreRowsLargeOnesFiles) {
  const std::string small = "a run log\n";
  const std::string large(TieredBlobStore::kSmallBlobBytes + 1, 'x');
  auto small_digest = blobs_->Put(small);
  ASSERT_TRUE(small_digest.ok()) << small_digest.status();
  EXPECT_EQ(BlobFiles(), 0);
  auto large_digest = blobs_->Put(large);
  ASSERT_TRUE(large_digest.ok()) << large_digest.status();
  EXPECT_EQ(BlobFiles(), 1);
  EXPECT_EQ(blobs_->TotalBytes(), static_cast<int64_t>(small.size() + large.size()));
  Reopen();  // both are durable and counted again
  EXPECT_EQ(blobs_->TotalBytes(), static_cast<int64_t>(small.size() + large.size()));
  EXPECT_TRUE(blobs_->Has(*small_digest));
  EXPECT_EQ(*blobs_->Read(*small_digest), small);
  EXPECT_EQ(*blobs_->Read(*large_digest), large);
  v1::Digest unsized = *small_digest;
  unsized.set_size_bytes(0);
  EXPECT_TRUE(blobs_->Has(unsized));
  v1::Digest wrong_size = *small_digest;
  wrong_size.set_size_bytes(3);
  EXPECT_FALSE(blobs_->Has(wrong_size));
}

TEST_F(TieredBlobStoreTest, StreamedSmallUploadIsChecked) {
  const std::string bytes = "0123456789";
  const v1::Digest digest = api::DigestOf(bytes);
  auto writer = blobs_->StartWrite(digest);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(bytes.substr(0, 4)).ok());
  ASSERT_TRUE((*writer)->Append(bytes.substr(4)).ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_TRUE(blobs_->Has(digest));

  v1::Digest lying = api::DigestOf("something else");
  lying.set_size_bytes(static_cast<int64_t>(bytes.size()));
  writer = blobs_->StartWrite(lying);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(bytes).ok());
  EXPECT_EQ((*writer)->Commit().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Append("more").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(blobs_->Has(lying));
  EXPECT_EQ(blobs_->StartWrite(v1::Digest()).status().code(), absl::StatusCode::kInvalidArgument);
}

// A program that needs a path (the reference runner) gets the small blob written out once.
TEST_F(TieredBlobStoreTest, PathOfWritesASmallBlobOut) {
  auto digest = blobs_->Put("input bytes");
  ASSERT_TRUE(digest.ok());
  auto path = blobs_->PathOf(*digest);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(fs::file_size(*path), 11u);
  EXPECT_EQ(*blobs_->PathOf(*digest), *path);
  EXPECT_EQ(blobs_->PathOf(api::DigestOf("absent")).status().code(), absl::StatusCode::kNotFound);
}

// Blobs stored as files before the database tier existed are still found.
TEST_F(TieredBlobStoreTest, OldSmallBlobFilesAreFound) {
  auto files = FileBlobStore::Open((dir_ / "blobs").string());
  ASSERT_TRUE(files.ok());
  auto digest = (*files)->Put("an old log");
  ASSERT_TRUE(digest.ok());
  EXPECT_TRUE(blobs_->Has(*digest));
  EXPECT_EQ(*blobs_->Read(*digest), "an old log");
}

// A submit touches the same blobs several times: only the first touch within the database's
// precision is written (later ones would change nothing), and one past it is written again.
TEST_F(TieredBlobStoreTest, RepeatedTouchesWithinThePrecisionAreNotWritten) {
  auto digest = blobs_->Put("a model");
  ASSERT_TRUE(digest.ok()) << digest.status();
  blobs_->Touch(*digest);  // remembered as written now
  // Its row ages behind the store's back (a second connection, as a sweep's clock would see it).
  Sql("UPDATE small_blobs SET used_ms = 1");
  auto unused = [&] {
    auto found = store_->BlobsUnusedSince(NowMs() - kTouchPrecisionMs);
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() ? *found : std::vector<std::string>();
  };
  blobs_->Touch(*digest);  // within the precision: no write, the row stays old
  EXPECT_EQ(unused(), std::vector<std::string>{digest->sha256()});
  // Another store (another replica, or this server restarted) writes its first touch.
  Reopen();
  blobs_->Touch(*digest);
  EXPECT_TRUE(unused().empty());
}

// Blobs never change: one seen stored, with a recorded use, is not looked up again (the row is
// deleted behind the store's back to show that no query was made); with no time to trust it,
// every check asks.
TEST_F(TieredBlobStoreTest, AStoredBlobIsKnownWithoutAskingTheDatabaseAgain) {
  std::unique_ptr<TieredBlobStore> asking = Another(/*known_present_ms=*/0);
  auto digest = blobs_->Put("a model");
  ASSERT_TRUE(digest.ok()) << digest.status();
  ASSERT_TRUE(asking->Has(*digest));
  Sql("DELETE FROM small_blobs");
  EXPECT_TRUE(blobs_->Has(*digest));
  EXPECT_FALSE(asking->Has(*digest));
  v1::Digest wrong_size = *digest;
  wrong_size.set_size_bytes(3);
  EXPECT_FALSE(blobs_->Has(wrong_size)) << "the size is checked against what was seen";
}

// Another replica's blob is known from the use its touch finds recorded, and only as long as no
// retention sweep could delete it: then the database is asked again.
TEST_F(TieredBlobStoreTest, ABlobIsTakenForPresentOnlyWhileRetentionMustKeepIt) {
  constexpr int64_t kKnownMs = 2000;
  std::unique_ptr<TieredBlobStore> replica = Another(kKnownMs);
  auto digest = blobs_->Put("another replica's model");
  ASSERT_TRUE(digest.ok()) << digest.status();
  ASSERT_TRUE(replica->Has(*digest));  // found, its use not yet known: asked again next time
  replica->Touch(*digest);
  Sql("DELETE FROM small_blobs");  // as a sweep elsewhere would, once the use is old enough
  EXPECT_TRUE(replica->Has(*digest));
  std::this_thread::sleep_for(std::chrono::milliseconds(kKnownMs + 500));
  EXPECT_FALSE(replica->Has(*digest));
}

TEST_F(TieredBlobStoreTest, ABlobThisStoresSweepDeletedIsForgottenAtOnce) {
  auto digest = blobs_->Put("an old log");
  ASSERT_TRUE(digest.ok()) << digest.status();
  ASSERT_TRUE(blobs_->Has(*digest));
  auto sweep = blobs_->DeleteUnused([](const std::string&) { return false; }, NowMs() + 1);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  ASSERT_EQ(sweep->blobs, 1);
  EXPECT_FALSE(blobs_->Has(*digest));
  blobs_->Touch(*digest);  // a touch of a blob that is gone finds it gone
  EXPECT_FALSE(blobs_->Has(*digest));
}

TEST(KnownPresentMsTest, HalfTheUnusedPeriodAtMostTenMinutes) {
  EXPECT_EQ(KnownPresentMs(60), 30'000);
  EXPECT_EQ(KnownPresentMs(86400), kMaxKnownPresentMs);
  EXPECT_EQ(KnownPresentMs(0), kMaxKnownPresentMs);  // kept forever here; elsewhere perhaps not
  EXPECT_EQ(kMaxKnownPresentMs, 600'000);
}

}  // namespace
}  // namespace boardlab::server
