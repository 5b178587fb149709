// The Store interface (server/store.h), one suite for every implementation: each test runs
// against SQLite and against PostgreSQL (tests/store/store_backends.h), so both stores keep the
// same behaviour. PostgreSQL tests skip with the reason where PostgreSQL is not installed.

#include <algorithm>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "server/blob_store.h"
#include "server/clock.h"
#include "server/store.h"
#include "server/store_records.h"
#include "tests/store/store_backends.h"

namespace boardlab::server {
namespace {

class StoreConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = MakeStoreBackend(GetParam());
    if (std::string why_not = backend_->SkipReason(); !why_not.empty()) GTEST_SKIP() << why_not;
    absl::Status prepared = backend_->PrepareEmptyDatabase();
    ASSERT_TRUE(prepared.ok()) << prepared;
    Reopen();
  }

  // Closes the store and opens the database again, as a restarted server does.
  void Reopen() {
    store_.reset();
    auto store = backend_->Open();
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  static v1::Job Job(int64_t number, v1::JobState state = v1::JOB_STATE_QUEUED,
                     const std::string& tenant = "ci", const std::string& board_type = "sim") {
    v1::Job job;
    job.set_id("j" + std::to_string(number));
    job.set_tenant(tenant);
    job.set_state(state);
    job.set_submit_time_ms(1000 * number);
    job.mutable_spec()->mutable_selector()->set_board_type(board_type);
    return job;
  }

  static v1::JobEvent Event(const std::string& job_id, int64_t seq, const std::string& detail) {
    v1::JobEvent event;
    event.set_job_id(job_id);
    event.set_seq(seq);
    event.set_log(detail);
    return event;
  }

  static std::vector<std::string> Ids(const std::vector<v1::Job>& jobs) {
    std::vector<std::string> ids;
    for (const v1::Job& job : jobs) ids.push_back(job.id());
    return ids;
  }

  void PutJobs(const std::vector<v1::Job>& jobs) {
    StoreBatch batch;
    for (const v1::Job& job : jobs) batch.jobs[std::stoll(job.id().substr(1))] = job;
    ASSERT_TRUE(store_->Commit(batch).ok());
  }

  std::unique_ptr<StoreBackend> backend_;
  StorePtr store_;
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreConformanceTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(StoreConformanceTest, AJobIsReadBackAsStoredAndReplacedByItsNumber) {
  EXPECT_FALSE(store_->GetJob("j1")->has_value());
  EXPECT_EQ(*store_->MaxJobNumber(), 0);
  v1::Job job = Job(1);
  job.mutable_spec()->add_labels()->set_key("team");
  ASSERT_TRUE(store_->PutJob(1, job).ok());
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_attempt(2);
  ASSERT_TRUE(store_->PutJob(1, job).ok());
  auto read = store_->GetJob("j1");
  ASSERT_TRUE(read.ok() && read->has_value()) << read.status();
  EXPECT_EQ((*read)->SerializeAsString(), job.SerializeAsString());
  ASSERT_TRUE(store_->PutJob(7, Job(7)).ok());
  EXPECT_EQ(*store_->MaxJobNumber(), 7);
}

TEST_P(StoreConformanceTest, AJobIdIsUniqueAcrossNumbers) {
  ASSERT_TRUE(store_->PutJob(1, Job(1)).ok());
  v1::Job twin = Job(2);
  twin.set_id("j1");
  EXPECT_FALSE(store_->PutJob(2, twin).ok());
  EXPECT_EQ(*store_->MaxJobNumber(), 1);
}

TEST_P(StoreConformanceTest, RequestIdsAreLookedUpPerTenant) {
  v1::Job ci = Job(1, v1::JOB_STATE_QUEUED, "ci");
  ci.set_request_id("r1");
  v1::Job dev = Job(2, v1::JOB_STATE_QUEUED, "dev");
  dev.set_request_id("r1");
  PutJobs({ci, dev});
  EXPECT_EQ((*store_->FindJobByRequestId("ci", "r1"))->id(), "j1");
  EXPECT_EQ((*store_->FindJobByRequestId("dev", "r1"))->id(), "j2");
  EXPECT_FALSE(store_->FindJobByRequestId("ci", "r2")->has_value());
  EXPECT_FALSE(store_->FindJobByRequestId("ops", "r1")->has_value());
}

// A request id is its client's idempotency key: the store holds one job per tenant and request
// id, whoever writes it (replicas look the id up without a lock between them).
TEST_P(StoreConformanceTest, ASecondJobForATenantsRequestIdIsRefused) {
  v1::Job first = Job(1);
  first.set_request_id("r1");
  ASSERT_TRUE(store_->PutJob(1, first).ok());
  v1::Job second = Job(2);
  second.set_request_id("r1");
  EXPECT_EQ(store_->PutJob(2, second).code(), absl::StatusCode::kAlreadyExists);
  StoreBatch batch;
  batch.jobs[2] = second;
  batch.jobs[3] = Job(3);
  batch.events.push_back(Event("j3", 1, "submitted"));
  EXPECT_EQ(store_->Commit(batch).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(store_->GetJob("j3")->has_value());  // nothing of the batch
  EXPECT_EQ((*store_->FindJobByRequestId("ci", "r1"))->id(), "j1");
  // The job itself is written again; other tenants and jobs without a request id are free.
  first.set_state(v1::JOB_STATE_RUNNING);
  EXPECT_TRUE(store_->PutJob(1, first).ok());
  second.set_tenant("dev");
  EXPECT_TRUE(store_->PutJob(2, second).ok());
  PutJobs({Job(3), Job(4)});
  EXPECT_EQ(store_->LoadUnfinishedJobs()->size(), 4u);
}

// A database of schema version 2, which let two jobs share a tenant's request id (replicas
// racing): migration 3 keeps the oldest job's request id (retries find it) and every record,
// and from then on refuses a second job for a tenant's request id.
TEST_P(StoreConformanceTest, MigrationThreeKeepsTheOldestJobOfARequestId) {
  ASSERT_TRUE(backend_
                  ->Sql("DROP INDEX jobs_by_request_unique; CREATE INDEX jobs_by_request ON "
                        "jobs (tenant, request_id) WHERE request_id <> ''; " +
                        backend_->SchemaVersionSql(2))
                  .ok());
  int64_t number = 0;
  for (const char* tenant : {"ci", "ci", "ci", "dev"}) {
    v1::Job job = Job(++number, v1::JOB_STATE_QUEUED, tenant);
    job.set_request_id("r1");
    ASSERT_TRUE(store_->PutJob(number, job).ok());
  }
  Reopen();
  EXPECT_EQ((*store_->FindJobByRequestId("ci", "r1"))->id(), "j1");
  EXPECT_EQ((*store_->FindJobByRequestId("dev", "r1"))->id(), "j4");
  auto later = store_->GetJob("j3");
  ASSERT_TRUE(later.ok() && later->has_value());
  EXPECT_EQ((*later)->request_id(), "r1");  // the record is as it was
  v1::Job again = Job(5);
  again.set_request_id("r1");
  EXPECT_EQ(store_->PutJob(5, again).code(), absl::StatusCode::kAlreadyExists);
  Reopen();  // opened again, the database stays as migrated
  EXPECT_EQ(store_->PutJob(5, again).code(), absl::StatusCode::kAlreadyExists);
}

// Request ids and board types come from clients: every byte counts, a NUL and case too.
TEST_P(StoreConformanceTest, KeysAreComparedByteForByte) {
  const std::string request_id("r\0x", 3);
  v1::Job job = Job(1, v1::JOB_STATE_QUEUED, "ci", "sim\xc3\xa9");
  job.set_request_id(request_id);
  PutJobs({job, Job(2, v1::JOB_STATE_QUEUED, "ci", "SIM\xc3\xa9")});
  auto found = store_->FindJobByRequestId("ci", request_id);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->request_id(), request_id);
  EXPECT_FALSE(store_->FindJobByRequestId("ci", "r")->has_value());
  JobFilter filter;
  filter.board_type = "sim\xc3\xa9";
  EXPECT_EQ(Ids(store_->ListJobs(filter, 0, 10)->jobs), (std::vector<std::string>{"j1"}));
}

TEST_P(StoreConformanceTest, UnfinishedJobsLoadOldestFirst) {
  PutJobs({Job(3), Job(1, v1::JOB_STATE_RUNNING), Job(2, v1::JOB_STATE_DONE),
           Job(4, v1::JOB_STATE_COMPILING)});
  auto jobs = store_->LoadUnfinishedJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Ids(*jobs), (std::vector<std::string>{"j1", "j3", "j4"}));
}

TEST_P(StoreConformanceTest, JobsListNewestFirstInPages) {
  for (int64_t n = 1; n <= 5; ++n) ASSERT_TRUE(store_->PutJob(n, Job(n)).ok());
  auto first = store_->ListJobs({}, 0, 2);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Ids(first->jobs), (std::vector<std::string>{"j5", "j4"}));
  EXPECT_EQ(first->next_before, 4);
  auto second = store_->ListJobs({}, first->next_before, 2);
  EXPECT_EQ(Ids(second->jobs), (std::vector<std::string>{"j3", "j2"}));
  auto last = store_->ListJobs({}, second->next_before, 2);
  EXPECT_EQ(Ids(last->jobs), (std::vector<std::string>{"j1"}));
  EXPECT_EQ(last->next_before, 0);
  // A page that ends exactly at the last job has no next page.
  EXPECT_EQ(store_->ListJobs({}, 3, 2)->next_before, 0);
}

