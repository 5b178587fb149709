#pragma once

// Prepare shared by CONV_2D and DEPTHWISE_CONV_2D (their argument lists differ only by the
// depth_multiplier Int after dilation; docs/artifact-format.md 2.1).

#include "runtime/executor/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/op_data.h"

namespace boardlab::runtime::kernels {

/// Argument indices: in 0, weights 1, bias 2, stride 3, padding 4, dilation 5, then
/// [depth_multiplier], input_zp, output_zp, multipliers, shifts, act_min, act_max, output.
[[nodiscard]] Error PrepareConvLike(const char* op, KernelContext& ctx, Args args, bool depthwise);

}  // namespace boardlab::runtime::kernels
