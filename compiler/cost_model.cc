#include "compiler/cost_model.h"

#include "compiler/npu_constraints.h"

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

using runtime::timing::CpuKernelClass;
using runtime::timing::CpuKernelShape;
using runtime::timing::NpuKernelClass;
using runtime::timing::NpuKernelShape;

// Rows / columns / channels of an output tensor as the NPU walks it.
struct OutputGeometry {
  int64_t rows = 1, cols = 1, channels = 1;
};

OutputGeometry GeometryOf(const Tensor& out) {
  OutputGeometry g;
  const auto& s = out.shape;
  if (s.empty()) return g;
  if (s.size() == 4) return {int64_t{s[0]} * s[1], s[2], s[3]};
  g.channels = s.back();
  for (size_t i = 0; i + 1 < s.size(); ++i) g.rows *= s[i];
  return g;
}

NpuKernelClass NpuClassOf(OpType type) {
  if (IsComparisonOp(type)) return NpuKernelClass::kElementwise;
  switch (type) {
    case OpType::kConv2D:
    case OpType::kFullyConnected:
    case OpType::kTransposeConv:
      return NpuKernelClass::kConv;
    case OpType::kDepthwiseConv2D:
      return NpuKernelClass::kDepthwise;
    case OpType::kBatchMatMul:
      return NpuKernelClass::kMatMul;
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kL2Pool2D:
    case OpType::kMean:
    case OpType::kSum:
    case OpType::kReduceMax:
    case OpType::kReduceMin:
    case OpType::kArgMax:
    case OpType::kArgMin:
      return NpuKernelClass::kPool;
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kMaximum:
    case OpType::kMinimum:
    case OpType::kRelu:
    case OpType::kRelu6:
    case OpType::kLeakyRelu:
    case OpType::kLogistic:
    case OpType::kTanh:
    case OpType::kHardSwish:
    case OpType::kQuantize:
    case OpType::kDequantize:
    case OpType::kLogicalAnd:
    case OpType::kLogicalOr:
    case OpType::kLogicalNot:
    case OpType::kSelectV2:
    case OpType::kAbs:
    case OpType::kNeg:
    case OpType::kCast:
    case OpType::kExp:
    case OpType::kLog:
    case OpType::kSqrt:
    case OpType::kRsqrt:
    case OpType::kSquare:
    case OpType::kRound:
    case OpType::kFloor:
    case OpType::kCeil:
    case OpType::kSin:
    case OpType::kCos:
    case OpType::kFloorDiv:
    case OpType::kFloorMod:
    case OpType::kElu:
    case OpType::kPrelu:
    case OpType::kDiv:
    case OpType::kSquaredDifference:
    case OpType::kAddN:
    case OpType::kCumsum:
    case OpType::kL2Normalization:
    case OpType::kResizeBilinear:
      return NpuKernelClass::kElementwise;
    case OpType::kSoftmax:
    case OpType::kLogSoftmax:
      return NpuKernelClass::kSoftmax;
    default:
      return NpuKernelClass::kDataMovement;
  }
}

// Reduction length per output (input channels) and kernel taps of a MAC or pool op the NPU runs
// (NpuShapeFor; TRANSPOSE_CONV never does, see npu_constraints.cc) or of a CPU pool.
void SetReduction(const Graph& graph, const Op& op, NpuKernelShape& shape) {
  switch (op.type) {
    case OpType::kConv2D: {
      const Tensor& w = graph.input(op, 1);  // OHWI
      shape.in_channels = w.shape[3];
      shape.kernel_taps = int64_t{w.shape[1]} * w.shape[2];
      break;
    }
    case OpType::kDepthwiseConv2D: {
      const Tensor& w = graph.input(op, 1);  // 1HWC
      shape.kernel_taps = int64_t{w.shape[1]} * w.shape[2];
      break;
    }
    case OpType::kFullyConnected:
    case OpType::kBatchMatMul: {
      const int64_t out_elements = graph.output(op).NumElements();
      shape.in_channels = out_elements > 0 ? graph.Macs(op) / out_elements : 0;
      break;
    }
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kL2Pool2D: {
      const auto& opt = op.opts<PoolOptions>();
      shape.kernel_taps = int64_t{opt.filter_w} * opt.filter_h;
      break;
    }
    case OpType::kMean:
    case OpType::kSum:
    case OpType::kReduceMax:
    case OpType::kReduceMin:
    case OpType::kArgMax:
    case OpType::kArgMin: {
      const int64_t out_elements = graph.output(op).NumElements();
      shape.kernel_taps = out_elements > 0 ? graph.input(op, 0).NumElements() / out_elements : 1;
      break;
    }
    default:
      break;
  }
}

