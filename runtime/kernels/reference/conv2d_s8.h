#pragma once

// CONV_2D int8 with per-channel (or per-tensor) requantization, bit-exact with TFLite Micro's
// reference ConvPerChannel (shared/reference/tflite-int8.md section 9):
//   acc = bias[oc] + sum_{ky,kx,ic} filter[oc,ky,kx,ic] * (input[y,x,ic] + input_offset)
//   out = clamp(MultiplyByQuantizedMultiplier(acc, mult[oc], shift[oc]) + output_offset)
// with y = oy*stride_h - pad_top + ky*dilation_h; taps outside the input are skipped (the same as
// padding with the input zero point). Grouped convolution (input channels a multiple of the
// filter's) is supported as in TFLite.
//
// Layouts: input [N,H,W,Cin], filter [Cout,KH,KW,Cin/groups], bias [Cout] int32 or null,
// output [N,OH,OW,Cout]. Output sizes are taken from `output_dims` (the compiler resolved them).

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct ConvParams {
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t input_offset = 0;  // -input zero point
  OutputStage out;
  // acc + bias saturates to int32 instead of wrapping (the NPU engine's rule for hostile
  // payloads; equal for every valid model).
  bool saturate_bias = false;
};

/// Returns kInvalidArgument for null pointers, non-positive strides/dilations, mismatched
/// channel counts or a quantization table that is neither per-tensor nor per-channel.
[[nodiscard]] Error conv2d_s8(const ConvParams& params, const ChannelQuant& quant,
                              const Dims4& input_dims, const int8_t* input,
                              const Dims4& filter_dims, const int8_t* filter, const int32_t* bias,
                              const Dims4& output_dims, int8_t* output);

/// The same with scratch for the fast path: with `scratch` (2-byte aligned) of at least
/// conv2d_s8_get_buffer_size() bytes, the input patches of a few output pixels at a time are
/// widened into it (int16, input offset added, zero for taps outside the input) and multiplied
/// with every output channel's filter as a small GEMM tile (int8_dot.h DotTile). Without it (null
/// or too small) the plain per-element loop runs; results are equal.
[[nodiscard]] Error conv2d_s8(const ConvParams& params, const ChannelQuant& quant,
                              const Dims4& input_dims, const int8_t* input,
                              const Dims4& filter_dims, const int8_t* filter, const int32_t* bias,
                              const Dims4& output_dims, int8_t* output, void* scratch,
                              size_t scratch_bytes);

/// conv2d_s8's widened-filter path on a filter the caller has already put through
/// PackRowsForDot (rows = Cout, k = KH * KW * Cin, in (ky, kx, ic) order), for callers that keep
/// it in another layout or reuse it (the NPU engine packs its blocked weights). Needs
/// HavePackedDot(), an ungrouped convolution, an int8 input offset and `scratch` of
/// conv2d_s8_get_buffer_size() bytes; kInvalidArgument otherwise. Results equal conv2d_s8's.
[[nodiscard]] Error conv2d_s8_prepacked(const ConvParams& params, const ChannelQuant& quant,
                                        const Dims4& input_dims, const int8_t* input,
                                        const Dims4& filter_dims, const int16_t* packed,
                                        const int32_t* bias, const Dims4& output_dims,
                                        int8_t* output, void* scratch, size_t scratch_bytes);

/// Scratch bytes the fast path of conv2d_s8 uses: kConvTilePixels widened input patches of
/// KH * KW * Cin int16 each (padded to a multiple of 8) for ungrouped convolutions, 0 for grouped
/// ones (reference loop). On Cortex-M with DSP at least what the four-pixel path needs: four
/// interleaved patches, four int32 sums and 16 bytes of requantization constants per output
/// channel, and the filter padded to whole quads when KH * KW * Cin is not a multiple of 4.
size_t conv2d_s8_get_buffer_size(const Dims4& input_dims, const Dims4& filter_dims);

/// Scratch bytes of the widened-filter path, 0 where it does not exist (it needs
/// HavePackedDot(): x86-64 with AVX2). Given at least this much scratch, conv2d_s8 also widens the
/// filter into DotTilesPacked's layout once per call (all output channels of a pixel group are
/// then summed without horizontal reductions: 1x1 and few-channel convolutions gain most).
size_t conv2d_s8_get_buffer_size_packed(const Dims4& input_dims, const Dims4& filter_dims);

}  // namespace boardlab::runtime::kernels
