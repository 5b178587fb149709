#pragma once

// SVDF with int8 input and output, bit-exact with TFLite Micro's integer SVDF
// (EvalIntegerSvdfReference in svdf_common.cc), for a state (and time weights) of int16 or int8:
//
//   1. every filter's memory row of the state moves one step left;
//   2. feature matmul: for batch b and filter f,
//        a = MBQM(sum_c feature[f,c] * (input[b,c] - input_zp), feature_multiplier, feature_shift)
//      state[b,f,memory-1] = clamp_T(state_zp + a)   (the zero point added before the clamp, as
//      in TFLite Micro's current code; older versions clamped first, which differs only when a
//      saturates while the state zero point is not 0)
//   3. time matmul, reduce over the `rank` filters of each unit, bias, rescale: for unit u,
//        acc = bias[u] + sum_{r<rank} sum_j time[f,j] * (state[b,f,j] - state_zp), f = u*rank + r
//        output[b,u] = clamp8(MBQM(acc, time_multiplier, time_shift) + output_zp)
//
// TFLite Micro sums the filters into scratch vectors first; the int32 sums wrap alike in any
// order, so this sums in place and needs no scratch. The fused activation is not applied (TFLite
// Micro's integer path only clamps to int8).
//
// Layouts: input [batch, input_size]; feature [filters, input_size]; time [filters, memory];
// bias [filters / rank] or null; state [batch, filters, memory] (the tensor [batch,
// memory * filters]), updated in place; output [batch, filters / rank].

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

struct SvdfParams {
  int32_t rank = 1;
  int32_t input_zero_point = 0;
  int32_t state_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t feature_multiplier = 0;  // input scale * feature scale / state scale
  int32_t feature_shift = 0;
  int32_t time_multiplier = 0;  // state scale * time scale / output scale
  int32_t time_shift = 0;
};

struct SvdfDims {
  int32_t batch = 1;
  int32_t input_size = 1;
  int32_t filters = 1;
  int32_t memory = 1;
};

/// int16 state and time weights (TFLite Micro's EvalInt16SvdfReference).
[[nodiscard]] Error svdf_s8_s16(const SvdfParams& params, const SvdfDims& dims, const int8_t* input,
                                const int8_t* feature_weights, const int16_t* time_weights,
                                const int32_t* bias, int16_t* state, int8_t* output);

/// int8 state and time weights (TFLite Micro's EvalInt8SvdfReference).
[[nodiscard]] Error svdf_s8_s8(const SvdfParams& params, const SvdfDims& dims, const int8_t* input,
                               const int8_t* feature_weights, const int8_t* time_weights,
                               const int32_t* bias, int8_t* state, int8_t* output);

}  // namespace boardlab::runtime::kernels
