#pragma once

// The conv-like ops in 16x8 quantization (int16 activations, int8 weights, int64 bias), bit-exact
// with TFLite Micro's reference kernels (reference_integer_ops ConvPerChannel, DepthwiseConv-
// PerChannel, FullyConnected and TransposeConv for int16 input). 16x8 activations are symmetric,
// so there are no input or output offsets (the reference ignores the zero points):
//   acc = sum filter * input (+ bias)
//   out = clamp(MBQM64(acc, mult[c], shift[c]))
// MBQM64 is the int64 requantization (quantized_math.h MultiplyByQuantizedMultiplier64). The one
// exception is CONV_2D with an int32 bias or none: TFLite Micro then accumulates in int32 and
// requantizes with the ordinary double-rounding MultiplyByQuantizedMultiplier (conv2d_s16_acc32).
// Integer sums are exact (or wrap like the reference's), so the order of the taps is free: the
// transposed convolution gathers what the reference scatters.
//
// Layouts as the int8 kernels: input [N,H,W,Cin], CONV_2D filter [Cout,KH,KW,Cin/groups],
// DEPTHWISE filter [1,KH,KW,Cin*M], FULLY_CONNECTED weights [units, depth], TRANSPOSE_CONV
// filter [Cout,KH,KW,Cin]. `params.out` gives the clamp range (its offset must be 0);
// `params.input_offset` must be 0. Shifts must lie in [-31, 7] (the int64 requantization's
// domain); every function returns kInvalidArgument otherwise, or for null pointers and
// mismatched shapes.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// CONV_2D 16x8 with an int64 bias (or none where the caller wants the int64 accumulator).
[[nodiscard]] Error conv2d_s16(const ConvParams& params, const ChannelQuant& quant,
                               const Dims4& input_dims, const int16_t* input,
                               const Dims4& filter_dims, const int8_t* filter, const int64_t* bias,
                               const Dims4& output_dims, int16_t* output);

/// CONV_2D 16x8 with an int32 bias or none: int32 accumulator, double-rounding requantization.
[[nodiscard]] Error conv2d_s16_acc32(const ConvParams& params, const ChannelQuant& quant,
                                     const Dims4& input_dims, const int16_t* input,
                                     const Dims4& filter_dims, const int8_t* filter,
                                     const int32_t* bias, const Dims4& output_dims,
                                     int16_t* output);

[[nodiscard]] Error depthwise_conv2d_s16(const DepthwiseConvParams& params,
                                         const ChannelQuant& quant, const Dims4& input_dims,
                                         const int16_t* input, const Dims4& filter_dims,
                                         const int8_t* filter, const int64_t* bias,
                                         const Dims4& output_dims, int16_t* output);

/// `batches` rows of `depth` inputs times `units` weight rows.
[[nodiscard]] Error fully_connected_s16(const OutputStage& out, const ChannelQuant& quant,
                                        int32_t batches, int32_t depth, int32_t units,
                                        const int16_t* input, const int8_t* weights,
                                        const int64_t* bias, int16_t* output);

/// `params` gives stride and padding (top, left); its dilation is unused.
[[nodiscard]] Error transpose_conv_s16(const ConvParams& params, const ChannelQuant& quant,
                                       const Dims4& input_dims, const int16_t* input,
                                       const Dims4& filter_dims, const int8_t* filter,
                                       const int64_t* bias, const Dims4& output_dims,
                                       int16_t* output);

/// True when every shift of `quant` lies in [-31, 7], the domain of the int64 requantization.
bool ShiftsFitRequantize64(const ChannelQuant& quant);

}  // namespace boardlab::runtime::kernels
