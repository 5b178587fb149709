// server/retention.h: finished jobs expire with their events; blobs go once no kept job refers
// to them and they went unused for the grace period; pinned and recently used blobs stay.

#include "server/retention.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "server/clock.h"
#include "server/sqlite_store.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("retention_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    OpenStores();
  }
  void TearDown() override {
    blobs_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void OpenStores() {
    blobs_.reset();
    store_.reset();
    auto store = SqliteStore::Open((dir_ / "boardlab.db").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto files = FileBlobStore::Open((dir_ / "blobs").string());
    ASSERT_TRUE(files.ok()) << files.status();
    blobs_ = std::make_unique<TieredBlobStore>(*std::move(files), *store_);
  }

  v1::Digest Put(const std::string& bytes) {
    auto digest = blobs_->Put(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    return digest.value_or(v1::Digest());
  }
  // A job numbered `number` over `model`, submitted at `submit_ms`; DONE at `end_ms` unless 0.
  v1::Job StoreJob(int64_t number, const v1::Digest& model, int64_t submit_ms, int64_t end_ms) {
    v1::Job job;
    job.set_id("job-" + std::to_string(number));
    job.set_tenant("default");
    *job.mutable_spec()->mutable_model() = model;
    job.set_submit_time_ms(submit_ms);
    job.set_state(end_ms > 0 ? v1::JOB_STATE_DONE : v1::JOB_STATE_QUEUED);
    job.set_end_time_ms(end_ms);
    StoreBatch batch;
    batch.jobs[number] = job;
    v1::JobEvent event;
    event.set_job_id(job.id());
    event.set_seq(1);
    batch.events.push_back(event);
    EXPECT_TRUE(store_->Commit(batch).ok());
    return job;
  }
  bool JobExists(const std::string& id) {
    auto job = store_->GetJob(id);
    return job.ok() && job->has_value();
  }
  size_t EventCount(const std::string& id) {
    auto events = store_->Events(id, 0);
    return events.ok() ? events->size() : 0;
  }
  // Sets a blob file's modification time `age_ms` into the past.
  void AgeFile(const v1::Digest& digest, int64_t age_ms) {
    auto path = blobs_->PathOf(digest);
    ASSERT_TRUE(path.ok()) << path.status();
    const int64_t then_ms = NowMs() - age_ms;
    timespec times[2] = {{then_ms / 1000, 0}, {then_ms / 1000, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path->c_str(), times, 0), 0);
  }

  fs::path dir_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<TieredBlobStore> blobs_;
  Metrics metrics_;
};

TEST_F(RetentionTest, ExpiredJobsGoAndTakeTheBlobsOnlyTheyReferTo) {
  const int64_t now = NowMs();
  const v1::Digest old_model = Put("the model of a job finished ten days ago");
  const v1::Digest new_model = Put("the model of a job finished today");
  const v1::Digest queued_model = Put("the model of a job queued ten days ago");
  const v1::Digest pinned = Put("the health check's golden model");
  const v1::Digest orphan = Put("uploaded, never submitted");
  const v1::Digest large_orphan = Put(std::string(TieredBlobStore::kSmallBlobBytes + 1, 'o'));
  const v1::Digest large_output = Put(std::string(TieredBlobStore::kSmallBlobBytes + 1, 'p'));
  StoreJob(1, old_model, now - 10 * kDayMs, now - 10 * kDayMs);
  v1::Job kept = StoreJob(2, new_model, now - kHourMs, now - kHourMs);
  *kept.mutable_files()->add_outputs() = large_output;
  ASSERT_TRUE(store_->PutJob(2, kept).ok());
  StoreJob(3, queued_model, now - 10 * kDayMs, 0);
  AgeFile(large_orphan, 2 * kHourMs);
  AgeFile(large_output, 2 * kHourMs);
  const int64_t bytes_before = blobs_->TotalBytes();

  Retention retention({.finished_jobs_seconds = 86400, .unused_blobs_seconds = 3600}, *store_,
                      *blobs_, metrics_);
  retention.Pin(pinned);
  // Two hours from now: every small blob was last used more than the hour of grace ago.
  auto sweep = retention.Sweep(now + 2 * kHourMs);
  ASSERT_TRUE(sweep.ok()) << sweep.status();

  EXPECT_EQ(sweep->jobs, 1);
  EXPECT_FALSE(JobExists("job-1"));
  EXPECT_EQ(EventCount("job-1"), 0u);
  EXPECT_TRUE(JobExists("job-2"));
  EXPECT_EQ(EventCount("job-2"), 1u);
  EXPECT_TRUE(JobExists("job-3")) << "an unfinished job expired";
  EXPECT_EQ(sweep->blobs.blobs, 3);  // the old job's model and both orphans
  EXPECT_FALSE(blobs_->Has(old_model));
  EXPECT_FALSE(blobs_->Has(orphan));
  EXPECT_FALSE(blobs_->Has(large_orphan));
  EXPECT_TRUE(blobs_->Has(new_model));
  EXPECT_TRUE(blobs_->Has(queued_model));
  EXPECT_TRUE(blobs_->Has(pinned));
  EXPECT_TRUE(blobs_->Has(large_output));
  EXPECT_EQ(sweep->blobs.bytes,
            old_model.size_bytes() + orphan.size_bytes() + large_orphan.size_bytes());
  EXPECT_EQ(blobs_->TotalBytes(), bytes_before - sweep->blobs.bytes);
}

TEST_F(RetentionTest, BlobsUsedWithinTheGracePeriodStay) {
  const v1::Digest fresh = Put("uploaded a moment ago");
  const v1::Digest large = Put(std::string(TieredBlobStore::kSmallBlobBytes + 1, 'l'));
  const v1::Digest large_touched = Put(std::string(TieredBlobStore::kSmallBlobBytes + 1, 't'));
  AgeFile(large, 2 * kHourMs);
  AgeFile(large_touched, 2 * kHourMs);
  blobs_->Touch(large_touched);  // found by a client's FindMissing, say
  Retention retention({.finished_jobs_seconds = 86400, .unused_blobs_seconds = 3600}, *store_,
                      *blobs_, metrics_);
  auto sweep = retention.Sweep(NowMs());
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_TRUE(blobs_->Has(fresh));
  EXPECT_TRUE(blobs_->Has(large_touched));
  EXPECT_FALSE(blobs_->Has(large));
  EXPECT_EQ(sweep->blobs.blobs, 1);
}

TEST_F(RetentionTest, ATouchedSmallBlobCountsAsUsedThen) {
  const int64_t now = NowMs();
  const v1::Digest digest = Put("a model found by FindMissing");
  ASSERT_TRUE(store_->TouchBlob(digest.sha256(), now + 3 * kHourMs).ok());
  Retention retention({.finished_jobs_seconds = 0, .unused_blobs_seconds = 3600}, *store_, *blobs_,
                      metrics_);
  ASSERT_TRUE(retention.Sweep(now + 3 * kHourMs + kHourMs / 2).ok());
  EXPECT_TRUE(blobs_->Has(digest));
  ASSERT_TRUE(retention.Sweep(now + 5 * kHourMs).ok());
  EXPECT_FALSE(blobs_->Has(digest));
}

TEST_F(RetentionTest, ZeroKeepsEverythingForever) {
  const int64_t now = NowMs();
  const v1::Digest model = Put("a model");
  StoreJob(1, model, now - 400 * kDayMs, now - 400 * kDayMs);
  Put("an orphan");
  Retention retention({.finished_jobs_seconds = 0, .unused_blobs_seconds = 0}, *store_, *blobs_,
                      metrics_);
  auto sweep = retention.Sweep(now + 400 * kDayMs);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->jobs, 0);
  EXPECT_EQ(sweep->blobs.blobs, 0);
  EXPECT_TRUE(JobExists("job-1"));
}

TEST_F(RetentionTest, DeletesExpiredJobsPastOnePageAndStopsAtTheCutoff) {
  const int64_t now = NowMs();
  StoreBatch batch;
  for (int64_t n = 1; n <= 1200; ++n) {
    v1::Job job;
    job.set_id("job-" + std::to_string(n));
    job.set_state(v1::JOB_STATE_DONE);
    const bool expired = n <= 1100;
    job.set_submit_time_ms(expired ? now - 3 * kDayMs : now);
    job.set_end_time_ms(expired ? now - 3 * kDayMs : now);
    batch.jobs[n] = job;
  }
  // An old job that finished only recently (a long queue) stays.
  batch.jobs[50].set_end_time_ms(now);
  ASSERT_TRUE(store_->Commit(batch).ok());
  auto deleted = store_->DeleteFinishedJobs(now - kDayMs);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 1099);
  EXPECT_TRUE(JobExists("job-50"));
  EXPECT_FALSE(JobExists("job-1100"));
  EXPECT_TRUE(JobExists("job-1101"));
}

