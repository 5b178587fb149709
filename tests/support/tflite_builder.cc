#include "tests/support/tflite_builder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "boardlab/schema/tflite_generated.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/flexbuffers.h"

namespace boardlab::testing {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// The union member and its table for one operator; NONE when the op carries no options.
using OptionsRef = std::pair<tflite::BuiltinOptions, Offset<void>>;

int8_t Byte(Padding p) { return static_cast<int8_t>(p); }
int8_t Byte(Activation a) { return static_cast<int8_t>(a); }

// Writes one options struct. The op code only matters for ElementwiseOpts, whose table type
// depends on the op (ADD, SUB and MUL each have their own table).
class OptionsWriter {
 public:
  OptionsWriter(FlatBufferBuilder& fbb, int32_t code) : fbb_(fbb), code_(code) {}

  OptionsRef operator()(const std::monostate&) { return {tflite::BuiltinOptions::NONE, 0}; }
  OptionsRef operator()(const ControlFlowOpts& o) {
    if (code_ == 119) {
      return {tflite::BuiltinOptions::WhileOptions,
              tflite::CreateWhileOptions(fbb_, o.first, o.second).Union()};
    }
    return {tflite::BuiltinOptions::IfOptions,
            tflite::CreateIfOptions(fbb_, o.first, o.second).Union()};
  }
  OptionsRef operator()(const CallOnceOpts& o) {
    return {tflite::BuiltinOptions::CallOnceOptions,
            tflite::CreateCallOnceOptions(fbb_, o.init_subgraph).Union()};
  }
  OptionsRef operator()(const VarHandleOpts& o) {
    auto text = [this](const std::optional<std::string>& s) {
      return s ? fbb_.CreateString(*s) : flatbuffers::Offset<flatbuffers::String>();
    };
    const auto container = text(o.container);
    const auto shared_name = text(o.shared_name);
    return {tflite::BuiltinOptions::VarHandleOptions,
            tflite::CreateVarHandleOptions(fbb_, container, shared_name).Union()};
  }
  OptionsRef operator()(const Conv2DOpts& o) {
    return {tflite::BuiltinOptions::Conv2DOptions,
            tflite::CreateConv2DOptions(fbb_, Byte(o.padding), o.stride_w, o.stride_h,
                                        Byte(o.activation), o.dilation_w, o.dilation_h)
                .Union()};
  }
  OptionsRef operator()(const DepthwiseConv2DOpts& o) {
    return {tflite::BuiltinOptions::DepthwiseConv2DOptions,
            tflite::CreateDepthwiseConv2DOptions(fbb_, Byte(o.padding), o.stride_w, o.stride_h,
                                                 o.depth_multiplier, Byte(o.activation),
                                                 o.dilation_w, o.dilation_h)
                .Union()};
  }
  OptionsRef operator()(const Pool2DOpts& o) {
    return {tflite::BuiltinOptions::Pool2DOptions,
            tflite::CreatePool2DOptions(fbb_, Byte(o.padding), o.stride_w, o.stride_h, o.filter_w,
                                        o.filter_h, Byte(o.activation))
                .Union()};
  }
  OptionsRef operator()(const FullyConnectedOpts& o) {
    return {tflite::BuiltinOptions::FullyConnectedOptions,
            tflite::CreateFullyConnectedOptions(fbb_, Byte(o.activation), o.weights_format,
                                                o.keep_num_dims)
                .Union()};
  }
  OptionsRef operator()(const ElementwiseOpts& o) {
    const int8_t act = Byte(o.activation);
    if (code_ == 41) {
      return {tflite::BuiltinOptions::SubOptions, tflite::CreateSubOptions(fbb_, act).Union()};
    }
    if (code_ == 18) {
      return {tflite::BuiltinOptions::MulOptions, tflite::CreateMulOptions(fbb_, act).Union()};
    }
    if (code_ == 42) {
      return {tflite::BuiltinOptions::DivOptions, tflite::CreateDivOptions(fbb_, act).Union()};
    }
    if (code_ == 11) {
      return {tflite::BuiltinOptions::L2NormOptions,
              tflite::CreateL2NormOptions(fbb_, act).Union()};
    }
    return {tflite::BuiltinOptions::AddOptions, tflite::CreateAddOptions(fbb_, act).Union()};
  }
  OptionsRef operator()(const ConcatenationOpts& o) {
    return {tflite::BuiltinOptions::ConcatenationOptions,
            tflite::CreateConcatenationOptions(fbb_, o.axis, Byte(o.activation)).Union()};
  }
  OptionsRef operator()(const SoftmaxOpts& o) {
    return {tflite::BuiltinOptions::SoftmaxOptions,
            tflite::CreateSoftmaxOptions(fbb_, o.beta).Union()};
  }
  OptionsRef operator()(const ReducerOpts& o) {
    return {tflite::BuiltinOptions::ReducerOptions,
            tflite::CreateReducerOptions(fbb_, o.keep_dims).Union()};
  }
  OptionsRef operator()(const ReshapeOpts& o) {
    return {tflite::BuiltinOptions::ReshapeOptions,
            tflite::CreateReshapeOptions(fbb_, fbb_.CreateVector(o.new_shape)).Union()};
  }
  OptionsRef operator()(const SqueezeOpts& o) {
    return {tflite::BuiltinOptions::SqueezeOptions,
            tflite::CreateSqueezeOptions(fbb_, fbb_.CreateVector(o.squeeze_dims)).Union()};
  }
  OptionsRef operator()(const StridedSliceOpts& o) {
    return {tflite::BuiltinOptions::StridedSliceOptions,
            tflite::CreateStridedSliceOptions(fbb_, o.begin_mask, o.end_mask, o.ellipsis_mask,
                                              o.new_axis_mask, o.shrink_axis_mask, o.offset)
                .Union()};
  }
  OptionsRef operator()(const ResizeNearestNeighborOpts& o) {
    if (code_ == 23) {
      return {
          tflite::BuiltinOptions::ResizeBilinearOptions,
          tflite::CreateResizeBilinearOptions(fbb_, o.align_corners, o.half_pixel_centers).Union()};
    }
    return {tflite::BuiltinOptions::ResizeNearestNeighborOptions,
            tflite::CreateResizeNearestNeighborOptions(fbb_, o.align_corners, o.half_pixel_centers)
                .Union()};
  }
  OptionsRef operator()(const LeakyReluOpts& o) {
    return {tflite::BuiltinOptions::LeakyReluOptions,
            tflite::CreateLeakyReluOptions(fbb_, o.alpha).Union()};
  }
  OptionsRef operator()(const BatchMatMulOpts& o) {
    return {tflite::BuiltinOptions::BatchMatMulOptions,
            tflite::CreateBatchMatMulOptions(fbb_, o.adj_x, o.adj_y).Union()};
  }
  OptionsRef operator()(const GatherOpts& o) {
    return {tflite::BuiltinOptions::GatherOptions,
            tflite::CreateGatherOptions(fbb_, o.axis, o.batch_dims).Union()};
  }
  OptionsRef operator()(const PackOpts& o) {
    return {tflite::BuiltinOptions::PackOptions,
            tflite::CreatePackOptions(fbb_, o.values_count, o.axis).Union()};
  }
  OptionsRef operator()(const UnpackOpts& o) {
    return {tflite::BuiltinOptions::UnpackOptions,
            tflite::CreateUnpackOptions(fbb_, o.num, o.axis).Union()};
  }
  OptionsRef operator()(const SplitOpts& o) {
    if (code_ == 102) {
      return {tflite::BuiltinOptions::SplitVOptions,
              tflite::CreateSplitVOptions(fbb_, o.num_splits).Union()};
    }
    return {tflite::BuiltinOptions::SplitOptions,
            tflite::CreateSplitOptions(fbb_, o.num_splits).Union()};
  }
  OptionsRef operator()(const BlockSizeOpts& o) {
    if (code_ == 26) {
      return {tflite::BuiltinOptions::SpaceToDepthOptions,
              tflite::CreateSpaceToDepthOptions(fbb_, o.block_size).Union()};
    }
    return {tflite::BuiltinOptions::DepthToSpaceOptions,
            tflite::CreateDepthToSpaceOptions(fbb_, o.block_size).Union()};
  }
  OptionsRef operator()(const ArgMinMaxOpts& o) {
    const auto type = static_cast<int8_t>(o.output_type);
    if (code_ == 79) {
      return {tflite::BuiltinOptions::ArgMinOptions,
              tflite::CreateArgMinOptions(fbb_, type).Union()};
    }
    return {tflite::BuiltinOptions::ArgMaxOptions, tflite::CreateArgMaxOptions(fbb_, type).Union()};
  }
  OptionsRef operator()(const MirrorPadOpts& o) {
    return {tflite::BuiltinOptions::MirrorPadOptions,
            tflite::CreateMirrorPadOptions(fbb_, o.mode).Union()};
  }
  OptionsRef operator()(const CumsumOpts& o) {
    return {tflite::BuiltinOptions::CumsumOptions,
            tflite::CreateCumsumOptions(fbb_, o.exclusive, o.reverse).Union()};
  }
  OptionsRef operator()(const TransposeConvOpts& o) {
    return {tflite::BuiltinOptions::TransposeConvOptions,
            tflite::CreateTransposeConvOptions(fbb_, Byte(o.padding), o.stride_w, o.stride_h,
                                               Byte(o.activation))
                .Union()};
  }
  OptionsRef operator()(const SvdfOpts& o) {
    return {tflite::BuiltinOptions::SVDFOptions,
            tflite::CreateSVDFOptions(fbb_, o.rank, Byte(o.activation)).Union()};
  }
  OptionsRef operator()(const UnidirectionalSequenceLstmOpts& o) {
    return {tflite::BuiltinOptions::UnidirectionalSequenceLSTMOptions,
            tflite::CreateUnidirectionalSequenceLSTMOptions(fbb_, Byte(o.activation), o.cell_clip,
                                                            o.proj_clip, o.time_major)
                .Union()};
  }
  OptionsRef operator()(const ShapeOpts& o) {
    return {tflite::BuiltinOptions::ShapeOptions,
            tflite::CreateShapeOptions(fbb_, static_cast<int8_t>(o.out_type)).Union()};
  }

