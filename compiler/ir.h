#pragma once

// The compiler's intermediate representation: a dataflow graph of operators and tensors.
//
// Usage:
//   absl::StatusOr<Graph> graph = ImportTflite(bytes);
//   for (const Op& op : graph->ops) { ... graph->tensors[op.inputs[0]] ... }
//
// Ops are stored in execution (topological) order. Tensors and ops refer to each other by index
// into `Graph::tensors` / `Graph::ops`; an optional operator input is kNoTensor. Passes that
// remove ops mark them dead (`Op::dead`) and call `Graph::Compact()` once at the end, which keeps
// indices stable while a pass runs. `VerifyGraph()` checks the def/use links both ways.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "compiler/detection_postprocess_options.h"
#include "compiler/op_types.h"
#include "compiler/signal_options.h"
#include "compiler/stream_options.h"

namespace boardlab::compiler {

inline constexpr int kNoTensor = -1;

/// kUint32 and kUint64 carry TFLite Micro's signal library values (SIGNAL_ENERGY's and the
/// filter bank's accumulators); only the ops that take them accept them.
/// kResource: a resource handle (TFLite RESOURCE, VAR_HANDLE's output). It names a variable and
/// holds no data boardlab stores; the importer resolves every handle when compiling
/// (import_resource_variables.h), so no handle reaches the passes after it.
enum class DataType : uint8_t {
  kFloat32,
  kInt8,
  kUint8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
  kUint32,
  kUint64,
  kResource,
  kOther
};

/// Bytes per element; 0 for kOther.
int DataTypeSize(DataType type);
const char* DataTypeName(DataType type);

/// Affine quantization: real = (q - zero_point) * scale. Per-tensor when `scale` has one entry,
/// per-channel along `axis` otherwise (then `zero_point` has the same count).
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t axis = 0;

  bool empty() const { return scale.empty(); }
  bool per_channel() const { return scale.size() > 1; }
  int64_t zp() const { return zero_point.empty() ? 0 : zero_point[0]; }
  bool SameAs(const Quantization& other) const;
};

/// Memory layout of a 4-D activation. NHWC is native for the NPU and our kernels; kNCHW marks
/// channels-first tensors that arrive from PyTorch exports.
enum class Layout : uint8_t { kAny, kNHWC, kNCHW };

struct Tensor {
  std::string name;
  std::vector<int32_t> shape;
  DataType type = DataType::kInt8;
  Quantization quant;
  /// Constant data (weights, biases, shape operands); empty for activations.
  std::vector<uint8_t> data;
  bool is_constant = false;
  /// A variable (stateful) tensor: an op reads and updates it in place, and it keeps its value
  /// from one inference to the next. It is reset when the program loads, to its zero point
  /// (int8) or to 0 (other types), as TFLite Micro's ResetVariableTensors does; any initial data
  /// in the model is ignored, as there. Only the state operands of SVDF and
  /// UNIDIRECTIONAL_SEQUENCE_LSTM may be variables (the importer checks).
  bool is_variable = false;
  /// The byte a variable's bytes are all set to when the program loads; -1 = the rule above
  /// (zero point for int8, else 0). Resource variables take TFLite Micro's rule (the first
  /// assignment's zero point as an int8 byte, 0 without quantization); CALL_ONCE's "not run yet"
  /// flag starts at 1.
  int reset_fill = -1;
  Layout layout = Layout::kAny;
  /// Index of the op that writes this tensor; -1 for graph inputs and constants.
  int producer = -1;
  /// Indices of the ops that read this tensor (an op appears once per input slot).
  std::vector<int> consumers;

  int64_t NumElements() const;
  int64_t SizeBytes() const { return NumElements() * DataTypeSize(type); }
};

enum class Padding : uint8_t { kSame, kValid };

/// Fused activation as TFLite encodes it (ActivationFunctionType).
enum class Activation : uint8_t { kNone, kRelu, kReluN1To1, kRelu6, kTanh, kSignBit };

struct ConvOptions {  // CONV_2D and DEPTHWISE_CONV_2D
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t depth_multiplier = 1;  // depthwise only
  Activation activation = Activation::kNone;
};

struct PoolOptions {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};

