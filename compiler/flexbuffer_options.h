#pragma once

// Reading the flexbuffer map a custom operator keeps in Operator.custom_options (written by
// TFLite's converter, read by TFLite Micro's Init functions). Shared by every custom op's option
// parser, so each refuses malformed bytes the same way.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

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

/// How TFLite Micro's signal kernels read an option (FlexbufferWrapper::ElementAsInt32(i) and
/// ElementAsBool(i)): by place, not by key. `kernel_keys` are the keys the kernel was written for;
/// `key`'s place among them in sorted order is the value it reads, the map's value at that place
/// in its own sorted keys, whatever that key is called: another key sorting before moves it. The
/// value must be an integer (or bool) stored in place, the bytes the wrapper reads; `*out` gets
/// them as a signed integer cut to 32 bits. InvalidArgument saying which place held what.
absl::Status FlexbufferIntByPlace(const flexbuffers::Map& map,
                                  const std::vector<const char*>& kernel_keys, const char* key,
                                  int32_t* out);

/// Each of `kernel_keys` required by name (FlexbufferNumber), its value then taken from its place
/// (FlexbufferIntByPlace) into the `fields` entry of the same index.
absl::Status FlexbufferIntsByPlace(const flexbuffers::Map& map,
                                   const std::vector<const char*>& kernel_keys,
                                   const std::vector<int32_t*>& fields);

}  // namespace boardlab::compiler
