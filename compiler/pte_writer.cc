#include "compiler/pte_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "boardlab/schema/program_generated.h"
#include "compiler/quantization.h"
#include "compiler/validate_ops.h"
#include "nlohmann/json.hpp"

namespace boardlab::compiler {
namespace {

namespace et = ::executorch_flatbuffer;

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

template <typename T>
void PutLe(std::vector<uint8_t>& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <typename T>
T GetLe(const uint8_t* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

absl::StatusOr<et::ScalarType> ScalarTypeOf(const Tensor& t) {
  switch (t.type) {
    case DataType::kInt8:
      return et::ScalarType::CHAR;
    case DataType::kUint8:
      return et::ScalarType::BYTE;
    case DataType::kInt16:
      return et::ScalarType::SHORT;
    case DataType::kInt32:
      return et::ScalarType::INT;
    case DataType::kInt64:
      return et::ScalarType::LONG;
    case DataType::kFloat32:
      return et::ScalarType::FLOAT;
    case DataType::kBool:
      return et::ScalarType::BOOL;
    case DataType::kUint32:
      return et::ScalarType::UINT32;
    case DataType::kUint64:
      return et::ScalarType::UINT64;
    case DataType::kResource:
    case DataType::kOther:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("PTE writer: tensor '", t.name, "' has a type ExecuTorch cannot express"));
}

double ScaleOf(const Tensor& t) { return t.quant.empty() ? 0.0 : t.quant.scale[0]; }

// The TFLite SAME split (odd remainder after) along one axis.
std::pair<int64_t, int64_t> SamePadding(Padding padding, int in, int out, int k, int stride,
                                        int dilation) {
  if (padding != Padding::kSame) return {0, 0};
  const int effective = (k - 1) * dilation + 1;
  const int total = std::max(0, (out - 1) * stride + effective - in);
  return {total / 2, total - total / 2};
}

// Builds the Program flatbuffer. Values are appended as instructions need them; every graph
// tensor gets one value.
class ProgramBuilder {
 public:
  ProgramBuilder(const Compilation& c, const std::vector<NpuPartitionBlob>& blobs)
      : c_(c), g_(c.graph), blobs_(blobs) {}

  absl::StatusOr<std::vector<uint8_t>> Build();

 private:
  // Values.
  int Push(flatbuffers::Offset<et::EValue> value) {
    values_.push_back(value);
    return static_cast<int>(values_.size()) - 1;
  }
  int Int(int64_t v) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::Int, et::CreateInt(fbb_, v).Union()));
  }
  int Bool(bool v) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::Bool, et::CreateBool(fbb_, v).Union()));
  }
  int Double(double v) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::Double, et::CreateDouble(fbb_, v).Union()));
  }
  int IntList(const std::vector<int64_t>& v) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::IntList,
                                 et::CreateIntListDirect(fbb_, &v).Union()));
  }
  int DoubleList(const std::vector<double>& v) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::DoubleList,
                                 et::CreateDoubleListDirect(fbb_, &v).Union()));
  }
  int TensorList(const std::vector<int>& tensors) {
    return Push(et::CreateEValue(fbb_, et::KernelTypes::TensorList,
                                 et::CreateTensorListDirect(fbb_, &tensors).Union()));
  }
  int Null();
  uint32_t AddConstant(const uint8_t* data, size_t size);
  uint32_t AddMutableData(const Tensor& tensor);
  int ConstantInt32Tensor(const std::vector<int32_t>& v);
  absl::StatusOr<flatbuffers::Offset<et::AllocationDetails>> Planned(
      uint32_t memory_id, const std::vector<int64_t>& offsets, int t, const char* buffer);
  absl::StatusOr<int> TensorValue(int t);
  absl::Status Inputs(const Op& op, std::vector<int>& args);
  absl::Status Outputs(const Op& op, std::vector<int>& args);

  // Per-op parameter lists (docs/artifact-format.md, "CPU kernel arguments").
  absl::Status Params(const Op& op, std::vector<int>& args);
  void ConvParams(const Op& op, std::vector<int>& args);
  void ChannelQuantParams(const Op& op, const Tensor& in, std::vector<int>& args);
  void FullyConnectedParams(const Op& op, std::vector<int>& args);
  void PoolParams(const Op& op, std::vector<int>& args);
  void TransposeConvParams(const Op& op, std::vector<int>& args);
  void SvdfParams(const Op& op, std::vector<int>& args);
  void DetectionPostprocessParams(const Op& op, std::vector<int>& args);
  void LstmParams(const Op& op, std::vector<int>& args);
  void ElementwiseParams(const Op& op, std::vector<int>& args);
  void GenericParams(const Op& op, std::vector<int>& args);
  void SignalFilterBankParams(OpType type, const SignalOptions& o, std::vector<int>& args);
  void StreamParams(const Op& op, const StreamOptions& o, std::vector<int>& args);
  void ActivationParams(const Op& op, Activation act, std::vector<int>& args);
  // The clamp range of `act` quantized with `t`'s scale and zero point, in its element type.
  void RangeParams(const Tensor& t, Activation act, std::vector<int>& args);

  // Instructions.
  absl::StatusOr<flatbuffers::Offset<et::Instruction>> KernelCall(const Op& op);
  absl::StatusOr<flatbuffers::Offset<et::Instruction>> DelegateCall(int partition);
  absl::StatusOr<flatbuffers::Offset<et::Instruction>> ControlFlowStep(const ChainStep& step);
  absl::StatusOr<flatbuffers::Offset<et::Instruction>> HelperCall(const std::string& name,
                                                                  std::vector<int> args);
  int OperatorIndex(const Op& op);
  int OperatorIndex(const std::string& name);
  uint32_t BlobSegment(const NpuPartitionBlob& blob);

  bool NeedsConstantSegment() const;
  bool NeedsMutableSegment() const { return c_.memory.state_bytes > 0; }
  absl::StatusOr<flatbuffers::Offset<et::ExecutionPlan>> Plan();
  std::vector<uint8_t> Container(std::span<const uint8_t> flatbuffer,
                                 const std::vector<std::span<const uint8_t>>& segments) const;

  const Compilation& c_;
  const Graph& g_;
  const std::vector<NpuPartitionBlob>& blobs_;
  std::vector<ChainStep> chain_;
  flatbuffers::FlatBufferBuilder fbb_;
  // The jump flag that condition kernels set and conditional jumps read, and the constant false
  // that unconditional jumps read (JumpFalseCall is ExecuTorch's only jump).
  int jump_flag_ = -1;
  int always_false_ = -1;
  std::vector<flatbuffers::Offset<et::EValue>> values_;
  std::map<int, int> tensor_values_;  // graph tensor -> value
  int null_value_ = -1;
  std::vector<uint8_t> constant_data_;
  std::vector<uint64_t> constant_offsets_ = {0};  // [0] is the reserved empty placeholder
  // Initial (reset) values of the variable tensors: ExecuTorch's mutable-data segment.
  std::vector<uint8_t> mutable_data_;
  std::vector<uint64_t> mutable_offsets_ = {0};  // [0] is the reserved empty placeholder
  std::vector<flatbuffers::Offset<et::Operator>> operators_;
  std::map<std::string, int> operator_index_;
  // Each TFLite operator's KernelCall arguments, by what identifies the operator: a subgraph's ops
  // are inlined at every call site, and a copy per handle binding shares the original's tensors.
  // One argument list for all of them makes them one kernel instance at run time, sharing state
  // as TFLite Micro's single node per operator does (docs/artifact-format.md 2.2).
  std::map<std::tuple<OpType, int, std::vector<int>, std::vector<int>>, std::vector<int>>
      kernel_args_;
  std::vector<flatbuffers::Offset<et::BackendDelegate>> delegates_;
  std::vector<const std::vector<uint8_t>*> delegate_segments_;  // distinct blobs, in order
  // Segment 0 is the constant segment when there are constants, then the mutable-data segment
  // when there is state (executorch-formats.md 1.2 segment order); delegate segments follow.
  uint32_t mutable_segment_ = 0;
  uint32_t first_delegate_segment_ = 0;
};

