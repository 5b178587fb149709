#pragma once

// Prepare shared by CONV_2D and DEPTHWISE_CONV_2D (their argument lists differ only by the
// depth_multiplier Int after dilation; docs/artifact-format.md 2.1), and the argument groups they
// share with TRANSPOSE_CONV.

#include "runtime/executor/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/op_data.h"

namespace boardlab::runtime::kernels {

/// Reads stride (IntList [h, w] at args[first]) and padding (IntList [t, l, b, r] after it) into
/// `p`; the caller checks them (its message names the geometry it has).
[[nodiscard]] Error ReadStrideAndPadding(const char* op, Args args, size_t first, ConvParams& p);

/// The output stage at args[first..first + 5]: input_zp, output_zp, multipliers and shifts
/// (int32 [channels] or [1]), act_min, act_max. Fills `d` and checks the activation range and
/// the multiplier and `bias` (null or int32 [channels]) lengths.
[[nodiscard]] Error PrepareConvOutputStage(const char* op, Args args, size_t first,
                                           int32_t channels, const TensorView* bias, OpDataConv& d);

/// Argument indices: in 0, weights 1, bias 2, stride 3, padding 4, dilation 5, then
/// [depth_multiplier], input_zp, output_zp, multipliers, shifts, act_min, act_max, output.
[[nodiscard]] Error PrepareConvLike(const char* op, KernelContext& ctx, Args args, bool depthwise);

}  // namespace boardlab::runtime::kernels