struct FullyConnectedOptions {
  Activation activation = Activation::kNone;
  bool keep_num_dims = false;
};

struct ElementwiseOptions {  // ADD, SUB, MUL, DIV
  Activation activation = Activation::kNone;
};

struct ConcatOptions {
  int32_t axis = 0;
  Activation activation = Activation::kNone;
};

struct SoftmaxOptions {
  float beta = 1.0f;
};

struct ReducerOptions {
  bool keep_dims = false;
};

struct SqueezeOptions {
  std::vector<int32_t> squeeze_dims;
};

struct StridedSliceOptions {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};

struct ResizeOptions {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

struct LeakyReluOptions {
  float alpha = 0.2f;
};

struct BatchMatMulOptions {
  bool adj_x = false, adj_y = false;
};

struct GatherOptions {
  int32_t axis = 0;
  int32_t batch_dims = 0;
};

/// PACK (values_count) and UNPACK (num): how many tensors are stacked along, or taken apart
/// from, `axis`.
struct PackOptions {
  int32_t count = 0;
  int32_t axis = 0;
};

struct SplitOptions {  // SPLIT, SPLIT_V
  int32_t num_splits = 0;
};

struct BlockOptions {  // DEPTH_TO_SPACE, SPACE_TO_DEPTH
  int32_t block_size = 0;
};

/// MIRROR_PAD: REFLECT leaves the border element out of the mirror, SYMMETRIC repeats it.
enum class MirrorPadMode : uint8_t { kReflect, kSymmetric };
struct MirrorPadOptions {
  MirrorPadMode mode = MirrorPadMode::kReflect;
};

struct CumsumOptions {
  bool exclusive = false;  // element i sums the elements before i only
  bool reverse = false;    // sums run from the end of the axis
};

/// SVDF: `rank` filters per output unit; the fused activation is kept for validation (TFLite
/// Micro's integer SVDF applies none).
struct SvdfOptions {
  int32_t rank = 0;
  Activation activation = Activation::kNone;
};

/// UNIDIRECTIONAL_SEQUENCE_LSTM: the cell gate's activation, the clips (0 = none) and the
/// sequence layout ([time, batch, input] when time_major, else [batch, time, input]).
struct LstmOptions {
  Activation activation = Activation::kTanh;
  float cell_clip = 0.0f;
  float proj_clip = 0.0f;
  bool time_major = false;
};

/// IF, WHILE and CALL_ONCE: the TFLite subgraphs they run (indices into the model's subgraphs,
/// >= 1; see Graph::subgraph). IF runs `first` (then) when its condition is true, else `second`
/// (else); WHILE runs `first` (cond) and, while it yields true, `second` (body); CALL_ONCE runs
/// `first` (init) on the first inference after a load, and `second` is the same subgraph.
struct ControlFlowOptions {
  int32_t first = 0;
  int32_t second = 0;
};

/// VAR_HANDLE: the variable it names. Handles with the same shared_name name the same variable,
/// in whichever subgraph they are; a handle without a container matches any container (TFLite
/// Micro's MicroResourceVariables::FindId).
struct VarHandleOptions {
  std::string container;
  bool has_container = false;
  std::string shared_name;
};

using OpOptions =
    std::variant<std::monostate, ConvOptions, PoolOptions, FullyConnectedOptions,
                 ElementwiseOptions, ConcatOptions, SoftmaxOptions, ReducerOptions, SqueezeOptions,
                 StridedSliceOptions, ResizeOptions, LeakyReluOptions, BatchMatMulOptions,
                 GatherOptions, PackOptions, SplitOptions, BlockOptions, MirrorPadOptions,
                 CumsumOptions, SvdfOptions, DetectionPostprocessOptions, LstmOptions,
                 ControlFlowOptions, SignalOptions, StreamOptions, VarHandleOptions>;

/// Where an op runs after partitioning.
enum class Unit : uint8_t { kUnassigned, kNpu, kCpu, kRemoved };

struct Op {
  OpType type;
  std::vector<int> inputs;   // tensor indices; kNoTensor for an absent optional input
  std::vector<int> outputs;  // tensor indices
  OpOptions options;
  /// Index of the TFLite operator this op came from (provenance, STYLE.md rule 19). Ops created
  /// by passes keep the index of the op they replace; fused ops list every source in
  /// `fused_sources`.
  int source_index = -1;
  std::vector<int> fused_sources;
  Unit unit = Unit::kUnassigned;
  /// Why the op stays on the CPU, for people: "CONV_2D #12: kernel_h*kernel_w*ceil8(Cin)=73728 >
  /// 65535". Empty for NPU ops.
  std::string cpu_reason;
  /// NPU partition (graph) index for NPU ops; -1 otherwise.
  int partition = -1;
  bool dead = false;
  /// Position among the ops with side effects on resource variables (READ_VARIABLE,
  /// ASSIGN_VARIABLE, CALL_ONCE, and IF/WHILE whose subgraphs have such ops) in program order;
  /// -1 for every other op. A read after an assignment must see the new value and a read before
  /// it the old one, with no tensor between them to say so: the schedulers and the partitioner
  /// keep these ops in this order (EffectPredecessors), and VerifyGraph checks it.
  int effect_order = -1;