int ProgramBuilder::Null() {
  if (null_value_ < 0) {
    null_value_ = Push(et::CreateEValue(fbb_, et::KernelTypes::Null, et::CreateNull(fbb_).Union()));
  }
  return null_value_;
}

uint32_t ProgramBuilder::AddConstant(const uint8_t* data, size_t size) {
  // Every tensor starts 16-aligned within the segment (and the segment is 128-aligned).
  constant_data_.resize(AlignUp(constant_data_.size(), kPteConstantAlignment), 0);
  constant_offsets_.push_back(constant_data_.size());
  constant_data_.insert(constant_data_.end(), data, data + size);
  return static_cast<uint32_t>(constant_offsets_.size() - 1);
}

// TFLite Micro's ResetVariableTensors: int8 variables start at their zero point, all others at 0;
// a tensor with its own reset_fill (resource variables, CALL_ONCE's flag) starts at that byte.
uint32_t ProgramBuilder::AddMutableData(const Tensor& tensor) {
  uint8_t fill =
      tensor.type == DataType::kInt8 ? static_cast<uint8_t>(tensor.quant.zp()) : uint8_t{0};
  if (tensor.reset_fill >= 0) fill = static_cast<uint8_t>(tensor.reset_fill);
  mutable_offsets_.push_back(mutable_data_.size());
  mutable_data_.insert(mutable_data_.end(), static_cast<size_t>(tensor.SizeBytes()), fill);
  return static_cast<uint32_t>(mutable_offsets_.size() - 1);
}

int ProgramBuilder::ConstantInt32Tensor(const std::vector<int32_t>& v) {
  std::vector<uint8_t> bytes;
  for (int32_t x : v) PutLe(bytes, static_cast<uint32_t>(x));
  const uint32_t buffer = AddConstant(bytes.data(), bytes.size());
  const std::vector<int32_t> sizes = {static_cast<int32_t>(v.size())};
  const std::vector<uint8_t> dim_order = {0};
  auto tensor =
      et::CreateTensorDirect(fbb_, et::ScalarType::INT, 0, &sizes, &dim_order, false, buffer);
  return Push(et::CreateEValue(fbb_, et::KernelTypes::Tensor, tensor.Union()));
}

// Tensor `t` planned into buffer `memory_id` at offsets[t]; FailedPrecondition when the plan
// has no offset for it.
absl::StatusOr<flatbuffers::Offset<et::AllocationDetails>> ProgramBuilder::Planned(
    uint32_t memory_id, const std::vector<int64_t>& offsets, int t, const char* buffer) {
  const int64_t offset = t < static_cast<int>(offsets.size()) ? offsets[t] : -1;
  if (offset < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("PTE writer: tensor '", g_.tensors[t].name, "' has no ", buffer, " offset"));
  }
  return et::CreateAllocationDetails(fbb_, memory_id, static_cast<uint32_t>(offset & 0xFFFFFFFF),
                                     static_cast<uint32_t>(offset >> 32));
}

absl::StatusOr<int> ProgramBuilder::TensorValue(int t) {
  if (auto it = tensor_values_.find(t); it != tensor_values_.end()) return it->second;
  const Tensor& tensor = g_.tensors[t];
  absl::StatusOr<et::ScalarType> type = ScalarTypeOf(tensor);
  if (!type.ok()) return type.status();
  std::vector<uint8_t> dim_order(tensor.shape.size());
  for (size_t i = 0; i < dim_order.size(); ++i) dim_order[i] = static_cast<uint8_t>(i);
  uint32_t buffer = 0;
  absl::StatusOr<flatbuffers::Offset<et::AllocationDetails>> allocation =
      flatbuffers::Offset<et::AllocationDetails>();
  flatbuffers::Offset<et::ExtraTensorInfo> extra = 0;
  if (tensor.is_constant) {
    buffer = AddConstant(tensor.data.data(), tensor.data.size());
  } else if (tensor.is_variable) {
    // Memory-planned with an initial value (executorch-formats.md 1.5): the runtime copies the
    // reset value into the state buffer when it loads the method.
    allocation = Planned(kStateMemoryId, c_.memory.state_offset, t, "state");
    buffer = AddMutableData(tensor);
    extra = et::CreateExtraTensorInfo(fbb_, /*mutable_data_segments_idx=*/0);
  } else {
    allocation = Planned(kArenaMemoryId, c_.memory.tensor_offset, t, "arena");
  }
  if (!allocation.ok()) return allocation.status();
  auto value = et::CreateTensorDirect(fbb_, *type, 0, &tensor.shape, &dim_order, false, buffer,
                                      *allocation, 0, et::TensorShapeDynamism::STATIC, extra);
  const int index = Push(et::CreateEValue(fbb_, et::KernelTypes::Tensor, value.Union()));
  tensor_values_[t] = index;
  return index;
}

absl::Status ProgramBuilder::Inputs(const Op& op, std::vector<int>& args) {
  std::vector<int> inputs;
  for (int t : op.inputs) {
    if (t == kNoTensor) {
      inputs.push_back(Null());
      continue;
    }
    absl::StatusOr<int> v = TensorValue(t);
    if (!v.ok()) return v.status();
    inputs.push_back(*v);
  }
  if (op.type != OpType::kConcatenation && op.type != OpType::kPack && op.type != OpType::kAddN) {
    args.insert(args.end(), inputs.begin(), inputs.end());
    return absl::OkStatus();
  }
  // Variadic: the kernel gets its inputs as one TensorList, like aten::cat.
  args.push_back(TensorList(inputs));
  return absl::OkStatus();
}

// Ops with several outputs (SPLIT, SPLIT_V, UNPACK) get them as one TensorList, so that the
// output stays the last argument of every kernel call.
absl::Status ProgramBuilder::Outputs(const Op& op, std::vector<int>& args) {
  std::vector<int> outputs;
  for (int t : op.outputs) {
    absl::StatusOr<int> v = TensorValue(t);
    if (!v.ok()) return v.status();
    outputs.push_back(*v);
  }
  const bool listed =
      op.type == OpType::kSplit || op.type == OpType::kSplitV || op.type == OpType::kUnpack;
  if (listed) {
    args.push_back(TensorList(outputs));
  } else {
    args.insert(args.end(), outputs.begin(), outputs.end());
  }
  return absl::OkStatus();
}

