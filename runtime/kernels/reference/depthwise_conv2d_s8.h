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

}  // namespace boardlab::runtime::kernels