 private:
  FlatBufferBuilder& fbb_;
  int32_t code_;
};

Offset<tflite::QuantizationParameters> WriteQuant(FlatBufferBuilder& fbb, const QuantParams& q) {
  if (q.scales.empty() && q.zero_points.empty()) return 0;
  return tflite::CreateQuantizationParameters(fbb, 0, 0, fbb.CreateVector(q.scales),
                                              fbb.CreateVector(q.zero_points),
                                              tflite::QuantizationDetails::NONE, 0, q.axis);
}

Offset<tflite::Tensor> WriteTensor(FlatBufferBuilder& fbb, const TfliteBuilder::TensorSpec& t) {
  Offset<flatbuffers::Vector<int32_t>> shape = 0;
  if (t.write_shape) shape = fbb.CreateVector(t.shape);
  auto quant = WriteQuant(fbb, t.quant);
  return tflite::CreateTensor(fbb, shape, t.type, t.buffer, fbb.CreateString(t.name), quant,
                              t.is_variable);
}

Offset<tflite::Buffer> WriteBuffer(FlatBufferBuilder& fbb, const std::vector<uint8_t>& bytes) {
  if (bytes.empty()) return tflite::CreateBuffer(fbb);
  // The schema declares force_align 16 on Buffer.data; the TFLite runtime reads weights in place
  // and relies on it.
  fbb.ForceVectorAlignment(bytes.size(), sizeof(uint8_t), 16);
  return tflite::CreateBuffer(fbb, fbb.CreateVector(bytes));
}

}  // namespace

