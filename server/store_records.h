#pragma once

// What every Store implementation encodes the same way: protobuf records, compile records as
// JSON, the job filters applied after the query, and the retention page size. Shared so that a
// field added to a record reaches every store at once.

#include <string>

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

/// The parts of `filter` the stores check on the parsed job (states and labels); tenant and
/// board type are columns the query filters on.
bool MatchesStateAndLabels(const v1::Job& job, const JobFilter& filter);

}  // namespace boardlab::server
