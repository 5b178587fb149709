#pragma once

// What every Store implementation encodes the same way: protobuf records, compile records as
// JSON, the job filters applied after the query, and the retention page size. Shared so that a
// field added to a record reaches every store at once.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/store.h"

namespace boardlab::server {

/// Jobs are scanned and deleted this many at a time by DeleteFinishedJobs, so that the Lab's
/// writes are held up for one page at most.
inline constexpr int kRetentionPageJobs = 500;

/// A stored protobuf record; DataLoss naming `what` when the bytes do not parse.
template <typename Message>
absl::StatusOr<Message> ParseRecord(const std::string& bytes, const char* what) {
  Message message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat("the database holds a corrupt ", what, " record"));
  }
  return message;
}

/// The JSON text a compile record is stored as.
std::string CompileRecordToJson(const CompileRecord& record);
/// Errors: DataLoss when `json` is not JSON.
absl::StatusOr<CompileRecord> CompileRecordFromJson(const std::string& json);

/// The writes of a StoreBatch, as a store makes them under its mutex and inside its transaction.
class BatchWriter {
 public:
  virtual ~BatchWriter() = default;
  virtual absl::Status PutJobLocked(int64_t number, const v1::Job& job) = 0;
  virtual absl::Status AppendEventLocked(const v1::JobEvent& event) = 0;
  virtual absl::Status PutBoardLocked(const v1::Board& board) = 0;
  virtual absl::Status GrantBlobLocked(const std::string& tenant, const std::string& sha256) = 0;
};

/// Writes `batch` in the order every store keeps (jobs, events, boards, blob grants); stops at
/// the first error, which the caller's rollback undoes.
absl::Status WriteBatch(const StoreBatch& batch, BatchWriter& writer);

/// One page of DeleteFinishedJobs: the finished jobs a store scanned in job-number order, at
/// most kRetentionPageJobs of them, and which of them ended before the cutoff.
class RetentionPage {
 public:
  RetentionPage(int64_t ended_before_ms, int64_t after)
      : ended_before_ms_(ended_before_ms), after_(after) {}

  /// Takes the next row (job number and record). False when the scan can stop: the job was
  /// submitted after the cutoff, and numbers follow submit times, so no later job ended before
  /// it. Errors: DataLoss for a record that does not parse.
  absl::StatusOr<bool> Scan(int64_t number, const std::string& record);

  /// The last job number scanned: where the next page starts.
  int64_t after() const { return after_; }
  /// Whether another page may hold expired jobs.
  bool more() const { return !past_cutoff_ && rows_ == kRetentionPageJobs; }
  /// The ids of the scanned jobs that ended before the cutoff.
  const std::vector<std::string>& expired() const { return expired_; }

 private:
  int64_t ended_before_ms_;
  int64_t after_;
  int rows_ = 0;
  bool past_cutoff_ = false;
  std::vector<std::string> expired_;
};

/// DeleteFinishedJobs over pages: `delete_page(after)` scans and deletes one page from job
/// number `after` (each page its own lock and transaction) and returns it; the jobs deleted in
/// all.
absl::StatusOr<int64_t> DeleteInPages(
    const std::function<absl::StatusOr<RetentionPage>(int64_t after)>& delete_page);

/// The parts of `filter` the stores check on the parsed job (states, results and labels); tenant
/// and board type are columns the query filters on.
bool MatchesParsedFilter(const v1::Job& job, const JobFilter& filter);

}  // namespace boardlab::server