std::vector<uint8_t> DetectionPostprocessFlexbuffer(const DetectionPostprocessOpts& o) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Int("max_detections", o.max_detections);
    fbb.Int("max_classes_per_detection", o.max_classes_per_detection);
    fbb.Int("detections_per_class", o.detections_per_class);
    fbb.Bool("use_regular_nms", o.use_regular_nms);
    fbb.Float("nms_score_threshold", o.nms_score_threshold);
    fbb.Float("nms_iou_threshold", o.nms_iou_threshold);
    fbb.Int("num_classes", o.num_classes);
    fbb.Float("y_scale", o.y_scale);
    fbb.Float("x_scale", o.x_scale);
    fbb.Float("h_scale", o.h_scale);
    fbb.Float("w_scale", o.w_scale);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

std::vector<uint8_t> IntMapFlexbuffer(const std::vector<std::pair<std::string, int64_t>>& entries) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    for (const auto& [key, value] : entries) fbb.Int(key.c_str(), value);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

std::vector<uint8_t> Int32Bytes(std::span<const int32_t> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t v = static_cast<uint32_t>(values[i]);
    for (size_t b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return bytes;
}

uint32_t TfliteBuilder::AddBuffer(std::vector<uint8_t> bytes) {
  buffers_.push_back(std::move(bytes));
  return static_cast<uint32_t>(buffers_.size() - 1);
}

int TfliteBuilder::AddTensor(std::string name, std::vector<int32_t> shape, TflType type,
                             QuantParams quant, std::optional<std::vector<uint8_t>> data) {
  TensorSpec t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = static_cast<int8_t>(type);
  t.quant = std::move(quant);
  if (data) t.buffer = AddBuffer(std::move(*data));
  tensors_.push_back(std::move(t));
  return static_cast<int>(tensors_.size() - 1);
}

int TfliteBuilder::AddConstInt8(std::string name, std::vector<int32_t> shape,
                                std::span<const int8_t> values, QuantParams quant) {
  std::vector<uint8_t> bytes(values.size());
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), values.size());
  return AddTensor(std::move(name), std::move(shape), TflType::kInt8, std::move(quant),
                   std::move(bytes));
}

