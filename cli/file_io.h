#pragma once

// Whole-file reads and writes for the client (models, inputs, downloaded job files).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace boardlab::cli {

/// The bytes of `path`. Errors: InvalidArgument "cannot read <what> '<path>': <reason>" (a bad
/// local file is the user's to fix).
absl::StatusOr<std::string> ReadFileBytes(const std::string& path, absl::string_view what);

/// Writes `bytes` to `path`, replacing it. Errors: Internal "cannot write '<path>': <reason>".
absl::Status WriteFileBytes(const std::string& path, std::string_view bytes);

}  // namespace boardlab::cli