CpuKernelClass CpuClassOf(OpType type) {
  // Matrix-vector products, never on the NPU: they cost what a FULLY_CONNECTED of their MACs does.
  if (type == OpType::kSvdf || type == OpType::kUnidirectionalSequenceLstm) {
    return CpuKernelClass::kFullyConnected;
  }
  // Float decoding and selection over every score: counted per input element (a lower bound).
  if (type == OpType::kDetectionPostprocess) return CpuKernelClass::kElementwise;
  // One multiply (WINDOW), a max pass and a shift pass (FFT_AUTO_SCALE) or a copy (DELAY) per
  // element.
  if (IsSignalOp(type)) return CpuKernelClass::kElementwise;
  // Copies and adds over every element (framer, stacker, overlap-add, circular buffer).
  if (IsStreamOp(type)) return CpuKernelClass::kElementwise;
  switch (NpuClassOf(type)) {
    case NpuKernelClass::kConv:
      return type == OpType::kConv2D || type == OpType::kTransposeConv
                 ? CpuKernelClass::kConv
                 : CpuKernelClass::kFullyConnected;
    case NpuKernelClass::kDepthwise:
      return CpuKernelClass::kDepthwise;
    case NpuKernelClass::kMatMul:
      return CpuKernelClass::kFullyConnected;
    case NpuKernelClass::kPool:
      return CpuKernelClass::kElementwise;
    case NpuKernelClass::kElementwise:
      // Activations with a curve run through a 256-entry LUT on the CPU (CMSIS-NN style).
      if (type == OpType::kLogistic || type == OpType::kTanh || type == OpType::kHardSwish ||
          type == OpType::kElu) {
        return CpuKernelClass::kLut;
      }
      if (type == OpType::kQuantize || type == OpType::kDequantize || type == OpType::kCast) {
        return CpuKernelClass::kDataMovement;
      }
      return CpuKernelClass::kElementwise;
    case NpuKernelClass::kSoftmax:
      return CpuKernelClass::kLut;
    case NpuKernelClass::kDataMovement:
      return CpuKernelClass::kDataMovement;
  }
  return CpuKernelClass::kDataMovement;
}

}  // namespace

NpuKernelShape NpuShapeFor(const Graph& graph, const Op& op, bool weights_in_flash) {
  NpuKernelShape shape;
  shape.kind = NpuClassOf(op.type);
  const OutputGeometry g = GeometryOf(graph.output(op));
  shape.out_rows = g.rows;
  shape.out_cols = g.cols;
  shape.out_channels = g.channels;
  SetReduction(graph, op, shape);
  if (IsSingleChannelDepthwise(graph, op)) {
    shape.kind = NpuKernelClass::kConv;  // lowered as a convolution over one input channel
    shape.in_channels = 1;
  }
  for (int t : op.inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = graph.tensors[t];
    (tensor.is_constant ? shape.weight_bytes : shape.input_bytes) += tensor.SizeBytes();
  }
  for (int t : op.outputs) shape.output_bytes += graph.tensors[t].SizeBytes();
  shape.weights_in_flash = weights_in_flash && shape.weight_bytes > 0;
  return shape;
}

CpuKernelShape CpuShapeFor(const Graph& graph, const Op& op) {
  CpuKernelShape shape;
  shape.kind = CpuClassOf(op.type);
  // ASSIGN_VARIABLE copies its value (input 1); CALL_ONCE's own work is a flag.
  if (!op.outputs.empty()) {
    shape.elements = graph.output(op).NumElements();
  } else if (op.inputs.size() > 1) {
    shape.elements = graph.input(op, 1).NumElements();
  }
  if (op.type == OpType::kDetectionPostprocess) {
    shape.elements = graph.input(op, 0).NumElements() + graph.input(op, 1).NumElements();
  }
  switch (shape.kind) {
    case CpuKernelClass::kConv:
    case CpuKernelClass::kDepthwise:
    case CpuKernelClass::kFullyConnected:
      shape.macs = graph.Macs(op);
      shape.elements = 0;  // the per-MAC figures already include writing the outputs
      break;
    case CpuKernelClass::kElementwise:
      // Window reads of pools and reductions; plain element-wise ops cost per output only.
      if (NpuClassOf(op.type) == NpuKernelClass::kPool) {
        NpuKernelShape window;
        SetReduction(graph, op, window);
        shape.macs = shape.elements * window.kernel_taps;
      }
      break;
    default:
      break;
  }
  return shape;
}

namespace {

OpCost CpuCost(const Graph& graph, const Op& op, const runtime::timing::TimingParams& params) {
  OpCost cost;
  cost.cycles = runtime::timing::CpuKernelCycles(CpuShapeFor(graph, op), params);
  cost.microseconds = runtime::timing::CyclesToMicroseconds(cost.cycles, params.cpu_clock_hz);
  return cost;
}

// Every op of a called subgraph runs on the CPU (partition.cc); each is costed for one run.
void EstimateSubgraphCosts(Compilation& c) {
  c.subgraph_op_costs.clear();
  for (const Subgraph& sub : c.graph.subgraphs) {
    std::vector<OpCost>& costs = c.subgraph_op_costs.emplace_back();
    for (const Op& op : sub.ops) costs.push_back(CpuCost(c.graph, op, c.target.timing));
  }
}

}  // namespace

absl::Status EstimateCost(Compilation& c) {
  const runtime::timing::TimingParams& params = c.target.timing;
  EstimateSubgraphCosts(c);
  c.op_costs.assign(c.graph.ops.size(), OpCost{});
  c.total_microseconds = 0;
  for (size_t i = 0; i < c.graph.ops.size(); ++i) {
    const Op& op = c.graph.ops[i];
    if (op.dead || op.unit == Unit::kRemoved) continue;
    OpCost& cost = c.op_costs[i];
    if (op.unit == Unit::kNpu) {
      const runtime::timing::NpuKernelCost npu = runtime::timing::NpuKernelCycles(
          NpuShapeFor(c.graph, op, c.memory.weights_in_flash), params);
      cost.cycles = npu.total;
      cost.utilization = npu.utilization;
      cost.microseconds = runtime::timing::CyclesToMicroseconds(npu.total, params.npu_clock_hz);
    } else if (op.unit == Unit::kCpu) {
      cost = CpuCost(c.graph, op, params);
    } else {
      return absl::FailedPreconditionError(absl::StrCat(
          "EstimateCost: ", c.graph.Describe(op), " has no unit (run the partitioner first)"));
    }
    c.total_microseconds += cost.microseconds;
  }
  return absl::OkStatus();
}

}  // namespace boardlab::compiler