TEST_P(StoreConformanceTest, JobListsFilterByTenantBoardTypeStateAndLabels) {
  v1::Job labelled = Job(4, v1::JOB_STATE_DONE, "ci", "rt700");
  v1::Tag* tag = labelled.mutable_spec()->add_labels();
  tag->set_key("branch");
  tag->set_value("main");
  PutJobs({Job(1, v1::JOB_STATE_QUEUED, "ci", "sim"), Job(2, v1::JOB_STATE_DONE, "dev", "sim"),
           Job(3, v1::JOB_STATE_DONE, "ci", "sim"), labelled});
  JobFilter by_tenant;
  by_tenant.tenant = "ci";
  EXPECT_EQ(Ids(store_->ListJobs(by_tenant, 0, 10)->jobs),
            (std::vector<std::string>{"j4", "j3", "j1"}));
  JobFilter by_board = by_tenant;
  by_board.board_type = "sim";
  by_board.states = {v1::JOB_STATE_DONE};
  EXPECT_EQ(Ids(store_->ListJobs(by_board, 0, 10)->jobs), (std::vector<std::string>{"j3"}));
  JobFilter by_label;
  by_label.labels.push_back(*tag);
  EXPECT_EQ(Ids(store_->ListJobs(by_label, 0, 10)->jobs), (std::vector<std::string>{"j4"}));
  tag->set_value("other");
  by_label.labels = {*tag};
  EXPECT_TRUE(store_->ListJobs(by_label, 0, 10)->jobs.empty());
  // Paging skips what the filter drops: the next page starts at the next match.
  JobFilter done;
  done.states = {v1::JOB_STATE_DONE};
  auto page = store_->ListJobs(done, 0, 1);
  EXPECT_EQ(Ids(page->jobs), (std::vector<std::string>{"j4"}));
  EXPECT_EQ(page->next_before, 4);
  page = store_->ListJobs(done, page->next_before, 1);
  EXPECT_EQ(Ids(page->jobs), (std::vector<std::string>{"j3"}));
  EXPECT_EQ(page->next_before, 3);
}

