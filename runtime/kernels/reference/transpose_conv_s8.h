#pragma once

// TRANSPOSE_CONV int8 with per-channel weights [O, H, W, I], bit-exact with TFLite Micro's
// reference_integer_ops::TransposeConv. The reference scatters each input element into the
// outputs it touches (out = in * stride - pad + tap); this gathers instead, reading for output
// (y, x) the inputs (y + pad - tap) / stride that divide evenly. The int32 sums hold the same
// products, so they are equal: acc = sum (q + input_offset) * w, + bias, then
// MBQM(acc, multiplier[o], shift[o]) + output_offset, clamped.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// `params` gives stride, padding (top, left), input_offset and the output stage; its dilation
/// is unused. `bias` may be null.
[[nodiscard]] Error transpose_conv_s8(const ConvParams& params, const ChannelQuant& quant,
                                      const Dims4& input_dims, const int8_t* input,
                                      const Dims4& filter_dims, const int8_t* filter,
                                      const int32_t* bias, const Dims4& output_dims,
                                      int8_t* output);

}  // namespace boardlab::runtime::kernels
