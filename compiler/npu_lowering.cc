#include "compiler/npu_lowering.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "boardlab/schema/npu_payload_generated.h"
#include "compiler/npu_constraints.h"
#include "compiler/quantization.h"

namespace boardlab::compiler {
namespace {

namespace fb = ::boardlab::npu;

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// Depthwise weights [1][kH][kW][M] of a one-channel input as convolution weights [M][kH][kW][1].
std::vector<int8_t> DepthwiseAsConvWeights(std::span<const int8_t> hwm, int kernel_h, int kernel_w,
                                           int channels) {
  std::vector<int8_t> ohwi(hwm.size());
  const int taps = kernel_h * kernel_w;
  for (int t = 0; t < taps; ++t) {
    for (int m = 0; m < channels; ++m) ohwi[m * taps + t] = hwm[t * channels + m];
  }
  return ohwi;
}

void PutU32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t GetU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

absl::StatusOr<fb::KernelKind> KernelKindOf(OpType type) {
  switch (type) {
    case OpType::kConv2D:
      return fb::KernelKind::Conv2D;
    case OpType::kDepthwiseConv2D:
      return fb::KernelKind::DepthwiseConv2D;
    case OpType::kFullyConnected:
      return fb::KernelKind::FullyConnected;
    case OpType::kAveragePool2D:
      return fb::KernelKind::AveragePool2D;
    case OpType::kMaxPool2D:
      return fb::KernelKind::MaxPool2D;
    case OpType::kAdd:
      return fb::KernelKind::Add;
    case OpType::kSub:
      return fb::KernelKind::Sub;
    case OpType::kMul:
      return fb::KernelKind::Mul;
    case OpType::kSoftmax:
      return fb::KernelKind::Softmax;
    case OpType::kLogistic:
      return fb::KernelKind::Logistic;
    case OpType::kTanh:
      return fb::KernelKind::Tanh;
    case OpType::kRelu:
      return fb::KernelKind::Relu;
    case OpType::kRelu6:
      return fb::KernelKind::Relu6;
    case OpType::kLeakyRelu:
      return fb::KernelKind::LeakyRelu;
    case OpType::kHardSwish:
      return fb::KernelKind::HardSwish;
    case OpType::kConcatenation:
      return fb::KernelKind::Concatenation;
    case OpType::kReshape:
      return fb::KernelKind::Reshape;
    case OpType::kSqueeze:
      return fb::KernelKind::Squeeze;
    case OpType::kExpandDims:  // a reshape: the bytes do not move
      return fb::KernelKind::Reshape;
    case OpType::kPad:
      return fb::KernelKind::Pad;
    case OpType::kPadV2:
      return fb::KernelKind::PadV2;
    case OpType::kTranspose:
      return fb::KernelKind::Transpose;
    case OpType::kMean:
      return fb::KernelKind::Mean;
    case OpType::kMaximum:
      return fb::KernelKind::Maximum;
    case OpType::kMinimum:
      return fb::KernelKind::Minimum;
    case OpType::kSlice:
      return fb::KernelKind::Slice;
    case OpType::kStridedSlice:
      return fb::KernelKind::StridedSlice;
    case OpType::kResizeNearestNeighbor:
      return fb::KernelKind::ResizeNearestNeighbor;
    case OpType::kQuantize:
      return fb::KernelKind::Quantize;
    case OpType::kDequantize:
      return fb::KernelKind::Dequantize;
    case OpType::kBatchMatMul:
      return fb::KernelKind::BatchMatMul;
    default:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("NPU lowering: ", OpTypeName(type), " has no NPU kernel"));
}

absl::StatusOr<fb::ElementType> ElementTypeOf(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return fb::ElementType::Int8;
    case DataType::kUint8:
      return fb::ElementType::UInt8;
    case DataType::kInt16:
      return fb::ElementType::Int16;
    case DataType::kInt32:
      return fb::ElementType::Int32;
    case DataType::kInt64:
      return fb::ElementType::Int64;
    case DataType::kFloat32:
      return fb::ElementType::Float32;
    case DataType::kBool:
      return fb::ElementType::Bool;
    case DataType::kUint32:  // no Neutron element type; no NPU op takes them
    case DataType::kUint64:
    case DataType::kResource:
    case DataType::kOther:
      break;
  }
  return absl::UnimplementedError("NPU lowering: tensor of unsupported element type");
}

Activation FusedActivation(const Op& op) {
  return std::visit(
      [](const auto& o) -> Activation {
        if constexpr (requires { o.activation; }) {
          return o.activation;
        } else {
          return Activation::kNone;
        }
      },
      op.options);
}

struct TensorEntry {
  int graph_index = kNoTensor;
  fb::TensorKind kind = fb::TensorKind::Input;
  int arg_index = -1;
  int64_t arena_offset = -1;
  int64_t weights_offset = -1;
  int64_t weights_size = 0;
};

struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Requantization and option fields of one kernel, gathered before its table is serialized.
struct Geometry {
  int32_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0, depth_multiplier = 1;
};

struct FixedPoint {
  int32_t input_multiplier = 0, input_left_shift = 0, input_range_radius = 0, diff_min = 0;
};

struct KernelParams {
  Geometry geometry;
  bool has_geometry = false;
  std::vector<int32_t> multipliers, shifts;
  int32_t input_zp = 0, input2_zp = 0, output_zp = 0;
  ActivationRange range;
  std::optional<AddSubParams> add_sub;
  std::optional<FixedPoint> fixed_point;
  ByteRange weights, bias;
  int32_t axis = 0;
  std::vector<int32_t> int_params;
  std::vector<float> float_params;
};

// Lowers one partition. Holds the flatbuffer builder and the growing weight section.
class PartitionLowering {
 public:
  PartitionLowering(const Compilation& c, int partition, int first_debug_id)
      : c_(c), g_(c.graph), partition_(partition), first_debug_id_(first_debug_id) {}

