#pragma once

// Parsing of the argument values `boardlab` takes beyond what CLI11 checks: K=V tags, inputs
// (FILE or random:SEED), job state names, digests; and fresh request ids.

#include <cstdint>
#include <string>
#include <variant>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::cli {

/// "key=value" -> Tag. The key must be non-empty; the value may be empty ("k=").
/// Errors: InvalidArgument naming `option` ("--tag 'x': expected KEY=VALUE").
absl::StatusOr<v1::Tag> ParseKeyValue(absl::string_view text, absl::string_view option);

/// An --input value: a file path, or random:SEED with SEED a decimal uint64.
struct RandomInput {
  uint64_t seed = 0;
};
using InputArgument = std::variant<std::string, RandomInput>;

/// Errors: InvalidArgument for "random:" followed by anything but a decimal uint64.
absl::StatusOr<InputArgument> ParseInputArgument(absl::string_view text);

/// "queued", "QUEUED" or "JOB_STATE_QUEUED" -> JOB_STATE_QUEUED. Errors: InvalidArgument listing
/// the names.
absl::StatusOr<v1::JobState> ParseJobState(absl::string_view text);

/// "HEX" or "HEX:SIZE" (as the client and server print digests) -> Digest; size 0 = unknown.
/// Errors: InvalidArgument unless HEX is 64 lowercase hex characters and SIZE a number.
absl::StatusOr<v1::Digest> ParseDigest(absl::string_view text);

/// A random RFC 4122 version-4 UUID string, e.g. "1b4e28ba-2fa1-4d2e-883f-0016d3cca427".
std::string NewRequestId();

}  // namespace boardlab::cli
