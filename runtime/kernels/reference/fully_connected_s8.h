#pragma once

// FULLY_CONNECTED int8, bit-exact with TFLite Micro's reference FullyConnected (per-tensor) and
// FullyConnectedPerChannel:
//   acc = bias[u] + sum_k weights[u,k] * (input[b,k] + input_offset)   (weight zero point 0)
//   out[b,u] = clamp(MultiplyByQuantizedMultiplier(acc, mult[u or 0], shift[u or 0]) + offset)
//
// Layouts: input [batches, depth] (any shape flattened that way), weights [units, depth],
// bias [units] int32 or null, output [batches, units].

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct FullyConnectedParams {
  int32_t input_offset = 0;  // -input zero point
  OutputStage out;
};

[[nodiscard]] Error fully_connected_s8(const FullyConnectedParams& params,
                                       const ChannelQuant& quant, int32_t batches, int32_t depth,
                                       int32_t units, const int8_t* input, const int8_t* weights,
                                       const int32_t* bias, int8_t* output);

/// The same with scratch for the fast path: with `scratch` (2-byte aligned) of at least
/// fully_connected_s8_get_buffer_size(depth) bytes, each input row is widened once (int16, input
/// offset added) and dotted with 4 weight rows per pass. Without it the plain loop runs.
[[nodiscard]] Error fully_connected_s8(const FullyConnectedParams& params,
                                       const ChannelQuant& quant, int32_t batches, int32_t depth,
                                       int32_t units, const int8_t* input, const int8_t* weights,
                                       const int32_t* bias, int8_t* output, void* scratch,
                                       size_t scratch_bytes);

/// Scratch bytes of the fast path: one int16 per input element of a row.
size_t fully_connected_s8_get_buffer_size(int32_t depth);

}  // namespace boardlab::runtime::kernels