void ProgramBuilder::ActivationParams(const Op& op, Activation act, std::vector<int>& args) {
  RangeParams(g_.output(op), act, args);
}

void ProgramBuilder::RangeParams(const Tensor& t, Activation act, std::vector<int>& args) {
  const bool int16 = t.type == DataType::kInt16;
  const ActivationRange r =
      t.quant.empty() ? ActivationRange{}
                      : ComputeActivationRange(act, ScaleOf(t), t.quant.zp(),
                                               int16 ? INT16_MIN : -128, int16 ? INT16_MAX : 127);
  args.push_back(Int(r.min));
  args.push_back(Int(r.max));
}

void ProgramBuilder::ConvParams(const Op& op, std::vector<int>& args) {
  const auto& o = op.opts<ConvOptions>();
  const Tensor& in = g_.input(op, 0);
  const Tensor& w = g_.input(op, 1);
  const Tensor& out = g_.output(op);
  const auto [top, bottom] =
      SamePadding(o.padding, in.shape[1], out.shape[1], w.shape[1], o.stride_h, o.dilation_h);
  const auto [left, right] =
      SamePadding(o.padding, in.shape[2], out.shape[2], w.shape[2], o.stride_w, o.dilation_w);
  args.push_back(IntList({o.stride_h, o.stride_w}));
  args.push_back(IntList({top, left, bottom, right}));
  args.push_back(IntList({o.dilation_h, o.dilation_w}));
  if (op.type == OpType::kDepthwiseConv2D) args.push_back(Int(o.depth_multiplier));
  ChannelQuantParams(op, in, args);
  ActivationParams(op, o.activation, args);
}

// Zero points and per-channel (multiplier, shift) of conv-like ops (weights at input 1, the
// activation input `in`).
void ProgramBuilder::ChannelQuantParams(const Op& op, const Tensor& in, std::vector<int>& args) {
  const Tensor& w = g_.input(op, 1);
  const Tensor& out = g_.output(op);
  std::vector<int32_t> multipliers, shifts;
  for (size_t ch = 0; ch < std::max<size_t>(w.quant.scale.size(), 1); ++ch) {
    const double w_scale = w.quant.empty() ? 0.0 : w.quant.scale[ch];
    const double out_scale = ScaleOf(out);
    const QuantizedMultiplier qm =
        QuantizeMultiplier(out_scale == 0 ? 0.0 : ScaleOf(in) * w_scale / out_scale);
    multipliers.push_back(qm.multiplier);
    shifts.push_back(qm.shift);
  }
  args.push_back(Int(in.quant.zp()));
  args.push_back(Int(out.quant.zp()));
  args.push_back(ConstantInt32Tensor(multipliers));
  args.push_back(ConstantInt32Tensor(shifts));
}

void ProgramBuilder::FullyConnectedParams(const Op& op, std::vector<int>& args) {
  ChannelQuantParams(op, g_.input(op, 0), args);
  const auto& o = op.opts<FullyConnectedOptions>();
  ActivationParams(op, o.activation, args);
  args.push_back(Bool(o.keep_num_dims));
}

// TRANSPOSE_CONV pads as TFLite Micro does: the SAME padding of the convolution that would map
// the output back onto the input (window and stride over the output's height and width).
void ProgramBuilder::TransposeConvParams(const Op& op, std::vector<int>& args) {
  const auto& o = op.opts<ConvOptions>();
  const Tensor& w = g_.input(op, 1);
  const Tensor& out = g_.output(op);
  auto padding = [&](int size, int k, int stride) {
    return SamePadding(o.padding, size, WindowedOutputSize(o.padding, size, k, stride, 1), k,
                       stride, 1);
  };
  const auto [top, bottom] = padding(out.shape[1], w.shape[1], o.stride_h);
  const auto [left, right] = padding(out.shape[2], w.shape[2], o.stride_w);
  args.push_back(IntList({o.stride_h, o.stride_w}));
  args.push_back(IntList({top, left, bottom, right}));
  ChannelQuantParams(op, g_.input(op, 2), args);
  ActivationParams(op, Activation::kNone, args);
}

// SVDF: TFLite Micro's PrepareSvdf forms both effective scales in float (the products and the
// quotient rounded to float32) before QuantizeMultiplier; so does this.
void ProgramBuilder::SvdfParams(const Op& op, std::vector<int>& args) {
  const Tensor& in = g_.input(op, 0);
  const float in_scale = in.quant.scale[0];
  const float feature_scale = g_.input(op, 1).quant.scale[0];
  const float time_scale = g_.input(op, 2).quant.scale[0];
  const Tensor& state = g_.input(op, 4);
  const float state_scale = state.quant.scale[0];
  const Tensor& out = g_.output(op);
  const float out_scale = out.quant.scale[0];
  const QuantizedMultiplier feature =
      QuantizeMultiplier(static_cast<double>(in_scale * feature_scale / state_scale));
  const QuantizedMultiplier time =
      QuantizeMultiplier(static_cast<double>(state_scale * time_scale / out_scale));
  for (int64_t v : {int64_t{op.opts<SvdfOptions>().rank}, in.quant.zp(), state.quant.zp(),
                    out.quant.zp(), int64_t{feature.multiplier}, int64_t{feature.shift},
                    int64_t{time.multiplier}, int64_t{time.shift}}) {
    args.push_back(Int(v));
  }
}

// TFLite_Detection_PostProcess: its flexbuffer options as kernel values (the float thresholds
// and scales exactly, as Doubles), then the inputs' zero points and scales (0 when float32).
void ProgramBuilder::DetectionPostprocessParams(const Op& op, std::vector<int>& args) {
  const auto& o = op.opts<DetectionPostprocessOptions>();
  for (int32_t v :
       {o.max_detections, o.max_classes_per_detection, o.detections_per_class, o.num_classes}) {
    args.push_back(Int(v));
  }
  args.push_back(Bool(o.use_regular_nms));
  for (float v :
       {o.nms_score_threshold, o.nms_iou_threshold, o.y_scale, o.x_scale, o.h_scale, o.w_scale}) {
    args.push_back(Double(v));
  }
  std::vector<int64_t> zero_points;
  std::vector<double> scales;
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& t = g_.input(op, i);
    zero_points.push_back(t.quant.zp());
    scales.push_back(ScaleOf(t));
  }
  args.push_back(IntList(zero_points));
  args.push_back(DoubleList(scales));
}

// UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite Micro's integer LSTM: each gate's two FCs write Q3.12
// (scale 2^-12), their multipliers formed as GetQuantizedConvolutionMultipler does (the scale
// product in float, the quotient in double); the gate products are Q0.15 (2^-15) and their
// multipliers CreateInterGateMulParams's (in double). Per gate in the kernel's order (input,
// forget, cell, output): input FC multiplier and shift, recurrent FC multiplier and shift, the two
// weight zero points; then the three inter-gate multipliers, the cell scale's power of two, the
// quantized cell clip (truncated, as TFLite Micro's static_cast) and whether to clip, and the
// layout.
void ProgramBuilder::LstmParams(const Op& op, std::vector<int>& args) {
  const auto& o = op.opts<LstmOptions>();
  const Tensor& in = g_.input(op, 0);
  const Tensor& hidden = g_.input(op, 18);
  const float cell_scale = g_.input(op, 19).quant.scale[0];
  const float in_scale = in.quant.scale[0];
  const float hidden_scale = hidden.quant.scale[0];
  const double q12 = 1.0 / 4096, q15 = 1.0 / 32768;
  std::vector<int64_t> v = {in.quant.zp(), hidden.quant.zp()};
  for (size_t gate = 0; gate < 4; ++gate) {
    const Tensor& w = g_.input(op, 1 + gate);
    const Tensor& r = g_.input(op, 5 + gate);
    const QuantizedMultiplier fc_in =
        QuantizeMultiplier(static_cast<double>(in_scale * w.quant.scale[0]) / q12);
    const QuantizedMultiplier fc_rec =
        QuantizeMultiplier(static_cast<double>(hidden_scale * r.quant.scale[0]) / q12);
    v.insert(v.end(), {fc_in.multiplier, fc_in.shift, fc_rec.multiplier, fc_rec.shift, w.quant.zp(),
                       r.quant.zp()});
  }
  const QuantizedMultiplier products[] = {
      QuantizeMultiplier(q15 * cell_scale / cell_scale),  // forget gate x cell -> cell
      QuantizeMultiplier(q15 * q15 / cell_scale),         // input gate x cell gate -> cell
      QuantizeMultiplier(q15 * q15 / hidden_scale)};      // output gate x tanh(cell) -> hidden
  for (const QuantizedMultiplier& m : products) v.insert(v.end(), {m.multiplier, m.shift});
  int exponent = 0;
  std::frexp(cell_scale, &exponent);
  const double clip =
      std::min(std::max(static_cast<double>(o.cell_clip) / cell_scale, -32768.0), 32767.0);
  v.insert(v.end(), {exponent - 1, static_cast<int64_t>(static_cast<int16_t>(clip))});
  for (int64_t x : v) args.push_back(Int(x));
  args.push_back(Bool(o.cell_clip > 0.0f));
  args.push_back(Bool(o.time_major));
}

void ProgramBuilder::PoolParams(const Op& op, std::vector<int>& args) {
  const auto& o = op.opts<PoolOptions>();
  const Tensor& in = g_.input(op, 0);
  const Tensor& out = g_.output(op);
  const auto [top, bottom] =
      SamePadding(o.padding, in.shape[1], out.shape[1], o.filter_h, o.stride_h, 1);
  const auto [left, right] =
      SamePadding(o.padding, in.shape[2], out.shape[2], o.filter_w, o.stride_w, 1);
  args.push_back(IntList({o.stride_h, o.stride_w}));
  args.push_back(IntList({top, left, bottom, right}));
  args.push_back(IntList({o.filter_h, o.filter_w}));
  ActivationParams(op, o.activation, args);
}

void ProgramBuilder::ElementwiseParams(const Op& op, std::vector<int>& args) {
  const Tensor& a = g_.input(op, 0);
  const Tensor& b = g_.input(op, 1);
  const Tensor& out = g_.output(op);
  const Activation act = op.opts<ElementwiseOptions>().activation;
  if (op.type == OpType::kMul) {
    const MulParams p = ComputeMulParams(ScaleOf(a), a.quant.zp(), ScaleOf(b), b.quant.zp(),
                                         ScaleOf(out), out.quant.zp());
    for (int64_t v :
         {p.input1_offset, p.input2_offset, p.output_offset, p.output.multiplier, p.output.shift}) {
      args.push_back(Int(v));
    }
  } else {
    // TFLite Micro scales int16 operands up by 2^15 (2^20 for int8), which keeps the sum of
    // two full-range int16 values inside int32.
    const int32_t left_shift = out.type == DataType::kInt16 ? 15 : 20;
    const AddSubParams p =
        ComputeElementwiseAddSubParams(op.type, a.quant, b.quant, out.quant, left_shift);
    for (int64_t v : {p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                      p.input1.multiplier, p.input1.shift, p.input2.multiplier, p.input2.shift,
                      p.output.multiplier, p.output.shift}) {
      args.push_back(Int(v));
    }
  }
  ActivationParams(op, act, args);
}

// The filter bank stage's option values, in the order docs/artifact-format.md lists them.
void ProgramBuilder::SignalFilterBankParams(OpType type, const SignalOptions& o,
                                            std::vector<int>& args) {
  switch (type) {
    case OpType::kSignalEnergy:
      args.push_back(Int(o.start_index));
      args.push_back(Int(o.end_index));
      break;
    case OpType::kSignalFilterBank:
      args.push_back(Int(o.num_channels));
      break;
    case OpType::kSignalFilterBankLog:
      args.push_back(Int(o.input_correction_bits));
      args.push_back(Int(o.output_scale));
      break;
    case OpType::kSignalPcan:
      args.push_back(Int(o.snr_shift));
      break;
    case OpType::kSignalSpectralSubtraction:
      args.push_back(Int(o.num_channels));
      args.push_back(Int(o.smoothing));
      args.push_back(Int(o.one_minus_smoothing));
      args.push_back(Int(o.alternate_smoothing));
      args.push_back(Int(o.alternate_one_minus_smoothing));
      args.push_back(Int(o.min_signal_remaining));
      args.push_back(Int(o.smoothing_bits));
      args.push_back(Int(o.spectral_subtraction_bits));
      args.push_back(Bool(o.clamping));
      break;
    default:
      break;  // SIGNAL_FILTER_BANK_SQUARE_ROOT has no options
  }
}

// TFLite Micro's CIRCULAR_BUFFER without a cycles_max option guesses its period in Prepare: 1
// for an output of 5, 13 or 25 slots, or for the fifth option-less one prepared since the last
// such guess with an output [.., .., 2, 96], else 2 (circular_buffer_common.cc, written for two
// streaming models). Prepare runs in model order, so counting the ops before `op` in that order
// gives what a fresh TFLite Micro interpreter picks for this model.
int32_t CircularBufferPeriod(const Graph& g, const Op& op) {
  if (op.opts<StreamOptions>().cycles_max > 0) return op.opts<StreamOptions>().cycles_max;
  int prepared = 0;
  for (const Op& other : g.ops) {
    if (other.type != OpType::kCircularBuffer || other.opts<StreamOptions>().cycles_max > 0) {
      continue;
    }
    ++prepared;
    const std::vector<int32_t>& shape = g.output(other).shape;
    const bool every_run = shape[1] == 5 || shape[1] == 13 || shape[1] == 25 ||
                           (prepared == 5 && shape[2] == 2 && shape[3] == 96);
    if (&other == &op) return every_run ? 1 : 2;
    if (every_run) prepared = 0;
  }
  return 2;
}

