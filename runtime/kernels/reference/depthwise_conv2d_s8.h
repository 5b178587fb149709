#pragma once

// DEPTHWISE_CONV_2D int8, per-channel requantization, bit-exact with TFLite Micro's reference
// DepthwiseConvPerChannel: output channel oc = ic * depth_multiplier + m reads input channel ic;
//   acc = bias[oc] + sum_{ky,kx} filter[0,ky,kx,oc] * (input[y,x,ic] + input_offset)
// then requantized, offset and clamped like conv2d_s8 (taps outside the input are skipped).
//
// Layouts: input [N,H,W,Cin], filter [1,KH,KW,Cin*M], bias [Cin*M] int32 or null,
// output [N,OH,OW,Cin*M].

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct DepthwiseConvParams {
  ConvParams conv;  // conv.saturate_bias applies as for conv2d_s8
  int32_t depth_multiplier = 1;
};

/// `scratch` must hold depthwise_conv2d_s8_get_buffer_size() bytes, 4-byte aligned (one int32
/// accumulator per output channel, so the inner loops run over contiguous channels).
[[nodiscard]] Error depthwise_conv2d_s8(const DepthwiseConvParams& params,
                                        const ChannelQuant& quant, const Dims4& input_dims,
                                        const int8_t* input, const Dims4& filter_dims,
                                        const int8_t* filter, const int32_t* bias,
                                        const Dims4& output_dims, int8_t* output, void* scratch,
                                        size_t scratch_bytes);

size_t depthwise_conv2d_s8_get_buffer_size(const Dims4& output_dims);

/// True where depthwise_conv2d_s8 has the paired path (Cortex-M with the DSP extension): SMLAD
/// on pairs of horizontally adjacent taps of one channel, from input rows widened once into
/// (column, column + 1) pairs and requantized through RightShiftRequant.
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
inline constexpr bool kDepthwisePaired = true;
#else
inline constexpr bool kDepthwisePaired = false;
#endif

/// Scratch bytes of the paired path (the filter as pairs, the requantization constants, KH
/// widened input rows of 4 * OW * stride_w * Cout bytes or so), 0 where it does not exist or
/// does not apply (depth multiplier 1, channels a multiple of 4, no dilation, kernels up to
/// 8x8). Given this much scratch (or more), depthwise_conv2d_s8 takes the paired path; the
/// results are equal.
size_t depthwise_conv2d_s8_get_buffer_size_paired(const DepthwiseConvParams& params,
                                                  const Dims4& filter_dims,
                                                  const Dims4& output_dims);

/// The paired path on any target (portable DSP emulation off Cortex-M), for tests; needs
/// LayoutPaired's bytes of scratch (the Cortex-M size above). kInvalidArgument where it does
/// not apply.
[[nodiscard]] Error DepthwiseConv2DPairedForTest(const DepthwiseConvParams& params,
                                                 const ChannelQuant& quant, const Dims4& input_dims,
                                                 const int8_t* input, const Dims4& filter_dims,
                                                 const int8_t* filter, const int32_t* bias,
                                                 const Dims4& output_dims, int8_t* output,
                                                 void* scratch, size_t scratch_bytes);

}  // namespace boardlab::runtime::kernels
