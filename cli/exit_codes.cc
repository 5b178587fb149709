#include "cli/exit_codes.h"

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace boardlab::cli {

int ExitCodeForResult(v1::JobResult result) {
  switch (result) {
    case v1::JOB_RESULT_PASS:
      return kExitPass;
    // As boardlab-run's "no output yet": the model waits for more input, nothing failed.
    case v1::JOB_RESULT_NO_OUTPUT:
      return kExitPass;
    case v1::JOB_RESULT_FAIL:
      return kExitFail;
    case v1::JOB_RESULT_COMPILE_ERROR:
      return kExitCompileError;
    case v1::JOB_RESULT_RUN_ERROR:
      return kExitRunError;
    case v1::JOB_RESULT_CANCELLED:
      return kExitCancelled;
    // The same code as a submit refused with INVALID_ARGUMENT: the request does not fit the
    // model, whether the server saw it at submit (model in the compile cache) or after compiling.
    case v1::JOB_RESULT_INVALID_REQUEST:
      return kExitUsage;
    default:  // INFRA_ERROR, QUEUE_TIMEOUT, and a verdict this client does not know
      return kExitInfra;
  }
}

int ExitCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitPass;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
    // A blob above the store's size limit or a tenant over its quota: retrying the same request
    // does not help.
    case absl::StatusCode::kResourceExhausted:
      return kExitUsage;
    case absl::StatusCode::kCancelled:
      return kExitCancelled;
    default:
      return kExitInfra;
  }
}

std::string VerdictName(v1::JobResult result) {
  switch (result) {
    case v1::JOB_RESULT_PASS:
      return "PASS";
    case v1::JOB_RESULT_FAIL:
      return "FAIL";
    case v1::JOB_RESULT_COMPILE_ERROR:
      return "COMPILE_ERROR";
    case v1::JOB_RESULT_RUN_ERROR:
      return "RUN_ERROR";
    case v1::JOB_RESULT_INFRA_ERROR:
      return "INFRA_ERROR";
    case v1::JOB_RESULT_CANCELLED:
      return "CANCELLED";
    case v1::JOB_RESULT_QUEUE_TIMEOUT:
      return "QUEUE_TIMEOUT";
    case v1::JOB_RESULT_INVALID_REQUEST:
      return "INVALID_REQUEST";
    case v1::JOB_RESULT_NO_OUTPUT:
      return "NO_OUTPUT";
    default:
      return "UNKNOWN";
  }
}

std::string HintFor(absl::StatusCode code, absl::string_view server) {
  switch (code) {
    case absl::StatusCode::kUnavailable:
      return absl::StrCat("check that boardlab-server runs at ", server,
                          " (--server or BOARDLAB_SERVER) and retry");
    case absl::StatusCode::kDeadlineExceeded:
      return "the server did not answer in time; retry later";
    case absl::StatusCode::kUnauthenticated:
      return "pass a valid token with --token or BOARDLAB_TOKEN";
    case absl::StatusCode::kPermissionDenied:
      return "the token's tenant may not do this; ask a lab admin";
    case absl::StatusCode::kFailedPrecondition:
      return "see `boardlab boards` for the board types and boards the server knows";
    default:
      return "";
  }
}

int Fail(int code, absl::string_view message) {
  std::cerr << "boardlab: " << message << "\n";
  return code;
}

int FailWithStatus(const absl::Status& status, absl::string_view doing, absl::string_view server) {
  std::string message =
      absl::StrCat(doing, ": ",
                   status.message().empty() ? absl::StatusCodeToString(status.code())
                                            : std::string(status.message()));
  const std::string hint = HintFor(status.code(), server);
  // The server's own message may already say what to do ("pass --token or ...").
  const bool says_what_to_do = absl::StrContains(status.message(), "--token") ||
                               absl::StrContains(status.message(), "boardlab boards");
  if (!hint.empty() && !says_what_to_do) absl::StrAppend(&message, "; ", hint);
  return Fail(ExitCodeForStatus(status), message);
}

}  // namespace boardlab::cli
