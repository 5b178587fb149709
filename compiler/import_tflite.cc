#include "compiler/import_tflite.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boardlab/schema/tflite_generated.h"
#include "compiler/import_control_flow.h"
#include "compiler/import_resource_variables.h"
#include "compiler/validate_ops.h"

namespace boardlab::compiler {
namespace {

// Tensors above this are not something an MCU-class board can hold; the limit also keeps every
// byte count comfortably inside int64 arithmetic.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;
constexpr int kMaxRank = 6;

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid model: ", what));
}

std::string TensorLabel(int index, const tflite::Tensor* t) {
  std::string name = (t && t->name()) ? t->name()->str() : "";
  return absl::StrCat("tensor ", index, " '", name, "'");
}

DataType ConvertType(int8_t type) {
  switch (type) {
    case 0:
      return DataType::kFloat32;
    case 2:
      return DataType::kInt32;
    case 3:
      return DataType::kUint8;
    case 4:
      return DataType::kInt64;
    case 6:
      return DataType::kBool;
    case 7:
      return DataType::kInt16;
    case 9:
      return DataType::kInt8;
    case 12:
      return DataType::kUint64;
    case 15:
      return DataType::kUint32;
    case 13:
      return DataType::kResource;
    default:
      return DataType::kOther;
  }
}

// TensorType names (tflite-int8.md section 4), for messages about unsupported types.
std::string TfliteTensorTypeName(int8_t type) {
  constexpr std::string_view kNames[] = {
      "FLOAT32",  "FLOAT16",  "INT32",     "UINT8",         "INT64",      "STRING",
      "BOOL",     "INT16",    "COMPLEX64", "INT8",          "FLOAT64",    "COMPLEX128",
      "UINT64",   "RESOURCE", "VARIANT",   "UINT32",        "UINT16",     "INT4",
      "BFLOAT16", "INT2",     "UINT4",     "FLOAT8_E4M3FN", "FLOAT8_E5M2"};
  if (type >= 0 && type < static_cast<int8_t>(std::size(kNames))) return std::string(kNames[type]);
  return "unknown";
}

absl::StatusOr<Activation> ConvertActivation(int8_t value, const std::string& where) {
  if (value < 0 || value > static_cast<int8_t>(Activation::kSignBit)) {
    return Invalid(absl::StrCat(where, ": unknown fused activation ", value));
  }
  return static_cast<Activation>(value);
}

absl::StatusOr<Padding> ConvertPadding(int8_t value, const std::string& where) {
  if (value != 0 && value != 1) return Invalid(absl::StrCat(where, ": unknown padding ", value));
  return static_cast<Padding>(value);
}

class Importer {
 public:
  Importer(std::span<const uint8_t> bytes, std::vector<std::string>* warnings)
      : bytes_(bytes), warnings_(warnings) {}

  absl::StatusOr<Graph> Run();

 private:
  absl::Status VerifyContainer();
  absl::StatusOr<Graph> ImportSubgraph(int index);
  absl::Status ImportTensors(const tflite::SubGraph& subgraph);
  absl::Status ImportTensor(int index, const tflite::Tensor& t);
  absl::Status ImportQuantization(int index, const tflite::Tensor& t, Tensor& out);
  absl::Status ImportConstantData(int index, const tflite::Tensor& t, Tensor& out);
  absl::Status ImportOperators(const tflite::SubGraph& subgraph);
  absl::StatusOr<std::optional<OpType>> ResolveOpType(int op_index, const tflite::Operator& op);
  absl::Status ImportOptions(const tflite::Operator& src, Op& op, const std::string& where);
  absl::Status ImportDataMovementOptions(const tflite::Operator& src, Op& op,
                                         const std::string& where);
  absl::Status ImportCustomOptions(const tflite::Operator& src, Op& op, const std::string& where);
  absl::Status ImportIndices(const flatbuffers::Vector<int32_t>* src, bool allow_optional,
                             const std::string& where, std::vector<int>& out);
  absl::Status CheckTopologicalOrder();
  absl::Status ValidateOperands();
  void CheckVariableUses();
  absl::Status UnsupportedError() const;
  void Warn(std::string message) {
    if (warnings_) warnings_->push_back(std::move(message));
  }
  // A well-formed model may use several things boardlab does not support; each is recorded and
  // the import goes on, so that one message can list them all.
  void Unsupported(std::string reason) { unsupported_.push_back(std::move(reason)); }