// The streaming ops' options as their kernels read them (runtime/kernels/signal_stream_ops.cc).
void ProgramBuilder::StreamParams(const Op& op, const StreamOptions& o, std::vector<int>& args) {
  switch (op.type) {
    case OpType::kSignalFramer:
      args.push_back(Int(o.frame_size));
      args.push_back(Int(o.frame_step));
      args.push_back(Bool(o.prefill));
      break;
    case OpType::kSignalStacker:
      args.push_back(Int(o.num_channels));
      args.push_back(Int(o.left_context));
      args.push_back(Int(o.right_context));
      args.push_back(Int(o.stacker_step));
      break;
    case OpType::kSignalOverlapAdd:
      args.push_back(Int(o.frame_step));
      break;
    case OpType::kCircularBuffer:
      args.push_back(Int(CircularBufferPeriod(g_, op)));
      break;
    default:
      break;
  }
}

// Ops whose kernels derive their multipliers at Prepare: option values, then the zero points
// and scales of every input and output.
void ProgramBuilder::GenericParams(const Op& op, std::vector<int>& args) {
  if (const auto* o = std::get_if<StridedSliceOptions>(&op.options)) {
    for (int32_t v :
         {o->begin_mask, o->end_mask, o->ellipsis_mask, o->new_axis_mask, o->shrink_axis_mask}) {
      args.push_back(Int(v));
    }
    args.push_back(Bool(o->offset));
  } else if (const auto* o = std::get_if<SqueezeOptions>(&op.options)) {
    args.push_back(IntList({o->squeeze_dims.begin(), o->squeeze_dims.end()}));
  } else if (const auto* o = std::get_if<ReducerOptions>(&op.options)) {
    args.push_back(Bool(o->keep_dims));
  } else if (const auto* o = std::get_if<ResizeOptions>(&op.options)) {
    args.push_back(Bool(o->align_corners));
    args.push_back(Bool(o->half_pixel_centers));
  } else if (const auto* o = std::get_if<LeakyReluOptions>(&op.options)) {
    args.push_back(Double(o->alpha));
  } else if (const auto* o = std::get_if<BatchMatMulOptions>(&op.options)) {
    args.push_back(Bool(o->adj_x));
    args.push_back(Bool(o->adj_y));
  } else if (const auto* o = std::get_if<GatherOptions>(&op.options)) {
    args.push_back(Int(o->axis));
    args.push_back(Int(o->batch_dims));
  } else if (const auto* o = std::get_if<PackOptions>(&op.options)) {
    args.push_back(Int(o->count));
    args.push_back(Int(o->axis));
  } else if (const auto* o = std::get_if<SplitOptions>(&op.options)) {
    args.push_back(Int(o->num_splits));
  } else if (const auto* o = std::get_if<BlockOptions>(&op.options)) {
    args.push_back(Int(o->block_size));
  } else if (const auto* o = std::get_if<MirrorPadOptions>(&op.options)) {
    args.push_back(Int(static_cast<int>(o->mode)));
  } else if (const auto* o = std::get_if<SignalOptions>(&op.options)) {
    if (op.type == OpType::kSignalWindow) args.push_back(Int(o->shift));
    if (op.type == OpType::kSignalDelay) args.push_back(Int(o->delay_length));
    if (IsSignalFftOp(op.type)) args.push_back(Int(o->fft_length));
    SignalFilterBankParams(op.type, *o, args);
  } else if (const auto* o = std::get_if<StreamOptions>(&op.options)) {
    StreamParams(op, *o, args);
  } else if (const auto* o = std::get_if<CumsumOptions>(&op.options)) {
    args.push_back(Bool(o->exclusive));
    args.push_back(Bool(o->reverse));
  } else if (const auto* o = std::get_if<ElementwiseOptions>(&op.options)) {
    // DIV: the activation code (float32 and int32 clamp with it) and its int8 range.
    args.push_back(Int(static_cast<int>(o->activation)));
    ActivationParams(op, o->activation, args);
  }
  if (op.type == OpType::kRelu) ActivationParams(op, Activation::kRelu, args);
  // TFLite Micro's RELU6 clamps the raw input between the input's quantized 0 and 6, whatever
  // the output quantization (RELU rescales to the output's).
  if (op.type == OpType::kRelu6) RangeParams(g_.input(op, 0), Activation::kRelu6, args);
  std::vector<int64_t> zero_points;
  std::vector<double> scales;
  for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
    for (int t : *list) {
      zero_points.push_back(t == kNoTensor ? 0 : g_.tensors[t].quant.zp());
      scales.push_back(t == kNoTensor ? 0.0 : ScaleOf(g_.tensors[t]));
    }
  }
  args.push_back(IntList(zero_points));
  args.push_back(DoubleList(scales));
}

absl::Status ProgramBuilder::Params(const Op& op, std::vector<int>& args) {
  switch (op.type) {
    case OpType::kReadVariable:
    case OpType::kAssignVariable:
      // The dispatching form (ExpandChain copies the others): its operands alone.
      return absl::OkStatus();
    case OpType::kConv2D:
    case OpType::kDepthwiseConv2D:
      ConvParams(op, args);
      return absl::OkStatus();
    case OpType::kFullyConnected:
      FullyConnectedParams(op, args);
      return absl::OkStatus();
    case OpType::kTransposeConv:
      TransposeConvParams(op, args);
      return absl::OkStatus();
    case OpType::kSvdf:
      SvdfParams(op, args);
      return absl::OkStatus();
    case OpType::kDetectionPostprocess:
      DetectionPostprocessParams(op, args);
      return absl::OkStatus();
    case OpType::kUnidirectionalSequenceLstm:
      LstmParams(op, args);
      return absl::OkStatus();
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
      PoolParams(op, args);
      return absl::OkStatus();
    case OpType::kL2Pool2D:
      // float32: the kernel clamps with the activation code, not the int8 range.
      PoolParams(op, args);
      args.push_back(Int(static_cast<int>(op.opts<PoolOptions>().activation)));
      return absl::OkStatus();
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
      ElementwiseParams(op, args);
      return absl::OkStatus();
    case OpType::kSoftmax: {
      const float beta = op.opts<SoftmaxOptions>().beta;
      const Tensor& in = g_.input(op, 0);
      if (in.type == DataType::kInt16) {
        const QuantizedMultiplier m = ComputeSoftmax16Multiplier(beta, in.quant.scale[0]);
        args.push_back(Double(beta));
        for (int64_t v : {int64_t{m.multiplier}, int64_t{m.shift}, int64_t{0}}) {
          args.push_back(Int(v));
        }
        return absl::OkStatus();
      }
      const SoftmaxParams p = ComputeSoftmaxParams(beta, ScaleOf(in));
      args.push_back(Double(beta));
      for (int64_t v : {p.input_multiplier, p.input_left_shift, p.diff_min}) args.push_back(Int(v));
      return absl::OkStatus();
    }
    case OpType::kLogistic:
    case OpType::kTanh: {
      const Tensor& in = g_.input(op, 0);
      if (in.type == DataType::kInt16) {
        const Sigmoid16Params p =
            ComputeSigmoid16Params(in.quant.scale[0], op.type == OpType::kTanh);
        for (int64_t v : {int64_t{0}, int64_t{p.multiplier}, int64_t{p.left_shift}, int64_t{0}}) {
          args.push_back(Int(v));
        }
        return absl::OkStatus();
      }
      const SigmoidParams p = ComputeSigmoidParams(ScaleOf(in), in.quant.zp());
      for (int64_t v :
           {p.input_zero_point, p.input_multiplier, p.input_left_shift, p.input_range_radius}) {
        args.push_back(Int(v));
      }
      return absl::OkStatus();
    }
    case OpType::kConcatenation: {
      const auto& o = op.opts<ConcatOptions>();
      args.push_back(Int(o.axis));
      ActivationParams(op, o.activation, args);
      return absl::OkStatus();
    }
    default:
      GenericParams(op, args);
      return absl::OkStatus();
  }
}

