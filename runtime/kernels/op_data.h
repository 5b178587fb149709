#pragma once

// What each CPU kernel's Prepare stores in KernelContext::op_data (persistent, zeroed, 16-byte
// aligned, sizeof(OpData) bytes) for its Eval. Pointers point into the loaded program's constant
// segment or into Method-owned TensorViews, which outlive the kernel.

#include <cstdint>

#include "runtime/core/tensor_view.h"
#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/activations_s8.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/arith.h"
#include "runtime/kernels/reference/batch_matmul_s8.h"
#include "runtime/kernels/reference/compare.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/conv_s16.h"
#include "runtime/kernels/reference/data_movement.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/detection_postprocess.h"
#include "runtime/kernels/reference/fully_connected_s8.h"
#include "runtime/kernels/reference/lstm.h"
#include "runtime/kernels/reference/math.h"
#include "runtime/kernels/reference/mean_s8.h"
#include "runtime/kernels/reference/mul_s8.h"
#include "runtime/kernels/reference/normalization.h"
#include "runtime/kernels/reference/pooling_s8.h"
#include "runtime/kernels/reference/quantize_s8.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/signal_spectral_subtraction.h"
#include "runtime/kernels/reference/signal_stream.h"
#include "runtime/kernels/reference/softmax_s8.h"
#include "runtime/kernels/reference/svdf_s8.h"
#include "runtime/kernels/reference/types.h"
#include "runtime/kernels/reference/unary.h"