TEST_P(StoreConformanceTest, JobListsFilterByVerdictOfFinishedJobs) {
  v1::Job passed = Job(1, v1::JOB_STATE_DONE);
  passed.set_result(v1::JOB_RESULT_PASS);
  v1::Job failed = Job(2, v1::JOB_STATE_DONE);
  failed.set_result(v1::JOB_RESULT_FAIL);
  v1::Job broken = Job(3, v1::JOB_STATE_DONE);
  broken.set_result(v1::JOB_RESULT_INFRA_ERROR);
  PutJobs({passed, failed, broken, Job(4, v1::JOB_STATE_RUNNING)});
  JobFilter failures;
  failures.results = {v1::JOB_RESULT_FAIL, v1::JOB_RESULT_INFRA_ERROR};
  EXPECT_EQ(Ids(store_->ListJobs(failures, 0, 10)->jobs), (std::vector<std::string>{"j3", "j2"}));
  // An unfinished job has no verdict yet, whatever its (default) result field holds.
  JobFilter none;
  none.results = {v1::JOB_RESULT_UNSPECIFIED};
  EXPECT_TRUE(store_->ListJobs(none, 0, 10)->jobs.empty());
}

// "No output yet" is a verdict of its own, kept with the job and its cases' flags whole.
TEST_P(StoreConformanceTest, NoOutputVerdictAndCasesAreKept) {
  v1::Job waiting = Job(1, v1::JOB_STATE_DONE);
  waiting.set_result(v1::JOB_RESULT_NO_OUTPUT);
  v1::CaseResult* early = waiting.add_cases();
  early->set_name("a");
  early->set_no_output(true);
  waiting.mutable_case_summary()->set_no_output(1);
  v1::Job passed = Job(2, v1::JOB_STATE_DONE);
  passed.set_result(v1::JOB_RESULT_PASS);
  PutJobs({waiting, passed});
  JobFilter no_output;
  no_output.results = {v1::JOB_RESULT_NO_OUTPUT};
  auto page = store_->ListJobs(no_output, 0, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(Ids(page->jobs), (std::vector<std::string>{"j1"}));
  EXPECT_EQ(page->jobs[0].result(), v1::JOB_RESULT_NO_OUTPUT);
  ASSERT_EQ(page->jobs[0].cases_size(), 1);
  EXPECT_TRUE(page->jobs[0].cases(0).no_output());
  EXPECT_EQ(page->jobs[0].case_summary().no_output(), 1);
}

TEST_P(StoreConformanceTest, JobsAfterScanInNumberOrder) {
  PutJobs({Job(5), Job(2), Job(9), Job(7)});
  auto jobs = store_->JobsAfter(2, 2);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].first, 5);
  EXPECT_EQ((*jobs)[0].second.id(), "j5");
  EXPECT_EQ((*jobs)[1].first, 7);
  EXPECT_TRUE(store_->JobsAfter(9, 10)->empty());
}

