#pragma once

// Ready-made TFLite test models with deterministic pseudo-random weights (fixed seeds, so every
// run and every machine writes the same bytes).
//
// Usage:
//   std::vector<uint8_t> model = SingleConv2D({.in_h = 16, .out_c = 8});
//   absl::StatusOr<Graph> graph = ImportTflite(model);
//
// Each generator has a `...Builder` twin that returns the unfinished TfliteBuilder, so that a
// test can break one field (a shape, a buffer, a quantization count) before calling Finish().
// Activations are int8 per-tensor; conv / depthwise weights are int8 per-channel with zero point
// 0 along the output-channel axis; biases are int32 with scale = input scale * weight scale.

#include <cstdint>
#include <vector>

#include "compiler/op_types.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {

/// Quantization of the activations the generators write, unless a test asks otherwise.
inline constexpr float kActScale = 0.05f;
inline constexpr int64_t kActZeroPoint = -3;

/// Per-tensor quantization {scale}, {zero_point}.
QuantParams PerTensor(float scale, int64_t zero_point);

/// `count` int8 values in [-127, 127] (never -128: symmetric weights) from `seed`.
std::vector<int8_t> RandomInt8(size_t count, uint32_t seed);

struct ConvParams {
  int32_t in_h = 8, in_w = 8, in_c = 3;
  int32_t out_c = 4;
  int32_t kernel_h = 3, kernel_w = 3;
  int32_t groups = 1;  // > 1: grouped convolution, weights of depth in_c / groups
  Conv2DOpts opts = {};
  bool bias = true;             // false writes input 2 as -1 (optional input absent)
  bool per_channel = true;      // false: one weight scale for all output channels
  int32_t bias_quant_axis = 0;  // 3 reproduces person_detect's 1-D bias quirk
  uint32_t seed = 1;
};
TfliteBuilder SingleConv2DBuilder(const ConvParams& p = {});
std::vector<uint8_t> SingleConv2D(const ConvParams& p = {});

struct DepthwiseParams {
  int32_t in_h = 8, in_w = 8, in_c = 4;
  int32_t multiplier = 1;
  int32_t kernel_h = 3, kernel_w = 3;
  DepthwiseConv2DOpts opts = {};  // depth_multiplier is overwritten with `multiplier`
  bool bias = true;
  uint32_t seed = 2;
};
TfliteBuilder SingleDepthwiseBuilder(const DepthwiseParams& p = {});
std::vector<uint8_t> SingleDepthwise(const DepthwiseParams& p = {});

struct FullyConnectedParams {
  std::vector<int32_t> in_shape = {1, 16};
  int32_t units = 10;
  FullyConnectedOpts opts = {};
  bool bias = true;
  uint32_t seed = 3;
};
TfliteBuilder SingleFullyConnectedBuilder(const FullyConnectedParams& p = {});
std::vector<uint8_t> SingleFullyConnected(const FullyConnectedParams& p = {});

/// ADD / SUB / MUL / MAXIMUM / MINIMUM of two activations with numpy broadcasting; the output
/// shape is the broadcast shape.
TfliteBuilder SingleBinaryBuilder(compiler::OpType type, std::vector<int32_t> a_shape,
                                  std::vector<int32_t> b_shape,
                                  Activation activation = Activation::kNone);

/// SOFTMAX on [1, n] with the spec's output quantization (1/256, -128).
std::vector<uint8_t> SingleSoftmax(int32_t n = 10, float beta = 1.0f);

/// A valid single-op model for every op in OpType (the defaults of the generators above for
/// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED; [1,4,4,8] + [1,1,1,8] for binary ops; ...).
TfliteBuilder SingleOpBuilder(compiler::OpType type);
std::vector<uint8_t> SingleOpModel(compiler::OpType type);

/// The options struct SingleOpBuilder writes for `type` (what the importer must read back).
BuilderOptions SingleOpOptions(compiler::OpType type);

/// conv 3x3/2 (fused RELU) -> depthwise 3x3 -> conv 1x1 -> average pool -> reshape -> fully
/// connected -> softmax, on a [1,49,10,1] input like MLPerf Tiny's keyword spotting DS-CNN.
std::vector<uint8_t> TinyDsCnn();

/// NCHW input [1,3,16,16] -> TRANSPOSE to NHWC -> CONV_2D -> TRANSPOSE back to NCHW [1,4,16,16],
/// the way PyTorch exports look.
std::vector<uint8_t> NchwTransposeModel();

/// CONV_2D without fused activation followed by a separate RELU op (a fusion candidate).
std::vector<uint8_t> ConvThenRelu();

/// Three branches, one input and one output each: a 4-group CONV_2D [1,9,7,8] -> 8 channels
/// (VALID, stride 2, RELU6), a grouped CONV_2D with one channel per group [1,8,8,6] -> 6, and a
/// DEPTHWISE_CONV_2D over one channel with depth_multiplier 8 [1,12,10,1] -> 8.
std::vector<uint8_t> ConvGroupsModel();

/// int8 [1,1,1,3] (scale 1, zero point 0) into a CIRCULAR_BUFFER of 4 slots [1,4,1,3] without
/// options: TFLite Micro's guess for that shape runs it every other inference, so the first
/// inference of each pair ends early ("no output yet") and the second outputs the buffer, the
/// last two inputs in its last two slots.
std::vector<uint8_t> CircularBufferModel();
/// CircularBufferModel's buffer through RELU: an inference the buffer ends early skips the RELU,
/// so it takes less time than one that runs the whole chain.
std::vector<uint8_t> CircularBufferReluModel();

}  // namespace boardlab::testing