  absl::StatusOr<NpuPartitionBlob> Run();

 private:
  absl::Status ClassifyTensors();
  int Ref(int graph_tensor) const {
    return graph_tensor == kNoTensor ? -1 : refs_.at(graph_tensor);
  }
  absl::Status AddConstantOperand(int graph_tensor);
  ByteRange Append(const void* data, size_t size);
  absl::Status PrepareKernel(const Op& op);
  int64_t AssignSlots();
  absl::StatusOr<flatbuffers::Offset<fb::NpuKernel>> SerializeKernel(const Op& op, int k);
  absl::Status FillParams(const Op& op, KernelParams& p);
  absl::Status FillConvLike(const Op& op, KernelParams& p);
  absl::Status FillRequant(const Op& op, KernelParams& p);
  absl::Status FillWindow(const Op& op, KernelParams& p);
  void FillOptions(const Op& op, KernelParams& p);
  void BuildCommands(std::vector<fb::Command>& types,
                     std::vector<flatbuffers::Offset<void>>& values);
  absl::StatusOr<flatbuffers::Offset<fb::Tensor>> BuildTensor(const TensorEntry& e);
  NpuDebugEntry DebugEntry(const Op& op, int k) const;
  std::vector<uint8_t> AssembleBlob();

  const Compilation& c_;
  const Graph& g_;
  int partition_;
  int first_debug_id_;
  std::vector<int> ops_;                               // graph op indices in execution order
  std::vector<TensorEntry> tensors_;                   // payload tensors
  std::map<int, int> refs_;                            // graph tensor -> payload tensor
  std::vector<int> inputs_, outputs_, intermediates_;  // payload tensor indices
  std::vector<ByteRange> kernel_constants_;            // per kernel
  std::vector<KernelParams> params_;                   // per kernel
  std::vector<int> weighted_kernels_;  // kernels reading a scratch slot, in execution order
  std::vector<int32_t> slots_;         // per kernel, -1 = constants read in place
  int num_slots_ = 2;
  std::vector<uint8_t> weights_;
  flatbuffers::FlatBufferBuilder fbb_;
};

ByteRange PartitionLowering::Append(const void* data, size_t size) {
  weights_.resize(AlignUp(static_cast<int64_t>(weights_.size()), kNpuPayloadAlignment), 0);
  ByteRange r{weights_.size(), size};
  const auto* bytes = static_cast<const uint8_t*>(data);
  weights_.insert(weights_.end(), bytes, bytes + size);
  return r;
}

absl::Status PartitionLowering::ClassifyTensors() {
  std::set<int> in_partition(ops_.begin(), ops_.end());
  std::set<int> graph_outputs(g_.outputs.begin(), g_.outputs.end());
  auto add = [this](int t, fb::TensorKind kind) {
    refs_[t] = static_cast<int>(tensors_.size());
    tensors_.push_back({.graph_index = t, .kind = kind});
    return refs_[t];
  };
  for (int op_index : ops_) {
    const Op& op = g_.ops[op_index];
    for (int t : op.inputs) {
      if (t == kNoTensor || refs_.contains(t) || g_.tensors[t].is_constant) continue;
      inputs_.push_back(add(t, fb::TensorKind::Input));
    }
    for (int t : op.outputs) {
      const Tensor& tensor = g_.tensors[t];
      const bool escapes =
          graph_outputs.contains(t) ||
          std::any_of(tensor.consumers.begin(), tensor.consumers.end(),
                      [&](int consumer) { return !in_partition.contains(consumer); });
      if (escapes) {
        outputs_.push_back(add(t, fb::TensorKind::Output));
        continue;
      }
      const int64_t offset =
          t < static_cast<int>(c_.memory.tensor_offset.size()) ? c_.memory.tensor_offset[t] : -1;
      if (offset < 0) {
        return absl::FailedPreconditionError(absl::StrCat("NPU lowering: intermediate tensor '",
                                                          tensor.name, "' of NPU partition ",
                                                          partition_, " has no arena offset"));
      }
      intermediates_.push_back(add(t, fb::TensorKind::Intermediate));
      tensors_.back().arena_offset = offset;
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) tensors_[inputs_[i]].arg_index = i;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    tensors_[outputs_[i]].arg_index = static_cast<int>(inputs_.size() + i);
  }
  return absl::OkStatus();
}

absl::Status PartitionLowering::AddConstantOperand(int t) {
  if (t == kNoTensor || refs_.contains(t)) return absl::OkStatus();
  const Tensor& tensor = g_.tensors[t];
  refs_[t] = static_cast<int>(tensors_.size());
  const ByteRange r = Append(tensor.data.data(), tensor.data.size());
  tensors_.push_back({.graph_index = t,
                      .kind = fb::TensorKind::Constant,
                      .weights_offset = static_cast<int64_t>(r.offset),
                      .weights_size = static_cast<int64_t>(r.size)});
  return absl::OkStatus();
}

absl::Status RequireQuantized(const Graph& g, const Op& op, const Tensor& t) {
  if (t.quant.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "NPU lowering: ", g.Describe(op), ": tensor '", t.name, "' has no quantization"));
  }
  return absl::OkStatus();
}