TEST_P(StoreConformanceTest, EventsComeBackInSeqOrderAfterAGivenSeq) {
  StoreBatch batch;
  batch.events = {Event("j1", 2, "b"), Event("j1", 1, "a"), Event("j2", 1, "other job"),
                  Event("j1", 3, "c")};
  ASSERT_TRUE(store_->Commit(batch).ok());
  ASSERT_TRUE(store_->AppendEvent(Event("j1", 3, "c again")).ok());  // same seq replaces
  auto events = store_->Events("j1", 0);
  ASSERT_TRUE(events.ok()) << events.status();
  std::vector<std::string> messages;
  for (const auto& event : *events) messages.push_back(event.log());
  EXPECT_EQ(messages, (std::vector<std::string>{"a", "b", "c again"}));
  EXPECT_EQ(store_->Events("j1", 2)->size(), 1u);
  EXPECT_TRUE(store_->Events("j3", 0)->empty());
}

TEST_P(StoreConformanceTest, FinishedJobsAreDeletedWithTheirEventsAfterTheCutoff) {
  // More jobs than one retention page, so that deletion goes on past the first page.
  const int64_t jobs = kRetentionPageJobs + 20;
  StoreBatch batch;
  for (int64_t n = 1; n <= jobs; ++n) {
    v1::Job job = Job(n, n % 10 == 0 ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_DONE);
    job.set_end_time_ms(job.submit_time_ms() + 500);
    batch.jobs[n] = job;
    batch.events.push_back(Event(job.id(), 1, "submitted"));
  }
  ASSERT_TRUE(store_->Commit(batch).ok());
  // Ended before 1000 * (jobs - 5): every finished job but the last few.
  auto deleted = store_->DeleteFinishedJobs(1000 * (jobs - 5));
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  int64_t expected = 0;
  for (int64_t n = 1; n <= jobs; ++n) {
    const bool expired = n % 10 != 0 && 1000 * n + 500 < 1000 * (jobs - 5);
    expected += expired;
    const std::string id = "j" + std::to_string(n);
    EXPECT_EQ(store_->GetJob(id)->has_value(), !expired) << id;
    EXPECT_EQ(store_->Events(id, 0)->size(), expired ? 0u : 1u) << id;
  }
  EXPECT_EQ(*deleted, expected);
  EXPECT_EQ(*store_->DeleteFinishedJobs(1000 * (jobs - 5)), 0);
}

