#pragma once

// Writes small TFLite flatbuffers for tests, so that no test has to commit a model file.
//
// Usage:
//   TfliteBuilder b;
//   QuantParams act{{0.05f}, {-3}};
//   int in = b.AddTensor("in", {1, 8, 8, 3}, TflType::kInt8, act);
//   int w = b.AddConstInt8("w", {4, 3, 3, 3}, weights, {scales, zeros, 0});
//   int out = b.AddTensor("out", {1, 8, 8, 4}, TflType::kInt8, act);
//   b.AddOperator(3 /*CONV_2D*/, {in, w, -1}, {out}, Conv2DOpts{});
//   b.SetInputs({in});
//   b.SetOutputs({out});
//   std::vector<uint8_t> model = b.Finish();
//
// The builder only records what it is told and serialises it in Finish(), so tests can also
// write deliberately broken models: tensor and operator fields are reachable through
// mutable_tensor() / mutable_operator() and nothing is validated here.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir.h"

namespace boardlab::testing {

/// TFLite TensorType codes (tflite-int8.md section 4). Other codes can be written with a cast.
enum class TflType : int8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt32 = 2,
  kUint8 = 3,
  kInt64 = 4,
  kBool = 6,
  kInt16 = 7,
  kInt8 = 9,
  kUint64 = 12,
  kUint32 = 15,
  kResource = 13,
};

/// Affine quantization as written into QuantizationParameters. Empty `scales` writes no
/// quantization table at all.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t axis = 0;
};

// Options tables, one struct per TFLite options table. Padding and Activation reuse the IR enums
// because their numeric values are TFLite's (out-of-range values can be written with a cast).
using compiler::Activation;
using compiler::Padding;

struct Conv2DOpts {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  Activation activation = Activation::kNone;
};
struct DepthwiseConv2DOpts {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t depth_multiplier = 1;
  Activation activation = Activation::kNone;
};
struct Pool2DOpts {
  Padding padding = Padding::kValid;
  int32_t stride_w = 1, stride_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};
struct FullyConnectedOpts {
  Activation activation = Activation::kNone;
  bool keep_num_dims = false;
  int8_t weights_format = 0;  // 1 = SHUFFLED4x16INT8
};
/// ADD, SUB, MUL, DIV and L2_NORMALIZATION: the builder picks AddOptions / SubOptions /
/// MulOptions / DivOptions / L2NormOptions from the op code.
struct ElementwiseOpts {
  Activation activation = Activation::kNone;
};
struct ConcatenationOpts {
  int32_t axis = 0;
  Activation activation = Activation::kNone;
};
struct SoftmaxOpts {
  float beta = 1.0f;
};
struct ReducerOpts {
  bool keep_dims = false;
};
struct ReshapeOpts {
  std::vector<int32_t> new_shape;
};
struct SqueezeOpts {
  std::vector<int32_t> squeeze_dims;
};
struct StridedSliceOpts {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};
/// RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: the builder picks the table from the op code.
struct ResizeNearestNeighborOpts {
  bool align_corners = false;
  bool half_pixel_centers = false;
};
struct LeakyReluOpts {
  float alpha = 0.2f;
};
struct BatchMatMulOpts {
  bool adj_x = false, adj_y = false;
};

struct GatherOpts {
  int32_t axis = 0, batch_dims = 0;
};
struct PackOpts {
  int32_t values_count = 0, axis = 0;
};
struct UnpackOpts {
  int32_t num = 0, axis = 0;
};
/// SPLIT and SPLIT_V: the builder picks SplitOptions / SplitVOptions from the op code.
struct SplitOpts {
  int32_t num_splits = 0;
};
/// DEPTH_TO_SPACE and SPACE_TO_DEPTH: the builder picks the table from the op code.
struct BlockSizeOpts {
  int32_t block_size = 2;
};
/// ARG_MAX and ARG_MIN: the builder picks the table from the op code.
struct ArgMinMaxOpts {
  TflType output_type = TflType::kInt32;
};
struct MirrorPadOpts {
  int8_t mode = 0;  // 0 REFLECT, 1 SYMMETRIC
};
struct ShapeOpts {
  TflType out_type = TflType::kInt32;
};
struct CumsumOpts {
  bool exclusive = false, reverse = false;
};
struct TransposeConvOpts {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  Activation activation = Activation::kNone;
};
struct SvdfOpts {
  int32_t rank = 1;
  Activation activation = Activation::kNone;
};
struct UnidirectionalSequenceLstmOpts {
  Activation activation = Activation::kTanh;
  float cell_clip = 0.0f, proj_clip = 0.0f;
  bool time_major = false;
};