absl::Status PartitionLowering::FillWindow(const Op& op, KernelParams& p) {
  const Tensor& in = g_.input(op, 0);
  const Tensor& out = g_.output(op);
  if (in.shape.size() != 4 || out.shape.size() != 4) {
    return absl::FailedPreconditionError(
        absl::StrCat("NPU lowering: ", g_.Describe(op), ": expected 4-D NHWC tensors"));
  }
  Geometry& geo = p.geometry;
  Padding padding = Padding::kValid;
  if (const auto* conv = std::get_if<ConvOptions>(&op.options)) {
    const Tensor& w = g_.input(op, 1);
    geo.kernel_h = w.shape[1];
    geo.kernel_w = w.shape[2];
    geo.stride_h = conv->stride_h;
    geo.stride_w = conv->stride_w;
    geo.dilation_h = conv->dilation_h;
    geo.dilation_w = conv->dilation_w;
    geo.depth_multiplier = conv->depth_multiplier;
    padding = conv->padding;
  } else {
    const auto& pool = op.opts<PoolOptions>();
    geo.kernel_h = pool.filter_h;
    geo.kernel_w = pool.filter_w;
    geo.stride_h = pool.stride_h;
    geo.stride_w = pool.stride_w;
    padding = pool.padding;
  }
  // TFLite SAME padding: the total is split with the odd remainder after (bottom/right).
  auto pads = [padding](int in_size, int out_size, int k, int stride, int dilation) {
    const int effective = (k - 1) * dilation + 1;
    const int total = std::max(0, (out_size - 1) * stride + effective - in_size);
    return padding == Padding::kSame ? std::pair{total / 2, total - total / 2} : std::pair{0, 0};
  };
  std::tie(geo.pad_top, geo.pad_bottom) =
      pads(in.shape[1], out.shape[1], geo.kernel_h, geo.stride_h, geo.dilation_h);
  std::tie(geo.pad_left, geo.pad_right) =
      pads(in.shape[2], out.shape[2], geo.kernel_w, geo.stride_w, geo.dilation_w);
  p.has_geometry = true;
  return absl::OkStatus();
}

absl::Status CheckWeights(const Graph& g, const Op& op, const Tensor& w) {
  if (w.type != DataType::kInt8 || !w.is_constant || w.data.size() != size_t(w.SizeBytes())) {
    return absl::UnimplementedError(absl::StrCat("NPU lowering: ", g.Describe(op),
                                                 ": weights must be constant int8 with data"));
  }
  for (int64_t zp : w.quant.zero_point) {
    if (zp != 0) {
      return absl::UnimplementedError(absl::StrCat("NPU lowering: ", g.Describe(op),
                                                   ": weight zero point ", zp, " (must be 0)"));
    }
  }
  return RequireQuantized(g, op, w);
}

