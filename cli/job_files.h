#pragma once

// `boardlab --out DIR`: the files a finished job leaves in the artifact store, under the names
// of proto/support/job_files.h, and job.json, the final job record itself; and, drawn here from
// the ETDump and the debug map, the run's timeline as trace.json (Chrome trace) and timeline.svg
// (runtime/cli/timeline.h).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"
#include "proto/support/blob_client.h"
#include "proto/support/job_files.h"

namespace boardlab::cli {

using api::JobFile;
using api::ListJobFiles;

/// Creates `dir` when needed and downloads every file of ListJobFiles into it, then writes
/// job.json. Errors: those of BlobClient::Get (NotFound, DataLoss, UNAVAILABLE, ...) and
/// Internal when a file cannot be written; each names the file.
absl::Status DownloadJobFiles(api::BlobClient& blobs, const v1::Job& job, const std::string& dir);

/// Draws trace.json and timeline.svg in `dir` from the etdump.etdp and debug_map.json that
/// DownloadJobFiles wrote there (named without a debug map when the job has none). Returns the
/// number of files written: 0 for a job without an ETDump (it never ran), else 2. Errors:
/// InvalidArgument when the ETDump holds no complete run, Internal when a file cannot be written;
/// the job's own files stay as they are.
absl::StatusOr<int> WriteJobTimeline(const v1::Job& job, const std::string& dir);

}  // namespace boardlab::cli