  std::span<const uint8_t> bytes_;
  std::vector<std::string>* warnings_;
  const tflite::Model* model_ = nullptr;
  Graph graph_;
  // The subgraph being imported: 0 is the main graph; called subgraphs (IF branches, WHILE
  // cond/body) may have no inputs and no operators (a branch that passes its input through).
  int subgraph_ = 0;
  std::vector<std::string> unsupported_;
  bool skipped_operators_ = false;  // an unsupported operator was left out of graph_.ops
};

absl::Status Importer::VerifyContainer() {
  if (bytes_.size() < 8) {
    return Invalid(absl::StrCat("file is ", bytes_.size(), " bytes, too short for a TFLite model"));
  }
  if (!tflite::ModelBufferHasIdentifier(bytes_.data())) {
    std::string id(reinterpret_cast<const char*>(bytes_.data()) + 4, 4);
    for (char& c : id) {
      if (c < 32 || c > 126) c = '?';
    }
    return Invalid(
        absl::StrCat("file identifier is '", id, "', expected 'TFL3' (not a TFLite model)"));
  }
  flatbuffers::Verifier verifier(bytes_.data(), bytes_.size());
  if (!tflite::VerifyModelBuffer(verifier)) {
    return Invalid("the FlatBuffers verifier rejected the file (truncated or corrupt)");
  }
  model_ = tflite::GetModel(bytes_.data());
  if (!model_->subgraphs() || model_->subgraphs()->size() == 0) {
    return Invalid("the model has no subgraph");
  }
  return absl::OkStatus();
}

absl::Status Importer::ImportQuantization(int index, const tflite::Tensor& t, Tensor& out) {
  const tflite::QuantizationParameters* q = t.quantization();
  if (!q || !q->scale() || q->scale()->size() == 0) return absl::OkStatus();
  const std::string where = TensorLabel(index, &t);
  const size_t count = q->scale()->size();
  const size_t zp_count = q->zero_point() ? q->zero_point()->size() : 0;
  if (zp_count != count) {
    return Invalid(
        absl::StrCat(where, ": ", count, " quantization scales but ", zp_count, " zero points"));
  }
  int32_t axis = q->quantized_dimension();
  const int rank = static_cast<int>(out.shape.size());
  if (count > 1) {
    const bool axis_ok = axis >= 0 && axis < rank && out.shape[axis] == static_cast<int>(count);
    if (!axis_ok && rank == 1 && out.shape[0] == static_cast<int>(count)) {
      // Known quirk (person_detect): 1-D bias tensors carry quantized_dimension 3. The scales
      // can only belong to the one axis there is.
      Warn(absl::StrCat(where, ": quantized_dimension ", axis,
                        " on a 1-D tensor; treating the per-channel axis as 0"));
      axis = 0;
    } else if (axis < 0 || axis >= rank) {
      return Invalid(absl::StrCat(where, ": quantized_dimension ", axis,
                                  " is outside the tensor's rank ", rank));
    } else if (!axis_ok) {
      return Invalid(absl::StrCat(where, ": ", count, " per-channel scales but dimension ", axis,
                                  " has size ", out.shape[axis]));
    }
  }
  out.quant.axis = axis;
  for (size_t i = 0; i < count; ++i) {
    float s = q->scale()->Get(static_cast<flatbuffers::uoffset_t>(i));
    // memcpy: the verifier checks only 4-byte alignment of a vector, and int64 items of a
    // hostile file may sit at an address that is 4 mod 8.
    int64_t zp;
    std::memcpy(&zp, q->zero_point()->Data() + i * sizeof(int64_t), sizeof(zp));
    if (!(s > 0.0f) || !std::isfinite(s)) {
      return Invalid(absl::StrCat(where, ": quantization scale ", s, " is not a positive number"));
    }
    if (zp < std::numeric_limits<int32_t>::min() || zp > std::numeric_limits<int32_t>::max()) {
      return Invalid(absl::StrCat(where, ": zero point ", zp, " does not fit 32 bits"));
    }
    out.quant.scale.push_back(s);
    out.quant.zero_point.push_back(zp);
  }
  return absl::OkStatus();
}

absl::Status Importer::ImportConstantData(int index, const tflite::Tensor& t, Tensor& out) {
  const uint32_t buffer_index = t.buffer();
  const uint32_t num_buffers = model_->buffers() ? model_->buffers()->size() : 0;
  const std::string where = TensorLabel(index, &t);
  if (buffer_index == 0) return absl::OkStatus();  // buffer 0 is the "no data" sentinel
  if (buffer_index >= num_buffers) {
    return Invalid(absl::StrCat(where, ": buffer ", buffer_index, " out of range (model has ",
                                num_buffers, " buffers)"));
  }
  const tflite::Buffer* buffer = model_->buffers()->Get(buffer_index);
  if (!buffer) return Invalid(absl::StrCat(where, ": buffer ", buffer_index, " is null"));
  if (buffer->offset() > 1 || buffer->size() > 1) {
    Unsupported(absl::StrCat(where, " keeps its data outside the flatbuffer (models > 2 GB)"));
    return absl::OkStatus();
  }
  if (!buffer->data() || buffer->data()->size() == 0) return absl::OkStatus();
  const int64_t need = out.SizeBytes();
  if (static_cast<int64_t>(buffer->data()->size()) != need) {
    return Invalid(absl::StrCat(where, ": buffer ", buffer_index, " holds ", buffer->data()->size(),
                                " bytes, shape [", absl::StrJoin(out.shape, ","), "] ",
                                DataTypeName(out.type), " needs ", need));
  }
  out.data.assign(buffer->data()->begin(), buffer->data()->end());
  out.is_constant = true;
  return absl::OkStatus();
}

absl::Status Importer::ImportTensor(int index, const tflite::Tensor& t) {
  Tensor out;
  const std::string where = TensorLabel(index, &t);
  out.name = t.name() ? t.name()->str() : absl::StrCat("tensor_", index);
  if (t.sparsity()) Unsupported(absl::StrCat(where, " is sparse; boardlab needs dense tensors"));
  out.type = ConvertType(t.type());
  if (out.type == DataType::kOther) {
    Unsupported(
        absl::StrCat(where, " has TensorType ", t.type(), " (", TfliteTensorTypeName(t.type()),
                     "); boardlab handles int8, uint8, int16, int32, int64, uint32, uint64, "
                     "bool and float32"));
  }
  if (t.shape()) {
    if (t.shape()->size() > kMaxRank) {
      return Invalid(absl::StrCat(where, ": rank ", t.shape()->size(), " exceeds ", kMaxRank));
    }
    int64_t elements = 1;
    for (int32_t d : *t.shape()) {
      if (d <= 0) {
        return Invalid(absl::StrCat(where, ": dimension ", d, " in shape [",
                                    absl::StrJoin(*t.shape(), ","),
                                    "] (dynamic or zero-sized tensors are not supported)"));
      }
      elements *= d;
      if (elements * std::max(1, DataTypeSize(out.type)) > kMaxTensorBytes) {
        return Invalid(absl::StrCat(where, ": shape [", absl::StrJoin(*t.shape(), ","),
                                    "] is larger than 2 GiB"));
      }
      out.shape.push_back(d);
    }
  }
  if (absl::Status s = ImportQuantization(index, t, out); !s.ok()) return s;
  // Data of a type boardlab cannot size stays unread; the tensor is already reported.
  if (out.type != DataType::kOther) {
    if (absl::Status s = ImportConstantData(index, t, out); !s.ok()) return s;
  }
  out.is_variable = t.is_variable();
  if (out.is_variable && out.is_constant) {
    // TFLite Micro resets every variable tensor before the first inference, whatever the file
    // holds; so does the runtime.
    Warn(absl::StrCat(where,
                      " is a variable tensor with initial data; the data is ignored and "
                      "the tensor starts at its zero point, as in TFLite Micro"));
    out.data.clear();
    out.is_constant = false;
  }
  graph_.tensors.push_back(std::move(out));
  return absl::OkStatus();
}

absl::Status Importer::ImportTensors(const tflite::SubGraph& subgraph) {
  if (!subgraph.tensors() || subgraph.tensors()->size() == 0) {
    return Invalid("the subgraph has no tensors");
  }
  for (flatbuffers::uoffset_t i = 0; i < subgraph.tensors()->size(); ++i) {
    const tflite::Tensor* t = subgraph.tensors()->Get(i);
    if (!t) return Invalid(absl::StrCat("tensor ", i, " is null"));
    if (absl::Status s = ImportTensor(static_cast<int>(i), *t); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Importer::ImportIndices(const flatbuffers::Vector<int32_t>* src, bool allow_optional,
                                     const std::string& where, std::vector<int>& out) {
  if (!src) return absl::OkStatus();
  const int num = static_cast<int>(graph_.tensors.size());
  for (int32_t t : *src) {
    if (t == kNoTensor && allow_optional) {
      out.push_back(kNoTensor);
      continue;
    }
    if (t < 0 || t >= num) {
      return Invalid(absl::StrCat(where, ": tensor index ", t, " out of range (subgraph has ", num,
                                  " tensors)"));
    }
    out.push_back(t);
  }
  return absl::OkStatus();
}

// The op type of operator `op_index`; nullopt (with the reason recorded) when boardlab does not
// support it.
absl::StatusOr<std::optional<OpType>> Importer::ResolveOpType(int op_index,
                                                              const tflite::Operator& op) {
  const uint32_t num_codes = model_->operator_codes() ? model_->operator_codes()->size() : 0;
  if (op.opcode_index() >= num_codes) {
    return Invalid(absl::StrCat("operator ", op_index, ": opcode_index ", op.opcode_index(),
                                " out of range (model has ", num_codes, " operator codes)"));
  }
  const tflite::OperatorCode* code = model_->operator_codes()->Get(op.opcode_index());
  if (!code) return Invalid(absl::StrCat("operator code ", op.opcode_index(), " is null"));
  // Old writers fill only the deprecated byte; new ones put 127 there for codes above it.
  const int32_t builtin = std::max<int32_t>(code->builtin_code(), code->deprecated_builtin_code());
  std::optional<OpType> type = OpTypeFromTfliteCode(builtin);
  if (builtin == kTfliteCustomCode && code->custom_code()) {
    type = OpTypeFromCustomCode(code->custom_code()->string_view());
  }
  if (type) return type;
  std::string name = TfliteBuiltinName(builtin);
  if (builtin == kTfliteCustomCode && code->custom_code()) {
    name = absl::StrCat("CUSTOM '", code->custom_code()->str(), "'");
  }
  Unsupported(
      absl::StrCat("operator ", op_index, " is ", name, ", which boardlab does not support"));
  return std::nullopt;
}

absl::Status Importer::ImportOptions(const tflite::Operator& src, Op& op,
                                     const std::string& where) {
  auto activation = [&](int8_t v) { return ConvertActivation(v, where); };
  auto padding = [&](int8_t v) { return ConvertPadding(v, where); };
  auto missing = [&]() {
    return Invalid(absl::StrCat(where, ": options table missing or of the wrong type"));
  };
  // CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV options share padding, activation and stride.
  auto conv_options = [&](const auto& o, ConvOptions& c) -> absl::Status {
    auto pad = padding(o.padding());
    auto act = activation(o.fused_activation_function());
    if (!pad.ok()) return pad.status();
    if (!act.ok()) return act.status();
    c.padding = *pad;
    c.activation = *act;
    c.stride_w = o.stride_w();
    c.stride_h = o.stride_h();
    return absl::OkStatus();
  };
  switch (op.type) {
    case OpType::kConv2D: {
      const auto* o = src.builtin_options_as_Conv2DOptions();
      if (!o) return missing();
      ConvOptions c;
      if (absl::Status st = conv_options(*o, c); !st.ok()) return st;
      c.dilation_w = o->dilation_w_factor();
      c.dilation_h = o->dilation_h_factor();
      op.options = c;
      return absl::OkStatus();
    }
    case OpType::kDepthwiseConv2D: {
      const auto* o = src.builtin_options_as_DepthwiseConv2DOptions();
      if (!o) return missing();
      ConvOptions c;
      if (absl::Status st = conv_options(*o, c); !st.ok()) return st;
      c.dilation_w = o->dilation_w_factor();
      c.dilation_h = o->dilation_h_factor();
      c.depth_multiplier = o->depth_multiplier();
      op.options = c;
      return absl::OkStatus();
    }
    case OpType::kTransposeConv: {
      // Dilation and depth multiplier stay 1: TRANSPOSE_CONV has neither.
      const auto* o = src.builtin_options_as_TransposeConvOptions();
      if (!o) return missing();
      ConvOptions c;
      if (absl::Status st = conv_options(*o, c); !st.ok()) return st;
      op.options = c;
      // The bias is optional and may be left out of the input list: give it its slot, as
      // CONV_2D's absent bias has, so that the kernel call keeps one layout.
      if (op.inputs.size() == 3) op.inputs.push_back(kNoTensor);
      return absl::OkStatus();
    }
    case OpType::kSvdf: {
      const auto* o = src.builtin_options_as_SVDFOptions();
      if (!o) return missing();
      auto act = activation(o->fused_activation_function());
      if (!act.ok()) return act.status();
      op.options = SvdfOptions{o->rank(), *act};
      return absl::OkStatus();
    }
    case OpType::kUnidirectionalSequenceLstm: {
      const auto* o = src.builtin_options_as_UnidirectionalSequenceLSTMOptions();
      if (!o) return missing();
      auto act = activation(o->fused_activation_function());
      if (!act.ok()) return act.status();
      op.options = LstmOptions{*act, o->cell_clip(), o->proj_clip(), o->time_major()};
      // Models written before layer normalization end at input 19: its four inputs are absent.
      if (op.inputs.size() == 20) op.inputs.resize(24, kNoTensor);
      return absl::OkStatus();
    }
    case OpType::kDetectionPostprocess:
    case OpType::kSignalWindow:
    case OpType::kSignalFftAutoScale:
    case OpType::kSignalDelay:
    case OpType::kSignalEnergy:
    case OpType::kSignalFilterBank:
    case OpType::kSignalFilterBankSquareRoot:
    case OpType::kSignalFilterBankLog:
    case OpType::kSignalPcan:
    case OpType::kSignalSpectralSubtraction:
    case OpType::kSignalRfft:
    case OpType::kSignalIrfft:
    case OpType::kSignalFramer:
    case OpType::kSignalStacker:
    case OpType::kSignalOverlapAdd:
    case OpType::kCircularBuffer:
      return ImportCustomOptions(src, op, where);
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kL2Pool2D: {
      const auto* o = src.builtin_options_as_Pool2DOptions();
      if (!o) return missing();
      PoolOptions p;
      auto pad = padding(o->padding());
      auto act = activation(o->fused_activation_function());
      if (!pad.ok()) return pad.status();
      if (!act.ok()) return act.status();
      p.padding = *pad;
      p.activation = *act;
      p.stride_w = o->stride_w();
      p.stride_h = o->stride_h();
      p.filter_w = o->filter_width();
      p.filter_h = o->filter_height();
      op.options = p;
      return absl::OkStatus();
    }
    case OpType::kFullyConnected: {
      FullyConnectedOptions f;
      if (const auto* o = src.builtin_options_as_FullyConnectedOptions()) {
        auto act = activation(o->fused_activation_function());
        if (!act.ok()) return act.status();
        f.activation = *act;
        f.keep_num_dims = o->keep_num_dims();
        if (o->weights_format() != 0) {
          return absl::UnimplementedError(
              absl::StrCat("unsupported model: ", where, " uses shuffled FULLY_CONNECTED weights"));
        }
      }
      op.options = f;
      return absl::OkStatus();
    }
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kDiv: {
      ElementwiseOptions e;
      int8_t act_code = 0;
      if (const auto* o = src.builtin_options_as_AddOptions())
        act_code = o->fused_activation_function();
      if (const auto* o = src.builtin_options_as_SubOptions())
        act_code = o->fused_activation_function();
      if (const auto* o = src.builtin_options_as_MulOptions())
        act_code = o->fused_activation_function();
      if (const auto* o = src.builtin_options_as_DivOptions())
        act_code = o->fused_activation_function();
      auto act = activation(act_code);
      if (!act.ok()) return act.status();
      e.activation = *act;
      op.options = e;
      return absl::OkStatus();
    }
    case OpType::kConcatenation: {
      const auto* o = src.builtin_options_as_ConcatenationOptions();
      ConcatOptions c;
      if (o) {
        auto act = activation(o->fused_activation_function());
        if (!act.ok()) return act.status();
        c.axis = o->axis();
        c.activation = *act;
      }
      op.options = c;
      return absl::OkStatus();
    }
    case OpType::kSoftmax: {
      SoftmaxOptions s;
      if (const auto* o = src.builtin_options_as_SoftmaxOptions()) s.beta = o->beta();
      op.options = s;
      return absl::OkStatus();
    }
    case OpType::kMean:
    case OpType::kSum:
    case OpType::kReduceMax:
    case OpType::kReduceMin: {
      ReducerOptions r;
      if (const auto* o = src.builtin_options_as_ReducerOptions()) r.keep_dims = o->keep_dims();
      op.options = r;
      return absl::OkStatus();
    }
    case OpType::kSqueeze: {
      SqueezeOptions s;
      if (const auto* o = src.builtin_options_as_SqueezeOptions(); o && o->squeeze_dims()) {
        s.squeeze_dims.assign(o->squeeze_dims()->begin(), o->squeeze_dims()->end());
      }
      op.options = s;
      return absl::OkStatus();
    }
    case OpType::kStridedSlice: {
      StridedSliceOptions s;
      if (const auto* o = src.builtin_options_as_StridedSliceOptions()) {
        s.begin_mask = o->begin_mask();
        s.end_mask = o->end_mask();
        s.ellipsis_mask = o->ellipsis_mask();
        s.new_axis_mask = o->new_axis_mask();
        s.shrink_axis_mask = o->shrink_axis_mask();
        s.offset = o->offset();
      }
      op.options = s;
      return absl::OkStatus();
    }
    case OpType::kResizeNearestNeighbor:
    case OpType::kResizeBilinear: {
      ResizeOptions r;
      auto read = [&r](const auto* o) {
        if (o == nullptr) return;
        r.align_corners = o->align_corners();
        r.half_pixel_centers = o->half_pixel_centers();
      };
      read(src.builtin_options_as_ResizeNearestNeighborOptions());
      read(src.builtin_options_as_ResizeBilinearOptions());
      op.options = r;
      return absl::OkStatus();
    }
    case OpType::kL2Normalization: {
      // The activation is kept so that validation can refuse one TFLite Micro does not run.
      ElementwiseOptions e;
      if (const auto* o = src.builtin_options_as_L2NormOptions()) {
        auto act = activation(o->fused_activation_function());
        if (!act.ok()) return act.status();
        e.activation = *act;
      }
      op.options = e;
      return absl::OkStatus();
    }
    case OpType::kLeakyRelu: {
      LeakyReluOptions l;
      if (const auto* o = src.builtin_options_as_LeakyReluOptions()) l.alpha = o->alpha();
      op.options = l;
      return absl::OkStatus();
    }
    case OpType::kIf: {
      const auto* o = src.builtin_options_as_IfOptions();
      if (!o) return missing();
      op.options = ControlFlowOptions{o->then_subgraph_index(), o->else_subgraph_index()};
      return absl::OkStatus();
    }
    case OpType::kWhile: {
      const auto* o = src.builtin_options_as_WhileOptions();
      if (!o) return missing();
      op.options = ControlFlowOptions{o->cond_subgraph_index(), o->body_subgraph_index()};
      return absl::OkStatus();
    }
    case OpType::kCallOnce: {
      const auto* o = src.builtin_options_as_CallOnceOptions();
      if (!o) return missing();
      op.options = ControlFlowOptions{o->init_subgraph_index(), o->init_subgraph_index()};
      return absl::OkStatus();
    }
    case OpType::kVarHandle: {
      VarHandleOptions v;
      if (const auto* o = src.builtin_options_as_VarHandleOptions()) {
        v.has_container = o->container() != nullptr;
        if (o->container()) v.container = o->container()->str();
        if (o->shared_name()) v.shared_name = o->shared_name()->str();
      }
      op.options = v;
      return absl::OkStatus();
    }
    case OpType::kBatchMatMul: {
      BatchMatMulOptions b;
      if (const auto* o = src.builtin_options_as_BatchMatMulOptions()) {
        b.adj_x = o->adj_x();
        b.adj_y = o->adj_y();
      }
      op.options = b;
      return absl::OkStatus();
    }
    default:
      return ImportDataMovementOptions(src, op, where);
  }
}

// A custom operator's options: a flexbuffer in custom_options (CustomOptionsFormat FLEXBUFFERS).
absl::Status Importer::ImportCustomOptions(const tflite::Operator& src, Op& op,
                                           const std::string& where) {
  if (src.custom_options_format() != 0) {
    return Invalid(absl::StrCat(where, ": custom_options_format ", src.custom_options_format(),
                                " is not FLEXBUFFERS (0)"));
  }
  std::span<const uint8_t> bytes;
  if (src.custom_options() != nullptr) {
    bytes = {src.custom_options()->data(), src.custom_options()->size()};
  }
  if (IsStreamOp(op.type)) {
    absl::StatusOr<StreamOptions> o = ParseStreamOptions(op.type, bytes);
    if (!o.ok()) return Invalid(absl::StrCat(where, ": ", o.status().message()));
    op.options = *o;
    return absl::OkStatus();
  }
  if (IsSignalOp(op.type)) {
    absl::StatusOr<SignalOptions> o = ParseSignalOptions(op.type, bytes);
    if (!o.ok()) return Invalid(absl::StrCat(where, ": ", o.status().message()));
    op.options = *o;
    return absl::OkStatus();
  }
  absl::StatusOr<DetectionPostprocessOptions> o = ParseDetectionPostprocessOptions(bytes);
  if (!o.ok()) return Invalid(absl::StrCat(where, ": ", o.status().message()));
  op.options = *o;
  return absl::OkStatus();
}

// Options of the layout and data movement ops; monostate for ops without options.
absl::Status Importer::ImportDataMovementOptions(const tflite::Operator& src, Op& op,
                                                 const std::string& where) {
  switch (op.type) {
    case OpType::kGather: {
      GatherOptions g;
      if (const auto* o = src.builtin_options_as_GatherOptions()) {
        g.axis = o->axis();
        g.batch_dims = o->batch_dims();
      }
      op.options = g;
      return absl::OkStatus();
    }
    case OpType::kPack:
    case OpType::kUnpack: {
      PackOptions p;
      if (const auto* o = src.builtin_options_as_PackOptions()) {
        p.count = o->values_count();
        p.axis = o->axis();
      } else if (const auto* u = src.builtin_options_as_UnpackOptions()) {
        p.count = u->num();
        p.axis = u->axis();
      }
      op.options = p;
      return absl::OkStatus();
    }
    case OpType::kSplit:
    case OpType::kSplitV: {
      SplitOptions p;
      if (const auto* o = src.builtin_options_as_SplitOptions()) p.num_splits = o->num_splits();
      if (const auto* o = src.builtin_options_as_SplitVOptions()) p.num_splits = o->num_splits();
      op.options = p;
      return absl::OkStatus();
    }
    case OpType::kDepthToSpace:
    case OpType::kSpaceToDepth: {
      BlockOptions b;
      if (const auto* o = src.builtin_options_as_DepthToSpaceOptions()) {
        b.block_size = o->block_size();
      }
      if (const auto* o = src.builtin_options_as_SpaceToDepthOptions()) {
        b.block_size = o->block_size();
      }
      op.options = b;
      return absl::OkStatus();
    }
    case OpType::kMirrorPad: {
      MirrorPadOptions m;
      if (const auto* o = src.builtin_options_as_MirrorPadOptions()) {
        if (o->mode() != 0 && o->mode() != 1) {
          return Invalid(absl::StrCat(where, ": unknown mirror pad mode ", o->mode()));
        }
        m.mode = static_cast<MirrorPadMode>(o->mode());
      }
      op.options = m;
      return absl::OkStatus();
    }
    case OpType::kCumsum: {
      CumsumOptions c;
      if (const auto* o = src.builtin_options_as_CumsumOptions()) {
        c.exclusive = o->exclusive();
        c.reverse = o->reverse();
      }
      op.options = c;
      return absl::OkStatus();
    }
    default:
      op.options = std::monostate{};
      return absl::OkStatus();
  }
}

absl::Status Importer::ImportOperators(const tflite::SubGraph& subgraph) {
  if (!subgraph.operators() || subgraph.operators()->size() == 0) {
    if (subgraph_ > 0) return absl::OkStatus();
    return Invalid("the subgraph has no operators");
  }
  for (flatbuffers::uoffset_t i = 0; i < subgraph.operators()->size(); ++i) {
    const tflite::Operator* src = subgraph.operators()->Get(i);
    if (!src) return Invalid(absl::StrCat("operator ", i, " is null"));
    absl::StatusOr<std::optional<OpType>> type = ResolveOpType(static_cast<int>(i), *src);
    if (!type.ok()) return type.status();
    if (!type->has_value()) {
      skipped_operators_ = true;
      continue;
    }
    Op op;
    op.type = **type;
    op.source_index = static_cast<int>(i);
    const std::string where = absl::StrCat(OpTypeName(op.type), " #", i);
    if (absl::Status s = ImportIndices(src->inputs(), true, where, op.inputs); !s.ok()) return s;
    if (absl::Status s = ImportIndices(src->outputs(), false, where, op.outputs); !s.ok()) {
      return s;
    }
    // ASSIGN_VARIABLE and CALL_ONCE act only through their side effects.
    const bool writes_nothing = op.type == OpType::kAssignVariable || op.type == OpType::kCallOnce;
    if (op.outputs.empty() && !writes_nothing) {
      return Invalid(absl::StrCat(where, ": operator has no outputs"));
    }
    if (absl::Status s = ImportOptions(*src, op, where); !s.ok()) return s;
    graph_.ops.push_back(std::move(op));
  }
  return absl::OkStatus();
}

absl::Status Importer::CheckTopologicalOrder() {
  std::vector<char> available(graph_.tensors.size(), 0);
  std::vector<char> written(graph_.tensors.size(), 0);
  // Constants and variable (state) tensors hold a value before the first operator runs.
  for (size_t t = 0; t < graph_.tensors.size(); ++t) {
    available[t] = graph_.tensors[t].is_constant || graph_.tensors[t].is_variable;
  }
  for (int t : graph_.inputs) available[t] = 1;
  for (const Op& op : graph_.ops) {
    for (int t : op.inputs) {
      if (t == kNoTensor || available[t]) continue;
      return Invalid(absl::StrCat(graph_.Describe(op), " reads tensor ", t, " '",
                                  graph_.tensors[t].name, "' before any operator writes it"));
    }
    for (int t : op.outputs) {
      if (graph_.tensors[t].is_variable) continue;  // CheckVariableUses reports it
      if (graph_.tensors[t].is_constant) {
        return Invalid(absl::StrCat(graph_.Describe(op), " writes constant tensor ", t, " '",
                                    graph_.tensors[t].name, "'"));
      }
      if (written[t]) {
        return Invalid(absl::StrCat("tensor ", t, " '", graph_.tensors[t].name,
                                    "' is written by two operators"));
      }
      if (available[t]) {
        return Invalid(absl::StrCat(graph_.Describe(op), " writes graph input tensor ", t, " '",
                                    graph_.tensors[t].name, "'"));
      }
      available[t] = 1;
      written[t] = 1;
    }
  }
  for (int t : graph_.outputs) {
    if (!available[t]) {
      return Invalid(absl::StrCat("graph output tensor ", t, " '", graph_.tensors[t].name,
                                  "' is never written"));
    }
  }
  graph_.RebuildUses();
  return absl::OkStatus();
}

absl::StatusOr<Graph> Importer::ImportSubgraph(int index) {
  graph_ = Graph();
  subgraph_ = index;
  skipped_operators_ = false;
  const tflite::SubGraph* subgraph =
      model_->subgraphs()->Get(static_cast<flatbuffers::uoffset_t>(index));
  if (!subgraph) return Invalid("the subgraph is null");
  graph_.name = subgraph->name() ? subgraph->name()->str() : (index == 0 ? "main" : "");
  if (absl::Status s = ImportTensors(*subgraph); !s.ok()) return s;
  if (absl::Status s = ImportIndices(subgraph->inputs(), false, "subgraph inputs", graph_.inputs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ImportIndices(subgraph->outputs(), false, "subgraph outputs", graph_.outputs);
      !s.ok()) {
    return s;
  }
  // A CALL_ONCE init subgraph has neither (it only assigns variables).
  if (index == 0 && (graph_.outputs.empty() || graph_.inputs.empty())) {
    return Invalid("the subgraph declares no inputs or no outputs");
  }
  if (absl::Status s = ImportOperators(*subgraph); !s.ok()) return s;
  // Without the unsupported operators the dataflow has holes; the order is checked only when
  // every operator is there.
  if (!skipped_operators_) {
    if (absl::Status s = CheckTopologicalOrder(); !s.ok()) return s;
  }
  if (absl::Status s = ValidateOperands(); !s.ok()) return s;
  if (unsupported_.empty()) {
    if (absl::Status s = VerifyGraph(graph_); !s.ok()) return s;
  }
  return std::move(graph_);
}

absl::StatusOr<Graph> Importer::Run() {
  if (absl::Status s = VerifyContainer(); !s.ok()) return s;
  std::vector<Graph> subgraphs;
  bool any_skipped = false;
  for (flatbuffers::uoffset_t k = 0; k < model_->subgraphs()->size(); ++k) {
    const size_t reasons_before = unsupported_.size();
    absl::StatusOr<Graph> graph = ImportSubgraph(static_cast<int>(k));
    // Messages about a called subgraph say which one; the main graph's read as before.
    if (k > 0) {
      for (size_t r = reasons_before; r < unsupported_.size(); ++r) {
        unsupported_[r] = absl::StrCat("subgraph ", k, ": ", unsupported_[r]);
      }
    }
    if (!graph.ok()) return k == 0 ? graph.status() : PrefixSubgraph(graph.status(), k);
    any_skipped = any_skipped || skipped_operators_;
    subgraphs.push_back(*std::move(graph));
  }
  skipped_operators_ = any_skipped;
  if (!unsupported_.empty()) return UnsupportedError();
  if (absl::Status s = CheckControlFlow(subgraphs); !s.ok()) return s;
  Graph merged = MergeSubgraphs(std::move(subgraphs));
  if (absl::Status s = ResolveResourceVariables(merged); !s.ok()) return s;
  return merged;
}

// A variable tensor keeps its value between inferences. boardlab keeps one only where a kernel
// owns it, as TFLite Micro's kernels do: the state operand of one stateful op (SVDF's activation
// state, LSTM's hidden and cell states); any other use is recorded as unsupported.
void Importer::CheckVariableUses() {
  auto label = [this](int t) {
    return absl::StrCat("variable tensor ", t, " '", graph_.tensors[t].name, "'");
  };
  for (const std::vector<int>* list : {&graph_.inputs, &graph_.outputs}) {
    for (int t : *list) {
      if (!graph_.tensors[t].is_variable) continue;
      Unsupported(absl::StrCat(label(t), " is a graph ",
                               list == &graph_.inputs ? "input" : "output",
                               "; boardlab keeps variable tensors inside the ops that own them"));
    }
  }
  std::vector<int> owner(graph_.tensors.size(), -1);
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    const Op& op = graph_.ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if (t == kNoTensor || !graph_.tensors[t].is_variable) continue;
      if (!IsStateOperand(op.type, k)) {
        Unsupported(absl::StrCat(graph_.Describe(op), " reads ", label(t), " as input ", k,
                                 "; boardlab keeps state only for SVDF's activation state and "
                                 "UNIDIRECTIONAL_SEQUENCE_LSTM's hidden and cell states"));
      } else if (owner[t] >= 0) {
        Unsupported(absl::StrCat(label(t), " is the state of both ",
                                 graph_.Describe(graph_.ops[owner[t]]), " and ",
                                 graph_.Describe(op), "; each stateful op needs its own"));
      }
      owner[t] = static_cast<int>(i);
    }
    for (int t : op.outputs) {
      if (graph_.tensors[t].is_variable) {
        Unsupported(absl::StrCat(graph_.Describe(op), " writes ", label(t),
                                 " as an output; only stateful ops update variable tensors, in "
                                 "place"));
      }
    }
  }
}

// Checks every imported op's operands: an inconsistent model fails at once, an unsupported
// variant (int16 activations, ...) is recorded like an unsupported operator.
absl::Status Importer::ValidateOperands() {
  CheckVariableUses();
  auto has_unsupported_type = [this](const Op& op) {
    for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
      for (int t : *list) {
        if (t != kNoTensor && graph_.tensors[t].type == DataType::kOther) return true;
      }
    }
    return false;
  };
  for (const Op& op : graph_.ops) {
    if (has_unsupported_type(op)) continue;  // its tensor is reported already
    absl::Status s = ValidateOpOperands(graph_, op, warnings_);
    if (s.ok()) continue;
    if (s.code() != absl::StatusCode::kUnimplemented) return s;
    std::string reason(s.message());
    constexpr std::string_view kPrefix = "unsupported model: ";
    if (reason.compare(0, kPrefix.size(), kPrefix) == 0) reason.erase(0, kPrefix.size());
    Unsupported(std::move(reason));
  }
  return absl::OkStatus();
}

// One message with every reason, in model order: tensors first, then operators.
absl::Status Importer::UnsupportedError() const {
  std::string message = unsupported_.size() == 1
                            ? absl::StrCat("unsupported model: ", unsupported_[0])
                            : absl::StrCat("unsupported model: ", unsupported_.size(),
                                           " problems: ", absl::StrJoin(unsupported_, "; "));
  if (skipped_operators_) absl::StrAppend(&message, " (supported: ", SupportedOpNames(), ")");
  return absl::UnimplementedError(message);
}

}  // namespace

absl::StatusOr<Graph> ImportTflite(std::span<const uint8_t> model,
                                   std::vector<std::string>* warnings) {
  Importer importer(model, warnings);
  return importer.Run();
}

}  // namespace boardlab::compiler