// Weights and biases of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, plus their per output
// channel requantization.
absl::Status PartitionLowering::FillConvLike(const Op& op, KernelParams& p) {
  const Tensor& in = g_.input(op, 0);
  const Tensor& w = g_.input(op, 1);
  const Tensor& out = g_.output(op);
  if (absl::Status s = CheckWeights(g_, op, w); !s.ok()) return s;
  const int block_in = c_.target.npu.num_macs > 0 ? c_.target.npu.num_macs : 8;
  const std::span<const int8_t> src(reinterpret_cast<const int8_t*>(w.data.data()), w.data.size());
  std::vector<int8_t> reordered;
  int channels = 0;
  if (IsSingleChannelDepthwise(g_, op)) {
    // [1,H,W,M] over one input channel is the OHWI convolution [M,H,W,1].
    channels = w.shape[3];
    const std::vector<int8_t> ohwi = DepthwiseAsConvWeights(src, w.shape[1], w.shape[2], channels);
    reordered = ReorderConvWeights(ohwi, channels, w.shape[1], w.shape[2], 1, kNpuPipes, block_in);
  } else if (op.type == OpType::kDepthwiseConv2D) {
    channels = w.shape[3];
    reordered = ReorderDepthwiseWeights(src, w.shape[1], w.shape[2], channels, kNpuPipes);
  } else if (op.type == OpType::kConv2D) {
    channels = w.shape[0];
    reordered =
        ReorderConvWeights(src, channels, w.shape[1], w.shape[2], w.shape[3], kNpuPipes, block_in);
  } else {
    channels = w.shape[0];
    reordered = ReorderConvWeights(src, channels, 1, 1, w.shape.back(), kNpuPipes, block_in);
  }
  p.weights = Append(reordered.data(), reordered.size());

  std::vector<int32_t> bias(AlignUp(channels, kNpuPipes), 0);
  if (op.inputs.size() > 2 && op.inputs[2] != kNoTensor) {
    const Tensor& b = g_.input(op, 2);
    if (b.type != DataType::kInt32 || b.NumElements() != channels ||
        b.data.size() != size_t(b.SizeBytes())) {
      return absl::UnimplementedError(absl::StrCat(
          "NPU lowering: ", g_.Describe(op), ": bias must be constant int32[", channels, "]"));
    }
    std::memcpy(bias.data(), b.data.data(), b.data.size());
  }
  p.bias = Append(bias.data(), bias.size() * sizeof(int32_t));

  for (const Tensor* t : {&in, &out}) {
    if (absl::Status s = RequireQuantized(g_, op, *t); !s.ok()) return s;
  }
  for (int oc = 0; oc < channels; ++oc) {
    const double w_scale = w.quant.scale[w.quant.per_channel() ? oc : 0];
    const QuantizedMultiplier qm = QuantizeMultiplier(
        static_cast<double>(in.quant.scale[0]) * w_scale / static_cast<double>(out.quant.scale[0]));
    p.multipliers.push_back(qm.multiplier);
    p.shifts.push_back(qm.shift);
  }
  return absl::OkStatus();
}

absl::Status MissingSecondOperand(const Graph& g, const Op& op) {
  return absl::FailedPreconditionError(
      absl::StrCat("NPU lowering: ", g.Describe(op), ": second operand missing or unquantized"));
}

// Input -> output rescale for ops that copy or compare values (one multiplier), MUL, ADD/SUB
// and the fixed-point parameters of SOFTMAX/LOGISTIC/TANH.
absl::Status PartitionLowering::FillRequant(const Op& op, KernelParams& p) {
  const Tensor& out = g_.output(op);
  const Tensor& in = g_.input(op, 0);
  if (in.quant.empty() || out.quant.empty()) return absl::OkStatus();  // e.g. RESHAPE of int32
  const double in_scale = in.quant.scale[0];
  const double out_scale = out.quant.scale[0];
  const Tensor* in2 =
      op.inputs.size() > 1 && op.inputs[1] != kNoTensor ? &g_.input(op, 1) : nullptr;
  const bool in2_quantized = in2 != nullptr && !in2->quant.empty();
  if (in2_quantized) p.input2_zp = static_cast<int32_t>(in2->quant.zp());
  auto push = [&p](QuantizedMultiplier qm) {
    p.multipliers.push_back(qm.multiplier);
    p.shifts.push_back(qm.shift);
  };
  switch (op.type) {
    case OpType::kAdd:
    case OpType::kSub:
      if (!in2_quantized) return MissingSecondOperand(g_, op);
      p.add_sub = ComputeElementwiseAddSubParams(op.type, in.quant, in2->quant, out.quant);
      return absl::OkStatus();
    case OpType::kMul:
      if (!in2_quantized) return MissingSecondOperand(g_, op);
      push(QuantizeMultiplier(in_scale * in2->quant.scale[0] / out_scale));
      return absl::OkStatus();
    case OpType::kBatchMatMul:
      if (!in2_quantized) return MissingSecondOperand(g_, op);
      push(ComputeBatchMatMulMultiplier(in.quant.scale[0], in2->quant.scale[0], out_scale));
      return absl::OkStatus();
    case OpType::kSoftmax: {
      const float beta = op.opts<SoftmaxOptions>().beta;
      const SoftmaxParams sm = ComputeSoftmaxParams(beta, in_scale);
      p.fixed_point = FixedPoint{};
      p.fixed_point->input_multiplier = sm.input_multiplier;
      p.fixed_point->input_left_shift = sm.input_left_shift;
      p.fixed_point->diff_min = sm.diff_min;
      p.float_params = {beta};
      return absl::OkStatus();
    }
    case OpType::kLogistic:
    case OpType::kTanh: {
      const SigmoidParams sig = ComputeSigmoidParams(in_scale, in.quant.zp());
      p.fixed_point = FixedPoint{};
      p.fixed_point->input_multiplier = sig.input_multiplier;
      p.fixed_point->input_left_shift = sig.input_left_shift;
      p.fixed_point->input_range_radius = sig.input_range_radius;
      return absl::OkStatus();
    }
    case OpType::kRelu6:
      push(QuantizeMultiplier(1.0));
      return absl::OkStatus();
    case OpType::kLeakyRelu:
      push(QuantizeMultiplier(in_scale / out_scale));
      push(QuantizeMultiplier(in_scale * op.opts<LeakyReluOptions>().alpha / out_scale));
      return absl::OkStatus();
    default:
      push(QuantizeMultiplier(in_scale / out_scale));
      return absl::OkStatus();
  }
}