/// IF (then/else) and WHILE (cond/body): the builder picks IfOptions / WhileOptions from the op
/// code.
struct ControlFlowOpts {
  int32_t first = 1, second = 2;
};
/// CALL_ONCE: the init subgraph it runs.
struct CallOnceOpts {
  int32_t init_subgraph = 1;
};
/// VAR_HANDLE: the variable's names; nullopt writes no string.
struct VarHandleOpts {
  std::optional<std::string> container;
  std::optional<std::string> shared_name;
};

using BuilderOptions =
    std::variant<std::monostate, Conv2DOpts, DepthwiseConv2DOpts, Pool2DOpts, FullyConnectedOpts,
                 ElementwiseOpts, ConcatenationOpts, SoftmaxOpts, ReducerOpts, ReshapeOpts,
                 SqueezeOpts, StridedSliceOpts, ResizeNearestNeighborOpts, LeakyReluOpts,
                 BatchMatMulOpts, GatherOpts, PackOpts, UnpackOpts, SplitOpts, BlockSizeOpts,
                 ArgMinMaxOpts, MirrorPadOpts, ShapeOpts, CumsumOpts, TransposeConvOpts, SvdfOpts,
                 UnidirectionalSequenceLstmOpts, ControlFlowOpts, CallOnceOpts, VarHandleOpts>;

/// BuiltinOperator codes used by tests that are not in compiler::OpType (LSH_PROJECTION: no
/// TFLite Micro kernel either).
inline constexpr int32_t kBuiltinLshProjection = 15;
inline constexpr int32_t kBuiltinCustom = 32;

/// How OperatorCode tables encode the builtin code (tflite-int8.md section 3).
enum class OpcodeEncoding {
  kCurrent,  // builtin_code = code, deprecated_builtin_code = min(code, 127)
  kOld,      // deprecated_builtin_code only (pre-2.4 writers, the MLPerf Tiny models)
};

class TfliteBuilder {
 public:
  struct TensorSpec {
    std::string name;
    std::vector<int32_t> shape;
    int8_t type = static_cast<int8_t>(TflType::kInt8);
    QuantParams quant;
    uint32_t buffer = 0;       // 0 = the empty sentinel (activation)
    bool write_shape = true;   // false omits the shape vector (a scalar)
    bool is_variable = false;  // a variable (stateful) tensor
  };
  struct OperatorSpec {
    uint32_t opcode_index = 0;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    BuilderOptions options;
    int32_t code = 0;                     // the builtin code, for picking the options table
    std::vector<uint8_t> custom_options;  // written when not empty
    int8_t custom_options_format = 0;     // FLEXBUFFERS
  };

  /// Adds a tensor and returns its index. With `data`, the bytes go into a new buffer (written
  /// as given: tests may pass a wrong byte count on purpose).
  int AddTensor(std::string name, std::vector<int32_t> shape, TflType type, QuantParams quant = {},
                std::optional<std::vector<uint8_t>> data = std::nullopt);
  /// Constant int8 tensor (weights); `values` are written as raw bytes.
  int AddConstInt8(std::string name, std::vector<int32_t> shape, std::span<const int8_t> values,
                   QuantParams quant = {});
  /// Constant int32 tensor (biases, shape/axis/padding operands), little-endian.
  int AddConstInt32(std::string name, std::vector<int32_t> shape, std::span<const int32_t> values,
                    QuantParams quant = {});
  /// Adds a raw buffer and returns its index (for tensors pointed at it by hand).
  uint32_t AddBuffer(std::vector<uint8_t> bytes);

