#pragma once

// `boardlab submit MODEL ...`: hash the model, inputs and expected outputs, upload only the blobs
// the artifact store lacks, submit the job under a request id (so that a submit retried after a
// network error returns the first job instead of a second one), and optionally watch it.
//
// Usage:
//   ASSIGN_OR_RETURN(PreparedSubmit prepared, PrepareSubmit(args));   // local files only
//   RETURN_IF_ERROR(UploadMissingBlobs(blobs, prepared.blobs, RetryPolicy{}, std::cerr));
//   ASSIGN_OR_RETURN(v1::SubmitJobResponse response,
//                    SubmitWithRetry(connection, prepared.request, RetryPolicy{}));

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "cli/connection.h"
#include "cli/watch.h"
#include "proto/support/blob_client.h"
#include "runtime/cli/budget_checks.h"

namespace boardlab::cli {

struct SubmitArgs {
  std::string model;  // .tflite path
  std::string target = "imxrt700";
  std::string board_type;             // "" = the target's default
  std::string board_id;               // pin one board
  std::vector<std::string> inputs;    // FILE or random:SEED, in input order
  std::vector<std::string> expected;  // FILE per output, in output order; with inputs_dir: the
                                      // one directory of the cases' expected outputs
  std::string inputs_dir;             // --inputs DIR: many cases (runtime/cli/run_cases.h)
  std::string cases_manifest;         // --cases FILE: many cases listed in a manifest
  bool expect_reference = false;
  int atol = 0;
  int iterations = 0;  // 0 = the server's default (1)
  int priority = 0;
  std::vector<std::string> tags;    // KEY=VALUE: the board must carry them
  std::vector<std::string> labels;  // KEY=VALUE: on the job, for `boardlab jobs --label`
  bool cpu_only = false;
  int queue_timeout_seconds = 0;  // 0 = server default
  int timeout_seconds = 0;        // per board attempt; 0 = server default
  std::string request_id;         // "" = a fresh random one
  run::BudgetLimits budgets;      // --max-latency-us, --max-sram, --max-flash, --min-npu-macs
  bool wait = false;
  ReportOptions report;  // --out, --json
};

/// A local file to be made available in the artifact store.
struct LocalBlob {
  std::string what;  // "model 'kws.tflite'", for messages
  std::string bytes;
  v1::Digest digest;
  bool case_file = false;  // an input or expected output of a case: reported all in one line
};

struct PreparedSubmit {
  std::vector<LocalBlob> blobs;  // model first, then inputs, then expected outputs
  v1::SubmitJobRequest request;  // refers to the blobs by digest; request_id is set
};

/// Reads and hashes the local files and builds the request, without any network call. The case
/// files of --inputs / --cases are checked against the model's tensors (run_cases.h).
/// Errors: InvalidArgument for unreadable files, malformed --input/--tag/--label values and
/// case files that do not fit the model (missing, extra, of the wrong size).
absl::StatusOr<PreparedSubmit> PrepareSubmit(const SubmitArgs& args);

/// Asks the store which of `blobs` it lacks (one FindMissing call) and uploads those, each
/// digest once, reporting each upload on `progress`. Calls failing with UNAVAILABLE are retried
/// under `policy` (both calls are idempotent: the store is content-addressed).
absl::Status UploadMissingBlobs(api::BlobClient& client, const std::vector<LocalBlob>& blobs,
                                const RetryPolicy& policy, std::ostream& progress);

/// SubmitJob, retried on UNAVAILABLE with the same request id under `policy`.
absl::StatusOr<v1::SubmitJobResponse> SubmitWithRetry(const Connection& connection,
                                                      const v1::SubmitJobRequest& request,
                                                      const RetryPolicy& policy);

/// The whole command; returns the exit code (docs/client.md).
int RunSubmit(const Connection& connection, const SubmitArgs& args,
              const RetryPolicy& retry = RetryPolicy{}, const WatchOptions& watch = WatchOptions{});

}  // namespace boardlab::cli