void PartitionLowering::FillOptions(const Op& op, KernelParams& p) {
  auto b = [](bool v) { return static_cast<int32_t>(v); };
  if (const auto* o = std::get_if<ConcatOptions>(&op.options)) {
    p.axis = o->axis;
  } else if (const auto* o = std::get_if<StridedSliceOptions>(&op.options)) {
    p.int_params = {o->begin_mask,    o->end_mask,         o->ellipsis_mask,
                    o->new_axis_mask, o->shrink_axis_mask, b(o->offset)};
  } else if (const auto* o = std::get_if<SqueezeOptions>(&op.options)) {
    p.int_params = o->squeeze_dims;
  } else if (const auto* o = std::get_if<ReducerOptions>(&op.options)) {
    p.int_params = {b(o->keep_dims)};
  } else if (const auto* o = std::get_if<ResizeOptions>(&op.options)) {
    p.int_params = {b(o->align_corners), b(o->half_pixel_centers)};
  } else if (const auto* o = std::get_if<FullyConnectedOptions>(&op.options)) {
    p.int_params = {b(o->keep_num_dims)};
  } else if (const auto* o = std::get_if<BatchMatMulOptions>(&op.options)) {
    p.int_params = {b(o->adj_x), b(o->adj_y)};
  } else if (const auto* o = std::get_if<LeakyReluOptions>(&op.options)) {
    p.float_params = {o->alpha};
  }
}

absl::Status PartitionLowering::FillParams(const Op& op, KernelParams& p) {
  const Tensor& out = g_.output(op);
  const Tensor& in = g_.input(op, 0);
  p.input_zp = static_cast<int32_t>(in.quant.zp());
  p.output_zp = static_cast<int32_t>(out.quant.zp());
  if (op.type == OpType::kRelu6) {
    // TFLite Micro clamps the raw input between its quantized 0 and 6: an identity rescale onto
    // the input's zero point (FillRequant) and the input's RELU6 range.
    p.output_zp = p.input_zp;
    p.range = ComputeActivationRange(Activation::kRelu6, in.quant.scale[0], in.quant.zp());
  } else if (!out.quant.empty()) {
    Activation act = FusedActivation(op);
    if (op.type == OpType::kRelu) act = Activation::kRelu;
    p.range = ComputeActivationRange(act, out.quant.scale[0], out.quant.zp());
  }
  FillOptions(op, p);
  const bool conv_like = op.type == OpType::kConv2D || op.type == OpType::kDepthwiseConv2D ||
                         op.type == OpType::kFullyConnected;
  if (op.type == OpType::kConv2D || op.type == OpType::kDepthwiseConv2D ||
      op.type == OpType::kAveragePool2D || op.type == OpType::kMaxPool2D) {
    if (absl::Status s = FillWindow(op, p); !s.ok()) return s;
  }
  if (conv_like) return FillConvLike(op, p);
  for (int t : op.inputs) {
    if (t != kNoTensor && g_.tensors[t].is_constant) {
      if (absl::Status s = AddConstantOperand(t); !s.ok()) return s;
    }
  }
  return FillRequant(op, p);
}

// Gathers a kernel's parameters and appends its constants to the weight section.
absl::Status PartitionLowering::PrepareKernel(const Op& op) {
  const size_t weights_before = weights_.size();
  KernelParams p;
  if (absl::Status s = FillParams(op, p); !s.ok()) return s;
  // Everything appended for this kernel is one contiguous range: what a Prefetch copies.
  const uint64_t begin = AlignUp(static_cast<int64_t>(weights_before), kNpuPayloadAlignment);
  const ByteRange constants =
      weights_.size() > begin ? ByteRange{begin, weights_.size() - begin} : ByteRange{};
  kernel_constants_.push_back(constants);
  params_.push_back(std::move(p));
  return absl::OkStatus();
}

// With weights in flash, kernels with constants read them from scratch slots: two (double
// buffering, weighted kernels alternate) unless the memory plan only has room for one slot.
// Returns the slot size (0 when constants are read in place).
int64_t PartitionLowering::AssignSlots() {
  slots_.assign(kernel_constants_.size(), -1);
  if (!c_.memory.weights_in_flash) return 0;
  int64_t slot_size = 0;
  for (size_t k = 0; k < kernel_constants_.size(); ++k) {
    if (kernel_constants_[k].size == 0) continue;
    weighted_kernels_.push_back(static_cast<int>(k));
    slot_size = std::max(
        slot_size, AlignUp(static_cast<int64_t>(kernel_constants_[k].size), kNpuPayloadAlignment));
  }
  const int64_t window = c_.memory.weight_scratch_bytes;
  num_slots_ = window > 0 && window < 2 * slot_size ? 1 : 2;
  for (size_t i = 0; i < weighted_kernels_.size(); ++i) {
    slots_[weighted_kernels_[i]] = static_cast<int32_t>(i % num_slots_);
  }
  return slot_size;
}