  /// Adds an operator with a builtin code; returns its index. Input -1 = optional absent input.
  int AddOperator(int32_t builtin_code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                  BuilderOptions options = {});
  /// Adds a CUSTOM operator with `custom_code` (e.g. "NeutronGraph") and its custom options
  /// (a flexbuffer, written as given).
  int AddCustomOperator(const std::string& custom_code, std::vector<int32_t> inputs,
                        std::vector<int32_t> outputs, std::vector<uint8_t> custom_options = {});

  void SetInputs(std::vector<int32_t> inputs) { inputs_ = std::move(inputs); }
  void SetOutputs(std::vector<int32_t> outputs) { outputs_ = std::move(outputs); }
  void set_opcode_encoding(OpcodeEncoding encoding) { encoding_ = encoding; }
  /// Writes the subgraph this many times (>1 models control flow the importer must refuse).
  void set_subgraph_count(int count) { subgraph_count_ = count; }
  /// Appends `sub`'s subgraph (its tensors, operators, inputs, outputs and name) as the model's
  /// next subgraph, after this builder's own; its buffers and operator codes are merged into the
  /// model's. Returns the subgraph's index (1 for the first one added).
  int AddSubgraph(TfliteBuilder sub);
  void set_name(std::string name) { name_ = std::move(name); }

  TensorSpec& mutable_tensor(int index) { return tensors_.at(static_cast<size_t>(index)); }
  const TensorSpec& tensor(int index) const { return tensors_.at(static_cast<size_t>(index)); }
  OperatorSpec& mutable_operator(int index) { return operators_.at(static_cast<size_t>(index)); }
  const OperatorSpec& operator_spec(int index) const {
    return operators_.at(static_cast<size_t>(index));
  }
  const std::vector<uint8_t>& buffer(uint32_t index) const { return buffers_.at(index); }
  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  int num_operators() const { return static_cast<int>(operators_.size()); }

  /// Serialises the model (identifier "TFL3", version 3, buffer 0 empty). The builder can be
  /// finished more than once, e.g. before and after a mutation.
  std::vector<uint8_t> Finish() const;

 private:
  struct OpcodeSpec {
    int32_t code;
    std::string custom_code;
  };
  uint32_t OpcodeIndex(int32_t code, const std::string& custom_code);

  std::vector<TensorSpec> tensors_;
  std::vector<OperatorSpec> operators_;
  std::vector<OpcodeSpec> opcodes_;
  std::vector<std::vector<uint8_t>> buffers_{std::vector<uint8_t>{}};
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  OpcodeEncoding encoding_ = OpcodeEncoding::kCurrent;
  int subgraph_count_ = 1;
  std::vector<TfliteBuilder> extra_subgraphs_;
  std::string name_ = "main";
};

/// The flexbuffer options of TFLite_Detection_PostProcess (the keys TFLite's converter writes).
struct DetectionPostprocessOpts {
  int32_t max_detections = 3;
  int32_t max_classes_per_detection = 1;
  int32_t detections_per_class = 1;
  int32_t num_classes = 2;
  float nms_score_threshold = 0.0f;
  float nms_iou_threshold = 0.5f;
  float y_scale = 10.0f, x_scale = 10.0f, h_scale = 5.0f, w_scale = 5.0f;
  bool use_regular_nms = false;
};
std::vector<uint8_t> DetectionPostprocessFlexbuffer(const DetectionPostprocessOpts& o);

/// A flexbuffer map of integer options, as TFLite's converter writes a signal op's attributes
/// (e.g. {{"shift", 12}} for SignalWindow).
std::vector<uint8_t> IntMapFlexbuffer(const std::vector<std::pair<std::string, int64_t>>& entries);

/// Bytes of `values` in little-endian order (the host order on every platform we build for).
std::vector<uint8_t> Int32Bytes(std::span<const int32_t> values);

}  // namespace boardlab::testing
