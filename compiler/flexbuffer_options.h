#pragma once

// Reading the flexbuffer map a custom operator keeps in Operator.custom_options (written by
// TFLite's converter, read by TFLite Micro's Init functions). Shared by every custom op's option
// parser, so each refuses malformed bytes the same way.

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flatbuffers/flexbuffers.h"

namespace boardlab::compiler {

/// InvalidArgument "custom options: <what>".
absl::Status BadCustomOptions(const std::string& what);

/// The root map of `options` once the bytes pass flexbuffers' verifier (its readers trust every
/// offset). InvalidArgument when `options` is empty, not a flexbuffer, or its root is no map.
/// The map points into `options`, which must outlive it.
absl::StatusOr<flexbuffers::Map> VerifiedFlexbufferMap(std::span<const uint8_t> options);

/// The numeric (or bool) value of `key` in `*out`; a null reference when the key is absent and
/// not `required`. InvalidArgument naming the key when it is required and absent or not numeric.
absl::Status FlexbufferNumber(const flexbuffers::Map& map, const char* key, bool required,
                              flexbuffers::Reference* out);

/// FlexbufferNumber read as flexbuffers' AsInt32 does; `*out` is kept when the key is absent and
/// not `required`.
absl::Status FlexbufferInt(const flexbuffers::Map& map, const char* key, bool required,
                           int32_t* out);

}  // namespace boardlab::compiler
