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

/// The activation input args[in_index] and output args[out_index] of a conv-like op: both
/// int8, or both int16 (16x8, then `*int16` is set).
[[nodiscard]] Error ConvActivationArgs(const char* op, Args args, size_t in_index, size_t out_index,
                                       TensorView** in, TensorView** out, bool* int16);

/// The optional bias at args[i]: int32 with int8 activations; int64 in 16x8, or int32 too where
/// `int32_in_16x8` (TFLite Micro's CONV_2D). Sets `*bias64` for an int64 bias.
[[nodiscard]] Error ConvBiasArg(const char* op, Args args, size_t i, bool int16, bool int32_in_16x8,
                                TensorView** bias, bool* bias64);

/// The output stage at args[first..first + 5]: input_zp, output_zp, multipliers and shifts
/// (int32 [channels] or [1]), act_min, act_max. Fills `d` and checks the activation range (int8,
/// or int16 with zero points 0 when d.int16), the int64 requantization's shift range (when
/// d.acc64), and the multiplier and `bias` (null or [channels]) lengths.
[[nodiscard]] Error PrepareConvOutputStage(const char* op, Args args, size_t first,
                                           int32_t channels, const TensorView* bias, OpDataConv& d);

/// Argument indices: in 0, weights 1, bias 2, stride 3, padding 4, dilation 5, then
/// [depth_multiplier], input_zp, output_zp, multipliers, shifts, act_min, act_max, output.
[[nodiscard]] Error PrepareConvLike(const char* op, KernelContext& ctx, Args args, bool depthwise);

}  // namespace boardlab::runtime::kernels
