#pragma once

// The small commands of `boardlab`: one unary call each, a table or JSON on stdout, an exit code
// (docs/client.md). submit and watch live in submit.h and watch.h.

#include <string>
#include <vector>

#include "cli/connection.h"

namespace boardlab::cli {

/// `boardlab status JOB`: 0 while the job runs; the verdict's exit code once it is done.
int RunStatus(const Connection& connection, const std::string& job_id, bool json);

/// `boardlab cancel JOB`: prints the job's state after the cancel request.
int RunCancel(const Connection& connection, const std::string& job_id);

struct JobsArgs {
  std::vector<std::string> states;  // names, see ParseJobState; empty = any
  std::string board_type;
  std::vector<std::string> labels;  // KEY=VALUE, all must match
  int limit = 50;                   // jobs to show, newest first
  bool json = false;
};

/// `boardlab jobs`: follows ListJobs pages until `limit` jobs are shown.
int RunJobs(const Connection& connection, const JobsArgs& args);

/// `boardlab boards [--type T]`.
int RunBoards(const Connection& connection, const std::string& board_type, bool json);

/// `boardlab board reserve BOARD [--ttl S] [--lease ID]`: prints the lease id.
int RunReserve(const Connection& connection, const std::string& board_id, int ttl_seconds,
               const std::string& lease_id, bool json);

/// `boardlab board release BOARD --lease ID`.
int RunRelease(const Connection& connection, const std::string& board_id,
               const std::string& lease_id, bool json);

/// `boardlab board maintenance BOARD on|off [--reason R]`.
int RunMaintenance(const Connection& connection, const std::string& board_id, bool on,
                   const std::string& reason, bool json);

/// `boardlab artifact get DIGEST [-o FILE]`: writes the blob to FILE, or to stdout.
int RunArtifactGet(const Connection& connection, const std::string& digest,
                   const std::string& output);

/// `boardlab health [--service NAME]`: asks the server's gRPC health service; prints the answer.
/// 0 when it is SERVING; 5 when it is not, does not answer within 3 s or cannot be reached; 2
/// when the call is refused (a service the server does not know: NOT_FOUND).
int RunHealth(const Connection& connection, const std::string& service);

}  // namespace boardlab::cli
