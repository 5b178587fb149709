#pragma once

// The CPU kernels, one X-macro list (STYLE.md rule 10) that drives the declarations below and
// the static registry table: X(TFLite name in lowercase, function prefix, OpData type).
// Every op in compiler/op_types.h has an entry, and one kernel is no TFLite op: `copy`, which
// moves a tensor's bytes where IF and WHILE hand tensors to and from their subgraphs.
// `var_handle` refuses to load: the compiler resolves every handle, so no program calls it.

#include "runtime/executor/kernel.h"
#include "runtime/kernels/op_data.h"

#define BOARDLAB_KERNEL_LIST(X)                                              \
  X(add, Add, OpDataAdd)                                                     \
  X(average_pool_2d, AveragePool2D, OpDataPool)                              \
  X(concatenation, Concatenation, OpDataConcat)                              \
  X(conv_2d, Conv2D, OpDataConv)                                             \
  X(depthwise_conv_2d, DepthwiseConv2D, OpDataConv)                          \
  X(dequantize, Dequantize, OpDataDequantize)                                \
  X(fully_connected, FullyConnected, OpDataFullyConnected)                   \
  X(logistic, Logistic, OpDataSigmoid)                                       \
  X(max_pool_2d, MaxPool2D, OpDataPool)                                      \
  X(mul, Mul, OpDataMul)                                                     \
  X(relu, Relu, OpDataRelu)                                                  \
  X(relu6, Relu6, OpDataRelu)                                                \
  X(reshape, Reshape, OpDataDequantize)                                      \
  X(softmax, Softmax, OpDataSoftmax)                                         \
  X(tanh, Tanh, OpDataSigmoid)                                               \
  X(pad, Pad, OpDataPad)                                                     \
  X(transpose, Transpose, OpDataTranspose)                                   \
  X(mean, Mean, OpDataMean)                                                  \
  X(sub, Sub, OpDataAdd)                                                     \
  X(squeeze, Squeeze, OpDataDequantize)                                      \
  X(strided_slice, StridedSlice, OpDataSlice)                                \
  X(maximum, Maximum, OpDataDequantize)                                      \
  X(minimum, Minimum, OpDataDequantize)                                      \
  X(padv2, PadV2, OpDataPad)                                                 \
  X(slice, Slice, OpDataSlice)                                               \
  X(resize_nearest_neighbor, ResizeNearestNeighbor, OpDataResize)            \
  X(leaky_relu, LeakyRelu, OpDataLeakyRelu)                                  \
  X(quantize, Quantize, OpDataQuantize)                                      \
  X(hard_swish, HardSwish, OpDataHardSwish)                                  \
  X(batch_matmul, BatchMatMul, OpDataBatchMatMul)                            \
  X(expand_dims, ExpandDims, OpDataNone)                                     \
  X(shape, Shape, OpDataNone)                                                \
  X(fill, Fill, OpDataNone)                                                  \
  X(zeros_like, ZerosLike, OpDataNone)                                       \
  X(broadcast_to, BroadcastTo, OpDataNone)                                   \
  X(pack, Pack, OpDataSplit)                                                 \
  X(unpack, Unpack, OpDataSplit)                                             \
  X(split, Split, OpDataSplit)                                               \
  X(split_v, SplitV, OpDataSplit)                                            \
  X(gather, Gather, OpDataGather)                                            \
  X(gather_nd, GatherNd, OpDataNone)                                         \
  X(reverse_v2, ReverseV2, OpDataReverse)                                    \
  X(mirror_pad, MirrorPad, OpDataMirrorPad)                                  \
  X(depth_to_space, DepthToSpace, OpDataBlock)                               \
  X(space_to_depth, SpaceToDepth, OpDataBlock)                               \
  X(batch_to_space_nd, BatchToSpaceNd, OpDataBatchSpace)                     \
  X(space_to_batch_nd, SpaceToBatchNd, OpDataBatchSpace)                     \
  X(equal, Equal, OpDataCompare)                                             \
  X(not_equal, NotEqual, OpDataCompare)                                      \
  X(greater, Greater, OpDataCompare)                                         \
  X(greater_equal, GreaterEqual, OpDataCompare)                              \
  X(less, Less, OpDataCompare)                                               \
  X(less_equal, LessEqual, OpDataCompare)                                    \
  X(logical_and, LogicalAnd, OpDataLogical)                                  \
  X(logical_or, LogicalOr, OpDataLogical)                                    \
  X(logical_not, LogicalNot, OpDataNone)                                     \
  X(select_v2, SelectV2, OpDataNone)                                         \
  X(reduce_max, ReduceMax, OpDataReduce)                                     \
  X(reduce_min, ReduceMin, OpDataReduce)                                     \
  X(sum, Sum, OpDataReduce)                                                  \
  X(arg_max, ArgMax, OpDataArg)                                              \
  X(arg_min, ArgMin, OpDataArg)                                              \
  X(cast, Cast, OpDataNone)                                                  \
  X(abs, Abs, OpDataAbs)                                                     \
  X(neg, Neg, OpDataNone)                                                    \
  X(floor, Floor, OpDataNone)                                                \
  X(ceil, Ceil, OpDataNone)                                                  \
  X(sin, Sin, OpDataNone)                                                    \
  X(cos, Cos, OpDataNone)                                                    \
  X(exp, Exp, OpDataNone)                                                    \
  X(log, Log, OpDataNone)                                                    \
  X(sqrt, Sqrt, OpDataNone)                                                  \
  X(rsqrt, Rsqrt, OpDataRsqrt)                                               \
  X(square, Square, OpDataNone)                                              \
  X(round, Round, OpDataNone)                                                \
  X(elu, Elu, OpDataElu)                                                     \
  X(prelu, Prelu, OpDataPrelu)                                               \
  X(div, Div, OpDataDiv)                                                     \
  X(floor_div, FloorDiv, OpDataFloatBinary)                                  \
  X(floor_mod, FloorMod, OpDataFloatBinary)                                  \
  X(embedding_lookup, EmbeddingLookup, OpDataEmbeddingLookup)                \
  X(broadcast_args, BroadcastArgs, OpDataNone)                               \
  X(squared_difference, SquaredDifference, OpDataSquaredDifference)          \
  X(add_n, AddN, OpDataAddN)                                                 \
  X(cumsum, Cumsum, OpDataCumsum)                                            \
  X(log_softmax, LogSoftmax, OpDataLogSoftmax)                               \
  X(l2_normalization, L2Normalization, OpDataL2Normalization)                \
  X(l2_pool_2d, L2Pool2D, OpDataL2Pool)                                      \
  X(resize_bilinear, ResizeBilinear, OpDataResize)                           \
  X(transpose_conv, TransposeConv, OpDataConv)                               \
  X(svdf, Svdf, OpDataSvdf)                                                  \
  X(detection_postprocess, DetectionPostprocess, OpDataDetectionPostprocess) \
  X(unidirectional_sequence_lstm, UnidirectionalSequenceLstm, OpDataLstm)    \
  X(if, If, OpDataNone)                                                      \
  X(while, While, OpDataNone)                                                \
  X(copy, Copy, OpDataNone)                                                  \
  X(call_once, CallOnce, OpDataNone)                                         \
  X(var_handle, VarHandle, OpDataNone)                                       \
  X(read_variable, ReadVariable, OpDataNone)                                 \
  X(assign_variable, AssignVariable, OpDataNone)                             \
  X(signal_window, SignalWindow, OpDataSignalWindow)                         \
  X(signal_fft_auto_scale, SignalFftAutoScale, OpDataNone)                   \
  X(signal_delay, SignalDelay, OpDataSignalDelay)                            \
  X(signal_energy, SignalEnergy, OpDataSignalEnergy)                         \
  X(signal_filter_bank, SignalFilterBank, OpDataSignalFilterBank)            \
  X(signal_filter_bank_square_root, SignalFilterBankSquareRoot, OpDataNone)  \
  X(signal_filter_bank_log, SignalFilterBankLog, OpDataSignalFilterBankLog)  \
  X(signal_pcan, SignalPcan, OpDataSignalPcan)                               \
  X(signal_filter_bank_spectral_subtraction, SignalSpectralSubtraction,      \
    OpDataSignalSpectralSubtraction)                                         \
  X(signal_framer, SignalFramer, OpDataSignalFramer)                         \
  X(signal_stacker, SignalStacker, OpDataSignalStacker)                      \
  X(signal_overlap_add, SignalOverlapAdd, OpDataSignalOverlapAdd)            \
  X(signal_rfft, SignalRfft, OpDataSignalFft)                                \
  X(signal_irfft, SignalIrfft, OpDataSignalFft)                              \
  X(circular_buffer, CircularBuffer, OpDataCircularBuffer)

namespace boardlab::runtime::kernels {

#define BOARDLAB_DECLARE_KERNEL(name, Fn, OpData)                               \
  [[nodiscard]] Error Fn##Prepare(KernelContext& ctx, Span<Value* const> args); \
  [[nodiscard]] Error Fn##Eval(KernelContext& ctx, Span<Value* const> args);
BOARDLAB_KERNEL_LIST(BOARDLAB_DECLARE_KERNEL)
#undef BOARDLAB_DECLARE_KERNEL

}  // namespace boardlab::runtime::kernels