TEST(CollectDigestsTest, FindsEveryDigestAtAnyDepth) {
  v1::Job job;
  job.mutable_spec()->mutable_model()->set_sha256("model");
  job.mutable_spec()->mutable_run()->add_inputs()->mutable_blob()->set_sha256("input");
  job.mutable_spec()->mutable_run()->add_expected()->set_sha256("expected");
  job.mutable_files()->add_outputs()->set_sha256("output0");
  job.mutable_files()->add_outputs()->set_sha256("output1");
  job.mutable_files()->mutable_etdump()->set_sha256("etdump");
  absl::flat_hash_set<std::string> digests;
  CollectDigests(job, digests);
  EXPECT_EQ(digests, (absl::flat_hash_set<std::string>{"model", "input", "expected", "output0",
                                                       "output1", "etdump"}));
}

// A database written before retention existed: its small blobs get a "last used" of the upgrade
// (a full grace period), not of 1970.
TEST_F(RetentionTest, AnOlderDatabaseIsMigratedWithItsBlobsDatedNow) {
  blobs_.reset();
  store_.reset();
  fs::remove(dir_ / "boardlab.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "boardlab.db").c_str(), &db), SQLITE_OK);
  const std::string old_schema =
      "CREATE TABLE small_blobs (sha256 TEXT PRIMARY KEY, data BLOB NOT NULL);"
      "INSERT INTO small_blobs VALUES ('" +
      api::Sha256Hex(std::string("old")) + "', 'old');";
  ASSERT_EQ(sqlite3_exec(db, old_schema.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  OpenStores();
  const v1::Digest digest = api::DigestOf(std::string("old"));
  ASSERT_TRUE(blobs_->Has(digest));
  Retention retention({.finished_jobs_seconds = 0, .unused_blobs_seconds = 3600}, *store_, *blobs_,
                      metrics_);
  ASSERT_TRUE(retention.Sweep(NowMs()).ok());
  EXPECT_TRUE(blobs_->Has(digest));
  ASSERT_TRUE(retention.Sweep(NowMs() + 2 * kHourMs).ok());
  EXPECT_FALSE(blobs_->Has(digest));
}

}  // namespace
}  // namespace boardlab::server