int ProgramBuilder::OperatorIndex(const Op& op) {
  std::string name(kCpuOperatorPrefix);
  name += absl::AsciiStrToLower(std::string(OpTypeName(op.type)));
  return OperatorIndex(name);
}

int ProgramBuilder::OperatorIndex(const std::string& name) {
  auto [it, inserted] = operator_index_.try_emplace(name, static_cast<int>(operators_.size()));
  if (inserted) {
    operators_.push_back(
        et::CreateOperatorDirect(fbb_, name.c_str(), std::string(kCpuOperatorOverload).c_str()));
  }
  return it->second;
}

absl::StatusOr<flatbuffers::Offset<et::Instruction>> ProgramBuilder::KernelCall(const Op& op) {
  auto [it, first_site] =
      kernel_args_.try_emplace(std::tuple(op.type, op.source_index, op.inputs, op.outputs));
  std::vector<int>& args = it->second;
  if (first_site) {
    if (absl::Status s = Inputs(op, args); !s.ok()) return s;
    if (absl::Status s = Params(op, args); !s.ok()) return s;
    if (absl::Status s = Outputs(op, args); !s.ok()) return s;
  }
  const int op_index = OperatorIndex(op);
  auto call = et::CreateKernelCallDirect(fbb_, op_index, &args);
  return et::CreateInstruction(fbb_, et::InstructionArguments::KernelCall, call.Union());
}

absl::StatusOr<flatbuffers::Offset<et::Instruction>> ProgramBuilder::HelperCall(
    const std::string& name, std::vector<int> args) {
  auto call = et::CreateKernelCallDirect(fbb_, OperatorIndex(name), &args);
  return et::CreateInstruction(fbb_, et::InstructionArguments::KernelCall, call.Union());
}

// The instructions IF and WHILE expand into besides their subgraphs' ops.
absl::StatusOr<flatbuffers::Offset<et::Instruction>> ProgramBuilder::ControlFlowStep(
    const ChainStep& step) {
  if (jump_flag_ < 0) {
    jump_flag_ = Bool(false);
    always_false_ = Bool(false);
  }
  switch (step.kind) {
    case ChainStepKind::kCopy: {
      absl::StatusOr<int> from = TensorValue(step.from);
      if (!from.ok()) return from.status();
      absl::StatusOr<int> to = TensorValue(step.to);
      if (!to.ok()) return to.status();
      // READ_VARIABLE and ASSIGN_VARIABLE keep their own names in profiles (their kernels copy).
      const bool resource =
          step.op->type == OpType::kReadVariable || step.op->type == OpType::kAssignVariable;
      std::string name(kCopyOperator);
      if (resource) {
        name = std::string(kCpuOperatorPrefix) +
               absl::AsciiStrToLower(std::string(OpTypeName(step.op->type)));
      }
      return HelperCall(name, {*from, *to});
    }
    case ChainStepKind::kCondition: {
      absl::StatusOr<int> cond = TensorValue(step.from);
      if (!cond.ok()) return cond.status();
      std::string name(kCpuOperatorPrefix);
      name += absl::AsciiStrToLower(std::string(OpTypeName(step.op->type)));
      return HelperCall(name, {*cond, jump_flag_});
    }
    case ChainStepKind::kJump: {
      auto call = et::CreateJumpFalseCall(fbb_, step.conditional ? jump_flag_ : always_false_,
                                          step.destination);
      return et::CreateInstruction(fbb_, et::InstructionArguments::JumpFalseCall, call.Union());
    }
    default:
      return absl::InternalError("PTE writer: not a control-flow step");
  }
}

// Index among the distinct delegate blobs: identical partitions share one segment.
uint32_t ProgramBuilder::BlobSegment(const NpuPartitionBlob& blob) {
  for (size_t i = 0; i < delegate_segments_.size(); ++i) {
    if (*delegate_segments_[i] == blob.bytes) return static_cast<uint32_t>(i);
  }
  delegate_segments_.push_back(&blob.bytes);
  return static_cast<uint32_t>(delegate_segments_.size() - 1);
}

absl::StatusOr<flatbuffers::Offset<et::Instruction>> ProgramBuilder::DelegateCall(int partition) {
  const NpuPartitionBlob& blob = blobs_[partition];
  std::vector<int> args;
  for (const std::vector<int>* list : {&blob.input_tensors, &blob.output_tensors}) {
    for (int t : *list) {
      absl::StatusOr<int> v = TensorValue(t);
      if (!v.ok()) return v.status();
      args.push_back(*v);
    }
  }
  const uint32_t segment = first_delegate_segment_ + BlobSegment(blob);
  const std::vector<flatbuffers::Offset<et::CompileSpec>> no_specs;
  auto processed = et::CreateBackendDelegateDataReference(fbb_, et::DataLocation::SEGMENT, segment);
  delegates_.push_back(et::CreateBackendDelegateDirect(fbb_, std::string(kNpuBackendId).c_str(),
                                                       processed, &no_specs));
  auto call = et::CreateDelegateCallDirect(fbb_, static_cast<int>(delegates_.size()) - 1, &args);
  return et::CreateInstruction(fbb_, et::InstructionArguments::DelegateCall, call.Union());
}

// Constants come from CPU ops only (NPU constants live in the delegate blobs): constant operands
// and the requantization tables the writer generates for conv-like ops.
bool ProgramBuilder::NeedsConstantSegment() const {
  for (const ChainStep& step : chain_) {
    const bool reads_tensor =
        step.kind == ChainStepKind::kCopy || step.kind == ChainStepKind::kCondition;
    if (reads_tensor && g_.tensors[step.from].is_constant) return true;
    if (step.kind != ChainStepKind::kKernel) continue;
    const Op& op = *step.op;
    if (op.type == OpType::kConv2D || op.type == OpType::kDepthwiseConv2D ||
        op.type == OpType::kFullyConnected || op.type == OpType::kTransposeConv) {
      return true;
    }
    for (int t : op.inputs) {
      if (t != kNoTensor && g_.tensors[t].is_constant) return true;
    }
  }
  return false;
}

