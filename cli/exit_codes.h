#pragma once

// The exit codes of `boardlab` and the one place that turns errors into them (docs/client.md,
// docs/error_handling.md). CI jobs branch on these numbers, so they never change meaning.

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::cli {

inline constexpr int kExitPass = 0;          // the job passed; other commands: success
inline constexpr int kExitFail = 1;          // outputs differ, a budget or a diff gate failed
inline constexpr int kExitUsage = 2;         // bad arguments, bad local files, a rejected request,
                                             // INVALID_REQUEST (the request does not fit the model)
inline constexpr int kExitCompileError = 3;  // the compiler rejected the model
inline constexpr int kExitRunError = 4;      // the artifact failed on the board
inline constexpr int kExitInfra = 5;  // infrastructure error, queue timeout, server unreachable
inline constexpr int kExitCancelled = 6;

/// The exit code of a finished job's verdict. JOB_RESULT_UNSPECIFIED (a server that sent no
/// verdict) counts as an infrastructure error.
int ExitCodeForResult(v1::JobResult result);

/// The exit code of a failed call or a local error: INVALID_ARGUMENT, NOT_FOUND,
/// FAILED_PRECONDITION, ALREADY_EXISTS, OUT_OF_RANGE, UNAUTHENTICATED, PERMISSION_DENIED and
/// RESOURCE_EXHAUSTED are the caller's to fix (2); CANCELLED is 6; everything else (UNAVAILABLE,
/// DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, DATA_LOSS, ...) is the service's (5). OK maps to 0.
int ExitCodeForStatus(const absl::Status& status);

/// "PASS", "FAIL", "COMPILE_ERROR", "RUN_ERROR", "INFRA_ERROR", "CANCELLED", "QUEUE_TIMEOUT",
/// "INVALID_REQUEST" or "UNKNOWN".
std::string VerdictName(v1::JobResult result);

/// What the user can do about an error of this code, e.g. for UNAVAILABLE "check that the server
/// runs at <server> (--server or BOARDLAB_SERVER)"; "" when there is nothing general to say.
std::string HintFor(absl::StatusCode code, absl::string_view server);

/// Prints "boardlab: <message>" as one line on stderr and returns `code`.
int Fail(int code, absl::string_view message);

/// Prints "boardlab: <doing>: <status message>[; <hint>]" on stderr and returns
/// ExitCodeForStatus(status). `doing` says what failed, e.g. "submitting the job".
int FailWithStatus(const absl::Status& status, absl::string_view doing, absl::string_view server);

}  // namespace boardlab::cli