  template <typename T>
  const T& opts() const {
    return std::get<T>(options);
  }
  template <typename T>
  T& opts() {
    return std::get<T>(options);
  }
};

/// A subgraph that IF or WHILE calls (TFLite subgraph 1, 2, ...). Its tensors live in
/// Graph::tensors beside the main subgraph's (no tensor belongs to two subgraphs); its ops are
/// in execution order and are not part of Graph::ops, so the passes that work on the main
/// dataflow (fusion, partitioning, scheduling) never see them: they always run on the CPU.
struct Subgraph {
  std::string name;
  std::vector<Op> ops;
  std::vector<int> inputs;
  std::vector<int> outputs;
  /// The TFLite subgraph this one is (its own index) or copies (clone_handle_subgraphs.h): what
  /// its ops' source indices count in (0 = unset: its own index).
  int source = 0;
  /// 0 for the TFLite subgraph itself, n for the n-th copy of it.
  int copy = 0;
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<int> inputs;   // graph input tensor indices
  std::vector<int> outputs;  // graph output tensor indices
  std::string name;
  /// The called subgraphs: entry k - 1 is TFLite subgraph k (subgraph 0 is the main graph above).
  std::vector<Subgraph> subgraphs;

  /// TFLite subgraph `index` (>= 1) as ControlFlowOptions name it.
  const Subgraph& subgraph(int index) const { return subgraphs[static_cast<size_t>(index) - 1]; }
  /// The TFLite subgraph that subgraph `index` is or copies (Subgraph::source); 0 for 0.
  int SourceSubgraph(int index) const {
    if (index <= 0) return 0;
    const int source = subgraph(index).source;
    return source > 0 ? source : index;  // unset in IR built by hand (tests): its own
  }

  const Tensor& input(const Op& op, size_t i) const { return tensors[op.inputs[i]]; }
  const Tensor& output(const Op& op, size_t i = 0) const { return tensors[op.outputs[i]]; }

  /// Adds a tensor and returns its index.
  int AddTensor(Tensor tensor);
  /// Recomputes every tensor's producer and consumers from the ops (skipping dead ops).
  void RebuildUses();
  /// Removes dead ops and tensors nobody references, renumbering indices, then RebuildUses().
  void Compact();
  /// "CONV_2D #12" (type and source index), the way messages name an op.
  std::string Describe(const Op& op) const;
  /// `op` of graph.subgraph(`subgraph`) named by the TFLite subgraph its index counts in:
  /// "ADD #0 of subgraph 2", "ADD #0 of subgraph 2, copy 1" in a copy; Describe(op) for the main
  /// graph (`subgraph` 0).
  std::string Describe(const Op& op, int subgraph) const;
  /// Multiply-accumulates of one inference of `op` (0 for data movement).
  int64_t Macs(const Op& op) const;
};

/// For each op of graph.ops, the index of the op with side effects (Op::effect_order) that must
/// run before it, -1 for none: the live effect op just before it in effect order.
std::vector<int> EffectPredecessors(const Graph& graph);

/// Checks the def/use links both ways, index ranges and that ops are in topological order.
/// Passes call it after they run (STYLE.md rule 14).
absl::Status VerifyGraph(const Graph& graph);

}  // namespace boardlab::compiler