absl::StatusOr<flatbuffers::Offset<et::ExecutionPlan>> ProgramBuilder::Plan() {
  std::vector<int> inputs, outputs;
  for (int t : g_.inputs) {
    absl::StatusOr<int> v = TensorValue(t);
    if (!v.ok()) return v.status();
    inputs.push_back(*v);
  }
  std::vector<flatbuffers::Offset<et::Instruction>> instructions;
  for (const ChainStep& step : chain_) {
    absl::StatusOr<flatbuffers::Offset<et::Instruction>> built =
        step.kind == ChainStepKind::kDelegate ? DelegateCall(step.partition)
        : step.kind == ChainStepKind::kKernel ? KernelCall(*step.op)
                                              : ControlFlowStep(step);
    if (!built.ok()) return built.status();
    instructions.push_back(*built);
  }
  for (int t : g_.outputs) {
    absl::StatusOr<int> v = TensorValue(t);
    if (!v.ok()) return v.status();
    outputs.push_back(*v);
  }
  std::vector<int64_t> buffer_sizes = {0, c_.memory.arena_bytes};
  if (c_.memory.weights_in_flash || c_.memory.state_bytes > 0) {
    // Planned buffer 2: the NPU weight scratch window, which every payload's slots must fit.
    const int64_t scratch = c_.memory.weight_scratch_bytes;
    for (const NpuPartitionBlob& b : blobs_) {
      if (b.weight_scratch_bytes > scratch) {
        return absl::FailedPreconditionError(
            absl::StrCat("PTE writer: NPU partition ", b.partition, " needs ",
                         b.weight_scratch_bytes, " bytes of weight scratch, the memory plan has ",
                         scratch, "; lower the partitions again after placing the weights"));
      }
    }
    buffer_sizes.push_back(c_.memory.weights_in_flash ? scratch : 0);
  }
  if (c_.memory.state_bytes > 0) buffer_sizes.push_back(c_.memory.state_bytes);
  const std::vector<flatbuffers::Offset<et::Chain>> chains = {
      et::CreateChainDirect(fbb_, &inputs, &outputs, &instructions)};
  return et::CreateExecutionPlanDirect(fbb_, "forward", 0, &values_, &inputs, &outputs, &chains,
                                       &operators_, &delegates_, &buffer_sizes);
}

absl::StatusOr<std::vector<uint8_t>> ProgramBuilder::Build() {
  if (blobs_.size() != static_cast<size_t>(c_.num_partitions)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "PTE writer: ", blobs_.size(), " NPU blobs for ", c_.num_partitions, " partitions"));
  }
  absl::StatusOr<std::vector<ChainStep>> chain = ExpandChain(c_);
  if (!chain.ok()) return chain.status();
  chain_ = *std::move(chain);
  const bool has_constants = NeedsConstantSegment();
  const bool has_state = NeedsMutableSegment();
  mutable_segment_ = has_constants ? 1 : 0;
  first_delegate_segment_ = mutable_segment_ + (has_state ? 1 : 0);
  absl::StatusOr<flatbuffers::Offset<et::ExecutionPlan>> plan = Plan();
  if (!plan.ok()) return plan.status();
  if (has_constants != (constant_offsets_.size() > 1) ||
      has_state != (mutable_offsets_.size() > 1)) {
    return absl::InternalError("PTE writer: constant or mutable segment prediction was wrong");
  }
  std::vector<std::span<const uint8_t>> segments;
  if (has_constants) segments.push_back(constant_data_);
  if (has_state) segments.push_back(mutable_data_);
  for (const std::vector<uint8_t>* blob : delegate_segments_) segments.push_back(*blob);
  std::vector<flatbuffers::Offset<et::DataSegment>> segment_tables;
  uint64_t end = 0;
  for (std::span<const uint8_t> segment : segments) {
    const uint64_t offset = AlignUp(end, kPteSegmentAlignment);
    segment_tables.push_back(et::CreateDataSegment(fbb_, offset, segment.size()));
    end = offset + segment.size();
  }
  flatbuffers::Offset<et::SubsegmentOffsets> constant_segment = 0;
  if (has_constants) {
    constant_segment = et::CreateSubsegmentOffsetsDirect(fbb_, 0, &constant_offsets_);
  }
  std::vector<flatbuffers::Offset<et::SubsegmentOffsets>> mutable_segments;
  if (has_state) {
    mutable_segments.push_back(
        et::CreateSubsegmentOffsetsDirect(fbb_, mutable_segment_, &mutable_offsets_));
  }
  const std::vector<flatbuffers::Offset<et::ExecutionPlan>> plans = {*plan};
  auto program = et::CreateProgramDirect(fbb_, 0, &plans, nullptr, nullptr, &segment_tables,
                                         constant_segment, has_state ? &mutable_segments : nullptr);
  fbb_.Finish(program, et::ProgramIdentifier());
  return Container({fbb_.GetBufferPointer(), fbb_.GetSize()}, segments);
}

// executorch-formats.md section 1.2: the 32-byte extended header goes between the file
// identifier and the rest of the flatbuffer; only the root offset is absolute, so it alone moves.
std::vector<uint8_t> ProgramBuilder::Container(
    std::span<const uint8_t> flatbuffer,
    const std::vector<std::span<const uint8_t>>& segments) const {
  if (segments.empty()) return {flatbuffer.begin(), flatbuffer.end()};
  const uint64_t program_size = kPteExtendedHeaderBytes + flatbuffer.size();
  const uint64_t base = AlignUp(program_size, kPteSegmentAlignment);
  std::vector<uint64_t> offsets;
  uint64_t end = 0;
  for (std::span<const uint8_t> segment : segments) {
    offsets.push_back(AlignUp(end, kPteSegmentAlignment));
    end = offsets.back() + segment.size();
  }
  std::vector<uint8_t> out;
  out.reserve(base + end);
  PutLe(out, GetLe<uint32_t>(flatbuffer.data()) + kPteExtendedHeaderBytes);
  out.insert(out.end(), flatbuffer.begin() + 4, flatbuffer.begin() + 8);
  out.insert(out.end(), {'e', 'h', '0', '0'});
  PutLe(out, kPteExtendedHeaderBytes);
  PutLe(out, program_size);
  PutLe(out, base);
  PutLe(out, end);
  out.insert(out.end(), flatbuffer.begin() + 8, flatbuffer.end());
  for (size_t i = 0; i < segments.size(); ++i) {
    out.resize(base + offsets[i], 0);
    out.insert(out.end(), segments[i].begin(), segments[i].end());
  }
  return out;
}

// One schedulable unit: a CPU op or a whole NPU partition.
struct ScheduleUnit {
  PteInstruction instruction;
  int first_op = 0;
  std::vector<int> ops;
};