absl::StatusOr<flatbuffers::Offset<fb::NpuKernel>> PartitionLowering::SerializeKernel(const Op& op,
                                                                                      int k) {
  absl::StatusOr<fb::KernelKind> kind =
      IsSingleChannelDepthwise(g_, op) ? fb::KernelKind::Conv2D : KernelKindOf(op.type);
  if (!kind.ok()) return kind.status();
  KernelParams& p = params_[k];
  const ByteRange constants = kernel_constants_[k];
  const int32_t slot = slots_[k];

  std::vector<int32_t> inputs;
  const bool conv_like = op.type == OpType::kConv2D || op.type == OpType::kDepthwiseConv2D ||
                         op.type == OpType::kFullyConnected;
  for (size_t i = 0; i < (conv_like ? 1 : op.inputs.size()); ++i)
    inputs.push_back(Ref(op.inputs[i]));
  std::vector<int32_t> outputs;
  for (int t : op.outputs) outputs.push_back(Ref(t));

  flatbuffers::Offset<fb::Geometry> geometry = 0;
  if (p.has_geometry) {
    const Geometry& g = p.geometry;
    geometry = fb::CreateGeometry(fbb_, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                                  g.dilation_h, g.dilation_w, g.pad_top, g.pad_left, g.pad_bottom,
                                  g.pad_right, g.depth_multiplier);
  }
  flatbuffers::Offset<fb::AddSubParams> add_sub = 0;
  if (p.add_sub) {
    const AddSubParams& a = *p.add_sub;
    add_sub = fb::CreateAddSubParams(fbb_, a.left_shift, a.input1.multiplier, a.input1.shift,
                                     a.input2.multiplier, a.input2.shift, a.output.multiplier,
                                     a.output.shift);
    p.input_zp = -a.input1_offset;
    p.input2_zp = -a.input2_offset;
  }
  flatbuffers::Offset<fb::FixedPointParams> fixed_point = 0;
  if (p.fixed_point) {
    const FixedPoint& f = *p.fixed_point;
    fixed_point = fb::CreateFixedPointParams(fbb_, f.input_multiplier, f.input_left_shift,
                                             f.input_range_radius, f.diff_min);
  }
  const fb::Range weights(p.weights.offset, p.weights.size);
  const fb::Range bias(p.bias.offset, p.bias.size);
  const fb::Range consts(constants.offset, constants.size);
  return fb::CreateNpuKernelDirect(
      fbb_, *kind, &inputs, &outputs, geometry, &p.multipliers, &p.shifts, p.input_zp, p.input2_zp,
      p.output_zp, p.range.min, p.range.max, add_sub, fixed_point, &weights, &bias, &consts, slot,
      p.axis, &p.int_params, &p.float_params, first_debug_id_ + k);
}

NpuDebugEntry PartitionLowering::DebugEntry(const Op& op, int k) const {
  NpuDebugEntry e;
  e.kernel = k;
  e.debug_id = first_debug_id_ + k;
  std::set<int> sources(op.fused_sources.begin(), op.fused_sources.end());
  if (op.source_index >= 0) sources.insert(op.source_index);
  e.source_ops.assign(sources.begin(), sources.end());
  for (int t : op.outputs) e.names.push_back(g_.tensors[t].name);
  e.name = g_.Describe(op);
  e.macs = g_.Macs(op);
  return e;
}

absl::StatusOr<flatbuffers::Offset<fb::Tensor>> PartitionLowering::BuildTensor(
    const TensorEntry& e) {
  const Tensor& t = g_.tensors[e.graph_index];
  absl::StatusOr<fb::ElementType> type = ElementTypeOf(t.type);
  if (!type.ok()) return type.status();
  const float scale = t.quant.empty() ? 0.0f : t.quant.scale[0];
  return fb::CreateTensorDirect(fbb_, e.kind, *type, &t.shape, scale,
                                static_cast<int32_t>(t.quant.zp()), e.arg_index, e.arena_offset,
                                e.weights_offset, e.weights_size, t.name.c_str());
}

std::vector<uint8_t> PartitionLowering::AssembleBlob() {
  const uint8_t* fb_data = fbb_.GetBufferPointer();
  const size_t fb_size = fbb_.GetSize();
  // Sized once and filled with memcpy: GCC 12's -O3 misreads vector::insert growth here as an
  // overflow (-Wstringop-overflow).
  const size_t fb_padded = AlignUp(fb_size, kNpuPayloadAlignment);
  std::vector<uint8_t> blob(kNpuPayloadHeaderBytes + fb_padded + weights_.size(), 0);
  std::memcpy(blob.data(), kNpuPayloadMagic.data(), kNpuPayloadMagic.size());
  PutU32(blob.data() + 4, kNpuPayloadVersion);
  PutU32(blob.data() + 8, static_cast<uint32_t>(fb_size));
  PutU32(blob.data() + 12, static_cast<uint32_t>(weights_.size()));
  std::memcpy(blob.data() + kNpuPayloadHeaderBytes, fb_data, fb_size);
  if (!weights_.empty()) {
    std::memcpy(blob.data() + kNpuPayloadHeaderBytes + fb_padded, weights_.data(), weights_.size());
  }
  return blob;
}

