#pragma once

// What each CPU kernel's Prepare stores in KernelContext::op_data (persistent, zeroed, 16-byte
// aligned, sizeof(OpData) bytes) for its Eval. Pointers point into the loaded program's constant
// segment or into Method-owned TensorViews, which outlive the kernel.

#include <cstdint>

#include "runtime/core/tensor_view.h"
#include "runtime/kernels/reference/activations_s8.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/batch_matmul_s8.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/fully_connected_s8.h"
#include "runtime/kernels/reference/mean_s8.h"
#include "runtime/kernels/reference/mul_s8.h"
#include "runtime/kernels/reference/pooling_s8.h"
#include "runtime/kernels/reference/quantize_s8.h"
#include "runtime/kernels/reference/softmax_s8.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct OpDataConv {
  DepthwiseConvParams params;  // .conv for CONV_2D
  ChannelQuant quant;
};

struct OpDataFullyConnected {
  FullyConnectedParams params;
  ChannelQuant quant;
  int32_t batches = 0, depth = 0, units = 0;
};

struct OpDataPool {
  PoolParams params;
};

struct OpDataAdd {
  AddParams params;
};

struct OpDataMul {
  MulParams params;
};

struct OpDataSoftmax {
  SoftmaxParams params;
  int32_t rows = 0, depth = 0;
};

struct OpDataSigmoid {
  SigmoidParams params;
};

struct OpDataRelu {
  ReluParams params;
};

struct OpDataLeakyRelu {
  LeakyReluParams params;
};

struct OpDataHardSwish {
  HardSwishParams params;
};

struct OpDataQuantize {
  RequantizeParams requantize;  // int8 -> int8
  float scale = 0;              // float -> int8
  bool from_float = false;
  bool identity = false;  // same quantization: plain copy
};

struct OpDataDequantize {
  double scale = 0;
  int32_t zero_point = 0;
};

struct OpDataMean {
  MeanParams params;
  int32_t axes[kMaxDims] = {};
  int32_t num_axes = 0;
};

struct OpDataTranspose {
  int32_t perm[kMaxDims] = {};
};

struct OpDataPad {
  int32_t before[kMaxDims] = {};
  int32_t after[kMaxDims] = {};
  int8_t pad_value = 0;
};

struct OpDataSlice {
  int32_t start[kMaxDims] = {};
  int32_t stride[kMaxDims] = {};
  int32_t out_dims[kMaxDims] = {};
};

struct OpDataConcat {
  int32_t axis = 0;
  int32_t act_min = -128, act_max = 127;
};

struct OpDataResize {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

struct OpDataBatchMatMul {
  BatchMatMulParams params;
};

}  // namespace boardlab::runtime::kernels