absl::StatusOr<std::vector<ScheduleUnit>> CollectUnits(const Compilation& c,
                                                       std::vector<int>& unit_of_op) {
  std::vector<ScheduleUnit> units;
  std::map<int, int> partition_unit;
  for (size_t i = 0; i < c.graph.ops.size(); ++i) {
    const Op& op = c.graph.ops[i];
    if (op.dead || op.unit == Unit::kRemoved) continue;
    if (op.unit == Unit::kUnassigned) {
      return absl::FailedPreconditionError(
          absl::StrCat("PTE writer: ", c.graph.Describe(op), " was not assigned to NPU or CPU"));
    }
    const bool npu = op.unit == Unit::kNpu;
    if (npu && partition_unit.contains(op.partition)) {
      unit_of_op[i] = partition_unit[op.partition];
      units[unit_of_op[i]].ops.push_back(static_cast<int>(i));
      continue;
    }
    unit_of_op[i] = static_cast<int>(units.size());
    if (npu) partition_unit[op.partition] = unit_of_op[i];
    units.push_back({{npu, npu ? op.partition : static_cast<int>(i)}, static_cast<int>(i), {}});
    units.back().ops.push_back(static_cast<int>(i));
  }
  return units;
}

}  // namespace

absl::StatusOr<std::vector<PteInstruction>> ScheduleInstructions(const Compilation& c) {
  std::vector<int> unit_of_op(c.graph.ops.size(), -1);
  absl::StatusOr<std::vector<ScheduleUnit>> units = CollectUnits(c, unit_of_op);
  if (!units.ok()) return units.status();
  const size_t n = units->size();
  std::vector<std::set<int>> successors(n);
  std::vector<int> pending(n, 0);
  const std::vector<int> effect_before = EffectPredecessors(c.graph);
  for (size_t u = 0; u < n; ++u) {
    auto depend_on = [&](int producer) {
      if (producer < 0 || unit_of_op[producer] < 0 || unit_of_op[producer] == int(u)) return;
      if (successors[unit_of_op[producer]].insert(static_cast<int>(u)).second) ++pending[u];
    };
    for (int op : (*units)[u].ops) {
      for (int t : c.graph.ops[op].inputs)
        depend_on(t == kNoTensor ? -1 : c.graph.tensors[t].producer);
      // A resource-variable access waits for the one before it (Op::effect_order).
      depend_on(effect_before[op]);
    }
  }
  // Kahn's algorithm, ready units in graph order: a partition runs where its first op was,
  // unless it must wait for a CPU op scheduled between its ops.
  using Ready = std::pair<int, int>;  // (first op, unit)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (size_t u = 0; u < n; ++u) {
    if (pending[u] == 0) ready.push({(*units)[u].first_op, static_cast<int>(u)});
  }
  std::vector<PteInstruction> order;
  while (!ready.empty()) {
    const int u = ready.top().second;
    ready.pop();
    order.push_back((*units)[u].instruction);
    for (int s : successors[u]) {
      if (--pending[s] == 0) ready.push({(*units)[s].first_op, s});
    }
  }
  if (order.size() != n) {
    return absl::InternalError(
        "PTE writer: NPU partitions and CPU ops depend on each other in a "
        "cycle; the partitions are not contiguous-schedulable");
  }
  return order;
}

absl::StatusOr<std::vector<uint8_t>> WritePte(const Compilation& c,
                                              const std::vector<NpuPartitionBlob>& blobs) {
  return ProgramBuilder(c, blobs).Build();
}

namespace {

// "IF #2" for a main-graph op, "ADD #0 of subgraph 1" inside a called subgraph ("ADD #0 of
// subgraph 1, copy 1" in a copy of it); the helpers of a control-flow op say what they do
// ("IF #2 copy", "WHILE #1 condition").
std::string StepName(const Graph& graph, const ChainStep& step) {
  std::string name = graph.Describe(*step.op, step.subgraph);
  // READ_VARIABLE and ASSIGN_VARIABLE are one copy each: their own name says it.
  if (step.kind == ChainStepKind::kCopy && IsControlFlowOp(step.op->type)) {
    absl::StrAppend(&name, " copy");
  }
  if (step.kind == ChainStepKind::kCondition) absl::StrAppend(&name, " condition");
  return name;
}

}  // namespace

std::string DebugMapJson(const Compilation& c, const std::vector<NpuPartitionBlob>& blobs) {
  absl::StatusOr<std::vector<ChainStep>> chain = ExpandChain(c);
  if (!chain.ok()) return nlohmann::json{{"error", chain.status().ToString()}}.dump(2);
  nlohmann::json delegates = nlohmann::json::array();
  nlohmann::json cpu_ops = nlohmann::json::array();
  for (size_t i = 0; i < chain->size(); ++i) {
    const ChainStep& step = (*chain)[i];
    // Jumps are not kernel calls: no profile row of their own.
    if (step.kind == ChainStepKind::kJump) continue;
    if (step.kind != ChainStepKind::kDelegate) {
      const Op& op = *step.op;
      std::vector<int> sources = op.fused_sources;
      if (op.source_index >= 0 &&
          std::find(sources.begin(), sources.end(), op.source_index) == sources.end()) {
        sources.insert(sources.begin(), op.source_index);
      }
      nlohmann::json entry = {{"instruction", i},
                              {"op", op.source_index},
                              {"ops", sources},
                              {"name", StepName(c.graph, step)},
                              {"macs", step.kind == ChainStepKind::kKernel ? c.graph.Macs(op) : 0}};
      // The TFLite subgraph that "op" and "ops" count in, and which copy of it.
      if (step.subgraph > 0) entry["subgraph"] = c.graph.SourceSubgraph(step.subgraph);
      if (step.subgraph > 0 && c.graph.subgraph(step.subgraph).copy > 0) {
        entry["copy"] = c.graph.subgraph(step.subgraph).copy;
      }
      cpu_ops.push_back(std::move(entry));
      continue;
    }
    nlohmann::json kernels = nlohmann::json::array();
    if (step.partition < static_cast<int>(blobs.size())) {
      for (const NpuDebugEntry& e : blobs[step.partition].debug) {
        kernels.push_back({{"id", e.debug_id},
                           {"kernel", e.kernel},
                           {"ops", e.source_ops},
                           {"names", e.names},
                           {"name", e.name},
                           {"macs", e.macs}});
      }
    }
    delegates.push_back({{"instruction", i},
                         {"partition", step.partition},
                         {"backend", kNpuBackendId},
                         {"kernels", kernels}});
  }
  return nlohmann::json{{"delegates", delegates}, {"cpu_ops", cpu_ops}}.dump(2);
}

std::optional<PteExtendedHeader> ReadPteExtendedHeader(std::span<const uint8_t> pte) {
  if (pte.size() < 8 + 24 || std::memcmp(pte.data() + 8, "eh00", 4) != 0) return std::nullopt;
  PteExtendedHeader h;
  h.length = GetLe<uint32_t>(pte.data() + 12);
  h.program_size = GetLe<uint64_t>(pte.data() + 16);
  h.segment_base_offset = GetLe<uint64_t>(pte.data() + 24);
  if (h.length >= 32 && pte.size() >= 40) h.segment_data_size = GetLe<uint64_t>(pte.data() + 32);
  return h;
}

}  // namespace boardlab::compiler