void PartitionLowering::BuildCommands(std::vector<fb::Command>& types,
                                      std::vector<flatbuffers::Offset<void>>& values) {
  // Weighted kernel i uses slot i % num_slots, so the prefetch for kernel i + num_slots can
  // start as soon as kernel i has run: with two slots the DMA overlaps the kernels in between.
  auto prefetch = [&](size_t i) {
    if (i >= weighted_kernels_.size()) return;
    const ByteRange r = kernel_constants_[weighted_kernels_[i]];
    types.push_back(fb::Command::Prefetch);
    values.push_back(fb::CreatePrefetch(fbb_, r.offset, r.size, i % num_slots_).Union());
  };
  for (int i = 0; i < num_slots_; ++i) prefetch(i);
  size_t next_weighted = 0;
  for (size_t k = 0; k < ops_.size(); ++k) {
    types.push_back(fb::Command::RunKernel);
    values.push_back(fb::CreateRunKernel(fbb_, static_cast<uint32_t>(k)).Union());
    if (next_weighted < weighted_kernels_.size() &&
        weighted_kernels_[next_weighted] == static_cast<int>(k)) {
      prefetch(next_weighted + num_slots_);
      ++next_weighted;
    }
  }
}

absl::StatusOr<NpuPartitionBlob> PartitionLowering::Run() {
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    const Op& op = g_.ops[i];
    if (!op.dead && op.unit == Unit::kNpu && op.partition == partition_) {
      ops_.push_back(static_cast<int>(i));
    }
  }
  if (ops_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("NPU lowering: NPU partition ", partition_, " has no ops"));
  }
  if (absl::Status s = ClassifyTensors(); !s.ok()) return s;

  NpuPartitionBlob blob;
  blob.partition = partition_;
  std::vector<flatbuffers::Offset<fb::NpuKernel>> kernels;
  std::vector<flatbuffers::Offset<fb::KernelDebugInfo>> debug;
  for (int op_index : ops_) {
    if (absl::Status s = PrepareKernel(g_.ops[op_index]); !s.ok()) return s;
  }
  const int64_t slot_size = AssignSlots();
  for (size_t k = 0; k < ops_.size(); ++k) {
    const Op& op = g_.ops[ops_[k]];
    absl::StatusOr<flatbuffers::Offset<fb::NpuKernel>> kernel = SerializeKernel(op, k);
    if (!kernel.ok()) return kernel.status();
    kernels.push_back(*kernel);
    blob.debug.push_back(DebugEntry(op, k));
    const NpuDebugEntry& e = blob.debug.back();
    debug.push_back(fb::CreateKernelDebugInfo(fbb_, k, fbb_.CreateVector(e.source_ops),
                                              fbb_.CreateVectorOfStrings(e.names)));
  }
  std::vector<fb::Command> command_types;
  std::vector<flatbuffers::Offset<void>> commands;
  BuildCommands(command_types, commands);

  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorEntry& e : tensors_) {
    absl::StatusOr<flatbuffers::Offset<fb::Tensor>> t = BuildTensor(e);
    if (!t.ok()) return t.status();
    tensors.push_back(*t);
  }

  int64_t scratch_base = -1, scratch_end = 0;
  for (int t : intermediates_) {
    const TensorEntry& e = tensors_[t];
    scratch_base = scratch_base < 0 ? e.arena_offset : std::min(scratch_base, e.arena_offset);
    scratch_end = std::max(scratch_end, e.arena_offset + g_.tensors[e.graph_index].SizeBytes());
  }
  const int64_t scratch_size = scratch_base < 0 ? 0 : scratch_end - scratch_base;
  scratch_base = std::max<int64_t>(scratch_base, 0);

  // Reported for every kernel, so the weight placement can size the scratch window before it
  // decides to put the weights in flash.
  for (const ByteRange& r : kernel_constants_) {
    blob.largest_kernel_weight_bytes =
        std::max(blob.largest_kernel_weight_bytes,
                 AlignUp(static_cast<int64_t>(r.size), kNpuPayloadAlignment));
  }
  blob.weight_scratch_bytes = num_slots_ * slot_size;
  std::vector<int32_t> inputs(inputs_.begin(), inputs_.end());
  std::vector<int32_t> outputs(outputs_.begin(), outputs_.end());
  std::vector<int32_t> intermediates(intermediates_.begin(), intermediates_.end());
  const auto program = fb::CreateNpuProgramDirect(
      fbb_, kNpuPayloadVersion, &kernels, &command_types, &commands, &tensors, &inputs, &outputs,
      &intermediates, scratch_base, scratch_size, weights_.size(), blob.weight_scratch_bytes,
      slot_size, kNpuPipes, c_.target.npu.num_macs > 0 ? c_.target.npu.num_macs : 8, &debug);
  fbb_.Finish(program, fb::NpuProgramIdentifier());

  for (int t : inputs_) blob.input_tensors.push_back(tensors_[t].graph_index);
  for (int t : outputs_) blob.output_tensors.push_back(tensors_[t].graph_index);
  blob.weight_bytes = static_cast<int64_t>(weights_.size());
  blob.bytes = AssembleBlob();
  return blob;
}

}  // namespace

