#pragma once

// The bytes of one boardlab-run input from its spec, for every board: FILE.bin (the tensor's raw
// bytes) or random:SEED (runtime/core/random_bytes.h).
//
//   std::vector<uint8_t> bytes;
//   std::string error;
//   if (!ReadInputSpec("random:3", 0, 490, "int8[1,49,10,1]", &bytes, &error)) ...  // usage error

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace boardlab::run {

/// Fills `out` with input `index`'s `size` bytes from `spec`. False, with `error` saying why, when
/// the seed is not a number, the file cannot be read or its size is not `size`. `tensor`
/// describes the tensor in that message (e.g. "int8[1,49,10,1]"; may be empty).
bool ReadInputSpec(const std::string& spec, size_t index, size_t size, const std::string& tensor,
                   std::vector<uint8_t>* out, std::string* error);

}  // namespace boardlab::run
