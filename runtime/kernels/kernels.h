#pragma once

// The CPU kernels, one X-macro list (STYLE.md rule 10) that drives the declarations below and
// the static registry table: X(TFLite name in lowercase, function prefix, OpData type).
// Every op in compiler/op_types.h has an entry.

#include "runtime/executor/kernel.h"
#include "runtime/kernels/op_data.h"

#define BOARDLAB_KERNEL_LIST(X)                                   \
  X(add, Add, OpDataAdd)                                          \
  X(average_pool_2d, AveragePool2D, OpDataPool)                   \
  X(concatenation, Concatenation, OpDataConcat)                   \
  X(conv_2d, Conv2D, OpDataConv)                                  \
  X(depthwise_conv_2d, DepthwiseConv2D, OpDataConv)               \
  X(dequantize, Dequantize, OpDataDequantize)                     \
  X(fully_connected, FullyConnected, OpDataFullyConnected)        \
  X(logistic, Logistic, OpDataSigmoid)                            \
  X(max_pool_2d, MaxPool2D, OpDataPool)                           \
  X(mul, Mul, OpDataMul)                                          \
  X(relu, Relu, OpDataRelu)                                       \
  X(relu6, Relu6, OpDataRelu)                                     \
  X(reshape, Reshape, OpDataDequantize)                           \
  X(softmax, Softmax, OpDataSoftmax)                              \
  X(tanh, Tanh, OpDataSigmoid)                                    \
  X(pad, Pad, OpDataPad)                                          \
  X(transpose, Transpose, OpDataTranspose)                        \
  X(mean, Mean, OpDataMean)                                       \
  X(sub, Sub, OpDataAdd)                                          \
  X(squeeze, Squeeze, OpDataDequantize)                           \
  X(strided_slice, StridedSlice, OpDataSlice)                     \
  X(maximum, Maximum, OpDataDequantize)                           \
  X(minimum, Minimum, OpDataDequantize)                           \
  X(padv2, PadV2, OpDataPad)                                      \
  X(slice, Slice, OpDataSlice)                                    \
  X(resize_nearest_neighbor, ResizeNearestNeighbor, OpDataResize) \
  X(leaky_relu, LeakyRelu, OpDataLeakyRelu)                       \
  X(quantize, Quantize, OpDataQuantize)                           \
  X(hard_swish, HardSwish, OpDataHardSwish)                       \
  X(batch_matmul, BatchMatMul, OpDataBatchMatMul)

namespace boardlab::runtime::kernels {

#define BOARDLAB_DECLARE_KERNEL(name, Fn, OpData)                               \
  [[nodiscard]] Error Fn##Prepare(KernelContext& ctx, Span<Value* const> args); \
  [[nodiscard]] Error Fn##Eval(KernelContext& ctx, Span<Value* const> args);
BOARDLAB_KERNEL_LIST(BOARDLAB_DECLARE_KERNEL)
#undef BOARDLAB_DECLARE_KERNEL

}  // namespace boardlab::runtime::kernels