absl::StatusOr<std::vector<NpuPartitionBlob>> LowerNpuPartitions(const Compilation& c) {
  std::vector<int> kernels_per_partition(std::max(c.num_partitions, 0), 0);
  for (const Op& op : c.graph.ops) {
    if (op.dead || op.unit != Unit::kNpu) continue;
    if (op.partition < 0 || op.partition >= c.num_partitions) {
      return absl::FailedPreconditionError(
          absl::StrCat("NPU lowering: ", c.graph.Describe(op), " is in NPU partition ",
                       op.partition, " but the graph has ", c.num_partitions, " partitions"));
    }
    ++kernels_per_partition[op.partition];
  }
  // Debug ids all have the same number of digits so that none is a substring of another: the
  // ExecuTorch Inspector matches delegate ids against map keys by substring
  // (executorch-formats.md section 6), so kernel 1 would otherwise collect kernel 11's ops.
  int total = 0;
  for (int n : kernels_per_partition) total += n;
  int base = 10;
  for (int v = std::max(total - 1, 0); v >= 10; v /= 10) base *= 10;

  std::vector<NpuPartitionBlob> blobs;
  int first_id = base;
  for (int p = 0; p < c.num_partitions; ++p) {
    absl::StatusOr<NpuPartitionBlob> blob = PartitionLowering(c, p, first_id).Run();
    if (!blob.ok()) return blob.status();
    first_id += kernels_per_partition[p];
    blobs.push_back(*std::move(blob));
  }
  return blobs;
}

absl::StatusOr<NpuPayloadView> ParseNpuPayload(std::span<const uint8_t> blob) {
  if (blob.size() < kNpuPayloadHeaderBytes ||
      std::memcmp(blob.data(), kNpuPayloadMagic.data(), kNpuPayloadMagic.size()) != 0) {
    return absl::InvalidArgumentError("NPU payload: missing BLNP header");
  }
  NpuPayloadView view;
  view.version = GetU32(blob.data() + 4);
  const uint64_t fb_size = GetU32(blob.data() + 8);
  const uint64_t weights_size = GetU32(blob.data() + 12);
  const uint64_t weights_begin = kNpuPayloadHeaderBytes + AlignUp(fb_size, kNpuPayloadAlignment);
  if (view.version != kNpuPayloadVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("NPU payload: unsupported version ", view.version));
  }
  if (weights_begin + weights_size > blob.size()) {
    return absl::InvalidArgumentError(absl::StrCat("NPU payload: sections (flatbuffer ", fb_size,
                                                   ", weights ", weights_size,
                                                   ") exceed the blob size ", blob.size()));
  }
  view.flatbuffer = blob.subspan(kNpuPayloadHeaderBytes, fb_size);
  view.weights = blob.subspan(weights_begin, weights_size);
  return view;
}

std::vector<int8_t> ReorderConvWeights(std::span<const int8_t> ohwi, int out_channels, int kernel_h,
                                       int kernel_w, int in_channels, int block_out, int block_in) {
  const int in_blocks = CeilDiv(in_channels, block_in);
  const int block = block_out * block_in;
  std::vector<int8_t> out(static_cast<size_t>(CeilDiv(out_channels, block_out)) * kernel_h *
                              kernel_w * in_blocks * block,
                          0);
  for (int o = 0; o < out_channels; ++o) {
    for (int y = 0; y < kernel_h; ++y) {
      for (int x = 0; x < kernel_w; ++x) {
        const size_t src_row =
            ((static_cast<size_t>(o) * kernel_h + y) * kernel_w + x) * in_channels;
        const size_t dst_tap = ((static_cast<size_t>(o / block_out) * kernel_h + y) * kernel_w + x);
        for (int i = 0; i < in_channels; ++i) {
          const size_t dst = (dst_tap * in_blocks + i / block_in) * block +
                             (o % block_out) * block_in + i % block_in;
          out[dst] = ohwi[src_row + i];
        }
      }
    }
  }
  return out;
}

std::vector<int8_t> ReorderDepthwiseWeights(std::span<const int8_t> hwc, int kernel_h, int kernel_w,
                                            int channels, int block) {
  const int padded = CeilDiv(channels, block) * block;
  std::vector<int8_t> out(static_cast<size_t>(kernel_h) * kernel_w * padded, 0);
  for (int tap = 0; tap < kernel_h * kernel_w; ++tap) {
    for (int ch = 0; ch < channels; ++ch) {
      out[static_cast<size_t>(tap) * padded + ch] = hwc[static_cast<size_t>(tap) * channels + ch];
    }
  }
  return out;
}

}  // namespace boardlab::compiler