int TfliteBuilder::AddConstInt32(std::string name, std::vector<int32_t> shape,
                                 std::span<const int32_t> values, QuantParams quant) {
  return AddTensor(std::move(name), std::move(shape), TflType::kInt32, std::move(quant),
                   Int32Bytes(values));
}

uint32_t TfliteBuilder::OpcodeIndex(int32_t code, const std::string& custom_code) {
  for (size_t i = 0; i < opcodes_.size(); ++i) {
    if (opcodes_[i].code == code && opcodes_[i].custom_code == custom_code) {
      return static_cast<uint32_t>(i);
    }
  }
  opcodes_.push_back({code, custom_code});
  return static_cast<uint32_t>(opcodes_.size() - 1);
}

int TfliteBuilder::AddOperator(int32_t builtin_code, std::vector<int32_t> inputs,
                               std::vector<int32_t> outputs, BuilderOptions options) {
  OperatorSpec op;
  op.opcode_index = OpcodeIndex(builtin_code, "");
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.options = std::move(options);
  op.code = builtin_code;
  operators_.push_back(std::move(op));
  return static_cast<int>(operators_.size() - 1);
}

int TfliteBuilder::AddCustomOperator(const std::string& custom_code, std::vector<int32_t> inputs,
                                     std::vector<int32_t> outputs,
                                     std::vector<uint8_t> custom_options) {
  OperatorSpec op;
  op.opcode_index = OpcodeIndex(kBuiltinCustom, custom_code);
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.code = kBuiltinCustom;
  op.custom_options = std::move(custom_options);
  operators_.push_back(std::move(op));
  return static_cast<int>(operators_.size() - 1);
}

int TfliteBuilder::AddSubgraph(TfliteBuilder sub) {
  extra_subgraphs_.push_back(std::move(sub));
  return subgraph_count_ + static_cast<int>(extra_subgraphs_.size()) - 1;
}

