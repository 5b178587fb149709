#pragma once

// Shapes and shared parameter blocks of the int8 reference kernels (CMSIS-NN style: plain
// structs passed by const reference, every pointer owned by the caller).

#include <cstdint>

namespace boardlab::runtime::kernels {

/// NHWC dimensions of a 4-D activation or filter (filters: n = output channels for CONV_2D,
/// n = 1 and c = output channels for DEPTHWISE_CONV_2D).
struct Dims4 {
  int32_t n = 1, h = 1, w = 1, c = 1;
  int64_t Size() const { return static_cast<int64_t>(n) * h * w * c; }
};

/// A row-major shape of up to kMaxDims dimensions.
inline constexpr int kMaxDims = 6;
struct ShapeN {
  int32_t rank = 0;
  int32_t dims[kMaxDims] = {};
  int64_t Size() const {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

/// Per-output-channel requantization: channel c uses multiplier[c] and shift[c]; `count` == 1
/// means per-tensor (every channel uses entry 0). The arrays must outlive the call.
struct ChannelQuant {
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
  int32_t count = 0;
};

/// Output offset (+zero point) and clamp range shared by every requantizing kernel.
struct OutputStage {
  int32_t output_offset = 0;
  int32_t act_min = -128;
  int32_t act_max = 127;
};

}  // namespace boardlab::runtime::kernels