TEST_P(StoreConformanceTest, BoardsAreReplacedByIdAndLoadInIdOrder) {
  v1::Board board;
  board.set_id("b-2");
  board.set_type("sim");
  ASSERT_TRUE(store_->PutBoard(board).ok());
  board.set_type("rt700");
  ASSERT_TRUE(store_->PutBoard(board).ok());
  StoreBatch batch;
  batch.boards["B-9"].set_id("B-9");  // upper case sorts first in byte order
  batch.boards["b-10"].set_id("b-10");
  ASSERT_TRUE(store_->Commit(batch).ok());
  auto boards = store_->LoadBoards();
  ASSERT_TRUE(boards.ok()) << boards.status();
  ASSERT_EQ(boards->size(), 3u);
  EXPECT_EQ((*boards)[0].id(), "B-9");
  EXPECT_EQ((*boards)[1].id(), "b-10");
  EXPECT_EQ((*boards)[2].id(), "b-2");
  EXPECT_EQ((*boards)[2].type(), "rt700");
}

TEST_P(StoreConformanceTest, CompileRecordsRoundTripAndReplace) {
  EXPECT_FALSE(store_->GetCompile("k")->has_value());
  CompileRecord record;
  record.artifact.set_sha256("a1");
  record.artifact.set_size_bytes(10);
  record.report.set_sha256("r1");
  record.debug_map.set_sha256("d1");
  record.input_bytes = {16, 32};
  record.output_bytes = {10};
  ASSERT_TRUE(store_->PutCompile("k", record).ok());
  record.error = "unsupported op";
  record.error_code = 3;
  ASSERT_TRUE(store_->PutCompile("k", record).ok());
  auto read = store_->GetCompile("k");
  ASSERT_TRUE(read.ok() && read->has_value()) << read.status();
  EXPECT_EQ((*read)->artifact.sha256(), "a1");
  EXPECT_EQ((*read)->artifact.size_bytes(), 10);
  EXPECT_EQ((*read)->report.sha256(), "r1");
  EXPECT_EQ((*read)->debug_map.sha256(), "d1");
  EXPECT_EQ((*read)->input_bytes, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ((*read)->output_bytes, (std::vector<int64_t>{10}));
  EXPECT_EQ((*read)->error, "unsupported op");
  EXPECT_EQ((*read)->error_code, 3);
}

TEST_P(StoreConformanceTest, ACorruptCompileRecordIsDataLoss) {
  ASSERT_TRUE(store_->PutCompile("k", CompileRecord()).ok());
  ASSERT_TRUE(backend_->Sql("UPDATE compile_cache SET record = 'not json'").ok());
  auto read = store_->GetCompile("k");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  // JSON, but not an object (nlohmann's value() would throw on it).
  ASSERT_TRUE(backend_->Sql("UPDATE compile_cache SET record = '[1]'").ok());
  read = store_->GetCompile("k");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
}

TEST_P(StoreConformanceTest, BlobsKeepEveryByteAndTheirSizes) {
  const std::string bytes("\0\x01\xff\x80 zero and high bytes\0", 25);
  EXPECT_FALSE(store_->GetBlob("aa")->has_value());
  EXPECT_EQ(*store_->BlobSize("aa"), -1);
  EXPECT_EQ(*store_->BlobBytes(), 0);
  ASSERT_TRUE(store_->PutBlob("aa", bytes).ok());
  ASSERT_TRUE(store_->PutBlob("bb", "").ok());
  ASSERT_TRUE(store_->PutBlob("aa", bytes).ok());  // again: stored once
  EXPECT_EQ(**store_->GetBlob("aa"), bytes);
  EXPECT_EQ(**store_->GetBlob("bb"), "");
  EXPECT_EQ(*store_->BlobSize("aa"), 25);
  EXPECT_EQ(*store_->BlobSize("bb"), 0);
  EXPECT_EQ(*store_->BlobBytes(), 25);
}

TEST_P(StoreConformanceTest, BlobUseDecidesWhatRetentionMayDelete) {
  const int64_t now = NowMs();
  ASSERT_TRUE(store_->PutBlob("old", "12345").ok());
  ASSERT_TRUE(store_->PutBlob("used", "123").ok());
  const int64_t later = now + 10 * kTouchPrecisionMs;
  // A touch answers with the use it leaves recorded; -1 for a blob that is not stored.
  EXPECT_EQ(*store_->TouchBlob("used", later), later);
  EXPECT_EQ(*store_->TouchBlob("absent", later), -1);
  auto unused = store_->BlobsUnusedSince(now + kTouchPrecisionMs);
  ASSERT_TRUE(unused.ok()) << unused.status();
  EXPECT_EQ(*unused, (std::vector<std::string>{"old"}));
  EXPECT_EQ(*store_->DeleteBlobUnusedSince("used", now + kTouchPrecisionMs), -1);
  EXPECT_EQ(*store_->DeleteBlobUnusedSince("old", now + kTouchPrecisionMs), 5);
  EXPECT_FALSE(store_->GetBlob("old")->has_value());
  EXPECT_EQ(*store_->DeleteBlobUnusedSince("old", now + kTouchPrecisionMs), -1);
  // A touch within the precision of the last one is not written.
  EXPECT_EQ(*store_->TouchBlob("used", later + kTouchPrecisionMs / 2), later);
  EXPECT_EQ(*store_->BlobsUnusedSince(later + 1), (std::vector<std::string>{"used"}));
  EXPECT_EQ(*store_->TouchBlob("used", later + 2 * kTouchPrecisionMs),
            later + 2 * kTouchPrecisionMs);
  EXPECT_TRUE(store_->BlobsUnusedSince(later + 1)->empty());
}

TEST_P(StoreConformanceTest, GrantsAreKeptPerTenantAndForgottenWithTheirBlob) {
  ASSERT_TRUE(store_->GrantBlob("ci", "aa").ok());
  ASSERT_TRUE(store_->GrantBlob("ci", "aa").ok());  // twice is once
  EXPECT_TRUE(*store_->HasBlobGrant("ci", "aa"));
  EXPECT_FALSE(*store_->HasBlobGrant("dev", "aa"));
  StoreBatch batch;
  batch.blob_grants.insert({"dev", "aa"});
  batch.blob_grants.insert({"dev", "bb"});
  ASSERT_TRUE(store_->Commit(batch).ok());
  EXPECT_TRUE(*store_->HasBlobGrant("dev", "aa"));
  ASSERT_TRUE(store_->DeleteBlobGrants({"aa"}).ok());
  EXPECT_FALSE(*store_->HasBlobGrant("ci", "aa"));
  EXPECT_FALSE(*store_->HasBlobGrant("dev", "aa"));
  EXPECT_TRUE(*store_->HasBlobGrant("dev", "bb"));
}

TEST_P(StoreConformanceTest, ABatchIsWrittenWhollyOrNotAtAll) {
  ASSERT_TRUE(store_->PutJob(1, Job(1)).ok());
  StoreBatch batch;
  batch.jobs[2] = Job(2);
  batch.jobs[3] = Job(3);
  batch.jobs[3].set_id("j1");  // taken by job 1: the batch fails after job 2 was written
  batch.events.push_back(Event("j2", 1, "submitted"));
  batch.boards["b"].set_id("b");
  batch.blob_grants.insert({"ci", "aa"});
  EXPECT_FALSE(store_->Commit(batch).ok());
  EXPECT_FALSE(store_->GetJob("j2")->has_value());
  EXPECT_TRUE(store_->Events("j2", 0)->empty());
  EXPECT_TRUE(store_->LoadBoards()->empty());
  EXPECT_FALSE(*store_->HasBlobGrant("ci", "aa"));
  // The store goes on working after the failed batch.
  batch.jobs.erase(3);
  ASSERT_TRUE(store_->Commit(batch).ok());
  EXPECT_TRUE(store_->GetJob("j2")->has_value());
  EXPECT_EQ(store_->Events("j2", 0)->size(), 1u);
  EXPECT_TRUE(*store_->HasBlobGrant("ci", "aa"));
}

TEST_P(StoreConformanceTest, EverythingSurvivesReopening) {
  StoreBatch batch;
  batch.jobs[1] = Job(1, v1::JOB_STATE_RUNNING);
  batch.events.push_back(Event("j1", 1, "submitted"));
  batch.boards["b"].set_id("b");
  batch.blob_grants.insert({"ci", "aa"});
  ASSERT_TRUE(store_->Commit(batch).ok());
  ASSERT_TRUE(store_->PutBlob("aa", "bytes").ok());
  ASSERT_TRUE(store_->PutCompile("k", CompileRecord()).ok());
  Reopen();  // the schema is already current: opening again migrates nothing
  Reopen();
  EXPECT_EQ(store_->LoadUnfinishedJobs()->size(), 1u);
  EXPECT_EQ(store_->Events("j1", 0)->size(), 1u);
  EXPECT_EQ(store_->LoadBoards()->size(), 1u);
  EXPECT_TRUE(*store_->HasBlobGrant("ci", "aa"));
  EXPECT_EQ(**store_->GetBlob("aa"), "bytes");
  EXPECT_TRUE(store_->GetCompile("k")->has_value());
}

TEST_P(StoreConformanceTest, ADatabaseOfANewerServerIsRefused) {
  store_.reset();
  ASSERT_TRUE(backend_->Sql(backend_->SchemaVersionSql(99)).ok());
  auto store = backend_->Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("schema version 99"), std::string::npos)
      << store.status();
}

// The Lab, compile workers, retention and RPC handlers call the store from their own threads.
TEST_P(StoreConformanceTest, ConcurrentWritersLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kJobsEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kJobsEach; ++i) {
        const int64_t number = t * kJobsEach + i + 1;
        StoreBatch batch;
        batch.jobs[number] = Job(number);
        batch.events.push_back(Event("j" + std::to_string(number), 1, "submitted"));
        EXPECT_TRUE(store_->Commit(batch).ok());
        EXPECT_TRUE(store_->GrantBlob("ci", std::to_string(number)).ok());
        EXPECT_TRUE(store_->GetJob("j" + std::to_string(number))->has_value());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(store_->LoadUnfinishedJobs()->size(), size_t{kThreads * kJobsEach});
  EXPECT_EQ(*store_->MaxJobNumber(), kThreads * kJobsEach);
  EXPECT_EQ(store_->Events("j100", 0)->size(), 1u);
}

}  // namespace
}  // namespace boardlab::server