std::vector<uint8_t> TfliteBuilder::Finish() const {
  FlatBufferBuilder fbb;
  // The added subgraphs' operator codes and buffers join this builder's; their indices shift.
  std::vector<OpcodeSpec> opcodes = opcodes_;
  std::vector<std::vector<uint8_t>> buffers = buffers_;
  struct Remap {
    const TfliteBuilder* builder;
    std::vector<uint32_t> opcode;
    uint32_t buffer_base;
  };
  std::vector<Remap> remaps;
  for (int s = 0; s < subgraph_count_; ++s) {
    std::vector<uint32_t> same(opcodes_.size());
    for (size_t i = 0; i < same.size(); ++i) same[i] = static_cast<uint32_t>(i);
    remaps.push_back({this, same, 0});
  }
  for (const TfliteBuilder& sub : extra_subgraphs_) {
    Remap r{&sub, {}, static_cast<uint32_t>(buffers.size() - 1)};
    for (const OpcodeSpec& c : sub.opcodes_) {
      auto it = std::find_if(opcodes.begin(), opcodes.end(), [&](const OpcodeSpec& o) {
        return o.code == c.code && o.custom_code == c.custom_code;
      });
      if (it == opcodes.end()) it = opcodes.insert(opcodes.end(), c);
      r.opcode.push_back(static_cast<uint32_t>(it - opcodes.begin()));
    }
    buffers.insert(buffers.end(), sub.buffers_.begin() + 1, sub.buffers_.end());
    remaps.push_back(std::move(r));
  }
  std::vector<Offset<tflite::OperatorCode>> codes;
  for (const OpcodeSpec& c : opcodes) {
    Offset<flatbuffers::String> custom = 0;
    if (!c.custom_code.empty()) custom = fbb.CreateString(c.custom_code);
    const auto deprecated = static_cast<int8_t>(std::min(c.code, 127));
    const int32_t builtin = encoding_ == OpcodeEncoding::kOld ? 0 : c.code;
    codes.push_back(tflite::CreateOperatorCode(fbb, deprecated, custom, 1, builtin));
  }
  std::vector<Offset<tflite::SubGraph>> subgraphs;
  for (const Remap& r : remaps) {
    const TfliteBuilder& g = *r.builder;
    std::vector<Offset<tflite::Tensor>> tensors;
    for (TensorSpec t : g.tensors_) {
      if (t.buffer != 0) t.buffer += r.buffer_base;
      tensors.push_back(WriteTensor(fbb, t));
    }
    std::vector<Offset<tflite::Operator>> ops;
    for (const OperatorSpec& op : g.operators_) {
      const OptionsRef opts = std::visit(OptionsWriter(fbb, op.code), op.options);
      Offset<flatbuffers::Vector<uint8_t>> custom = 0;
      if (!op.custom_options.empty()) custom = fbb.CreateVector(op.custom_options);
      const uint32_t opcode =
          op.opcode_index < r.opcode.size() ? r.opcode[op.opcode_index] : op.opcode_index;
      ops.push_back(tflite::CreateOperator(fbb, opcode, fbb.CreateVector(op.inputs),
                                           fbb.CreateVector(op.outputs), opts.first, opts.second,
                                           custom, op.custom_options_format));
    }
    subgraphs.push_back(tflite::CreateSubGraph(
        fbb, fbb.CreateVector(tensors), fbb.CreateVector(g.inputs_), fbb.CreateVector(g.outputs_),
        fbb.CreateVector(ops), fbb.CreateString(g.name_)));
  }
  std::vector<Offset<tflite::Buffer>> buffer_tables;
  for (const auto& bytes : buffers) buffer_tables.push_back(WriteBuffer(fbb, bytes));
  const auto model =
      tflite::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs),
                          fbb.CreateString("boardlab test model"), fbb.CreateVector(buffer_tables));
  tflite::FinishModelBuffer(fbb, model);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace boardlab::testing