namespace boardlab::runtime::kernels {

struct OpDataConv {
  DepthwiseConvParams params;  // .conv for CONV_2D
  ChannelQuant quant;
  bool int16 = false;  // 16x8: int16 activations (reference/conv_s16.h)
  bool acc64 =
      false;  // 16x8 accumulating in int64 (an int64 bias; DEPTHWISE, TRANSPOSE_CONV always)
};

struct OpDataFullyConnected {
  FullyConnectedParams params;
  ChannelQuant quant;
  int32_t batches = 0, depth = 0, units = 0;
  bool int16 = false;  // 16x8: int16 activations, int64 bias
};

struct OpDataPool {
  PoolParams params;
};

struct OpDataL2Pool {
  PoolParams geometry;  // its int8 range is unused
  float act_min = 0, act_max = 0;
};

struct OpDataAdd {
  AddParams params;
  bool int16 = false;  // 16x8
};

struct OpDataMul {
  MulParams params;
  bool int16 = false;  // 16x8
};

struct OpDataSoftmax {
  SoftmaxParams params;
  int32_t rows = 0, depth = 0;
  const Softmax16Tables* tables = nullptr;  // 16x8: the lookup tables (persistent memory)
};

struct OpDataSigmoid {
  SigmoidParams params;
  bool int16 = false;  // 16x8: params hold the int16 rescale (activations_s16.h)
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
  RequantizeParams requantize;  // int8 or int16 -> int8 or int16
  float scale = 0;              // float -> int8 or int16
  bool from_float = false;
  bool input_int16 = false, output_int16 = false;
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
  int16_t pad_value = 0;  // int8 or int16 (16x8), as the tensors
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

/// Kernels whose Eval reads everything from its arguments (EXPAND_DIMS, SHAPE, FILL, ...).
struct OpDataNone {};

/// SIGNAL_DELAY: `rows` delay lines of `delay` samples over frames of `frame` samples; `history`
/// (rows x delay int16, persistent memory) carries over from one Execute to the next.
struct OpDataSignalDelay {
  int32_t delay = 0;
  int32_t frame = 0;
  int64_t rows = 0;
  int16_t* history = nullptr;
};

// The signal library's filter bank stage (signal_filter_bank_ops.cc): each kernel's options.

/// SIGNAL_ENERGY: bins [start, end) of `bins` written.
struct OpDataSignalEnergy {
  int32_t start = 0;
  int32_t end = 0;
  int32_t bins = 0;
};

/// SIGNAL_FILTER_BANK: `channels` + 1 channel table entries, `outputs` <= channels written.
struct OpDataSignalFilterBank {
  int32_t channels = 0;
  int32_t outputs = 0;
};

/// SIGNAL_FILTER_BANK_LOG.
struct OpDataSignalFilterBankLog {
  int32_t correction_bits = 0;
  int32_t output_scale = 0;
};

/// SIGNAL_PCAN.
struct OpDataSignalPcan {
  int32_t snr_shift = 0;
};

/// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION: its options and the noise estimate it keeps across
/// inferences (persistent memory, zeroed by each load).
struct OpDataSignalSpectralSubtraction {
  SpectralSubtractionParams params;
  uint32_t* noise_estimate = nullptr;
};

/// SIGNAL_WINDOW: `rows` runs of the `length` weights.
struct OpDataSignalWindow {
  int32_t shift = 0;
  int32_t length = 0;
  int64_t rows = 0;
};

/// PACK, UNPACK, SPLIT, SPLIT_V: how the joined tensor divides along the axis.
struct OpDataSplit {
  static constexpr int kMaxParts = 64;
  int64_t extents[kMaxParts] = {};
  int32_t count = 0;
  int64_t outer = 1, inner = 1;
};

struct OpDataGather {
  int32_t axis = 0;
  int32_t batch_dims = 0;
};

/// REVERSE_V2 (reversed dimensions) and MIRROR_PAD (paddings, mode).
struct OpDataReverse {
  bool reversed[kMaxDims] = {};
};
struct OpDataMirrorPad {
  int32_t before[kMaxDims] = {};
  int32_t after[kMaxDims] = {};
  bool symmetric = false;
};

struct OpDataBlock {  // DEPTH_TO_SPACE, SPACE_TO_DEPTH
  int32_t block_size = 1;
};

struct OpDataBatchSpace {  // BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND
  BatchSpaceParams params;
};

struct OpDataCompare {
  BroadcastStrides strides;
  ComparisonScaling scaling;  // int8 operands
};

struct OpDataLogical {
  BroadcastStrides strides;
};

struct OpDataReduce {
  bool reduced[kMaxDims] = {};
  SumParams sum;
};

struct OpDataArg {
  int32_t axis = 0;
};

struct OpDataAbs {
  AbsParams params;
};

struct OpDataRsqrt {
  RsqrtParams params;
};

// The rows of a last-dimension op (LOG_SOFTMAX, L2_NORMALIZATION), fixed at Prepare.
struct RowShape {
  int64_t rows = 0;
  int32_t depth = 0;
};

struct OpDataLogSoftmax {
  LogSoftmaxParams params;
  RowShape rows;
};

struct OpDataL2Normalization {
  int32_t input_zero_point = 0;
  RowShape rows;
};

struct OpDataElu {
  int8_t table[256] = {};
};

struct OpDataPrelu {
  BroadcastStrides strides;
  PreluParams params;
};

struct OpDataDiv {
  BroadcastStrides strides;
  DivParams params;  // int8
  int32_t activation = 0;
  float float_min = 0, float_max = 0;
  int32_t int_min = 0, int_max = 0;
};

/// EMBEDDING_LOOKUP: the elements of one row, and the scale of int8 rows dequantized to float32
/// (0 when rows are copied).
struct OpDataEmbeddingLookup {
  int64_t row_elements = 0;
  float scale = 0;
};

/// FLOOR_DIV, FLOOR_MOD (float32).
struct OpDataFloatBinary {
  BroadcastStrides strides;
};

struct OpDataSquaredDifference {
  BroadcastStrides strides;
  SquaredDifferenceParams params;  // int8
};

struct OpDataAddN {
  static constexpr int kMaxInputs = 63;  // one quantization list entry is the output's
  SumRescale params;
};

struct OpDataSvdf {
  SvdfParams params;
  SvdfDims dims;
  bool int16_state = true;  // else int8 state and time weights
};

struct OpDataDetectionPostprocess {
  DetectionPostprocessParams params;
  DetectionShape shape;
  bool is_int8[3] = {};  // box_encodings, class_predictions, anchors
  int32_t zero_point[3] = {};
  float scale[3] = {};
  int32_t capacity = 0;  // entries of the classes and scores outputs
  size_t scratch_bytes = 0;
};

struct OpDataLstm {
  LstmParams params;   // the weight and bias pointers are set at every Eval
  bool int16 = false;  // the 16x8 form
  size_t scratch_bytes = 0;
};

struct OpDataCumsum {
  SumRescale params;
  bool exclusive = false, reverse = false;
};

// TFLite Micro's streaming ops (signal_stream_ops.cc): their state, in persistent memory, carries
// over from one Execute to the next; Prepare (every load) starts it over.

struct OpDataSignalFramer {
  int32_t frame_size = 0, step = 0, frames = 0;
  int64_t rows = 0;
  FramerState state;
};

struct OpDataSignalStacker {
  int32_t channels = 0, left = 0, right = 0, step = 0;
  StackerState state;
};

struct OpDataSignalOverlapAdd {
  int32_t frame_size = 0, step = 0, frames = 0;
  int64_t rows = 0;
  bool int16 = true;  // else float32
  void* buffer = nullptr;
};

/// SIGNAL_RFFT and SIGNAL_IRFFT (signal_fft_ops.cc): `rows` real FFTs of `fft_length` points in
/// int16, int32 or float32, their tables in persistent memory.
struct OpDataSignalFft {
  int32_t fft_length = 0;
  int32_t input_length = 0;  // SIGNAL_RFFT: samples per row, zero padded up to fft_length
  int64_t rows = 0;
  ScalarType type = ScalarType::kFloat;
  void* twiddles = nullptr;
  void* super_twiddles = nullptr;
  void* work = nullptr;
  void* padded = nullptr;  // SIGNAL_RFFT: a row zero padded, when input_length < fft_length
};

struct OpDataCircularBuffer {
  int32_t slots = 0, depth = 0;
  int32_t period = 1, runs_until_output = 1;  // TFLite Micro's cycles_max, cycles_until_run
  int8_t* buffer = nullptr;
};

/// Whether a kernel's OpData holds state that its Eval changes and the next inference reads (the
/// registry's KernelRegistration::keeps_state): the signal library's delay line, noise estimate
/// and streaming buffers, TFLite Micro's CIRCULAR_BUFFER. State kept in variable tensors (SVDF,
/// LSTM, resource variables) is not op_data and needs no flag.
template <typename OpData>
inline constexpr bool kKeepsState = false;
template <>
inline constexpr bool kKeepsState<OpDataSignalDelay> = true;
template <>
inline constexpr bool kKeepsState<OpDataSignalSpectralSubtraction> = true;
template <>
inline constexpr bool kKeepsState<OpDataSignalFramer> = true;
template <>
inline constexpr bool kKeepsState<OpDataSignalStacker> = true;
template <>
inline constexpr bool kKeepsState<OpDataSignalOverlapAdd> = true;
template <>
inline constexpr bool kKeepsState<OpDataCircularBuffer> = true;

}  // namespace boardlab::runtime::kernels
