#include "compiler/canonicalize.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

std::vector<int32_t> ReadInts(const Tensor& t) {
  std::vector<int32_t> values(t.data.size() / sizeof(int32_t));
  std::memcpy(values.data(), t.data.data(), values.size() * sizeof(int32_t));
  return values;
}

bool IsGraphOutput(const Graph& g, int tensor) {
  return std::find(g.outputs.begin(), g.outputs.end(), tensor) != g.outputs.end();
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> Strides(const std::vector<int32_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

// Physically permutes constant data: out[i0..in] = in[index permuted by perm].
std::vector<uint8_t> TransposeData(const Tensor& in, const std::vector<int32_t>& perm) {
  const int elem = DataTypeSize(in.type);
  const size_t rank = in.shape.size();
  std::vector<int32_t> out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = in.shape[perm[i]];
  const std::vector<int64_t> in_strides = Strides(in.shape);
  std::vector<uint8_t> out(in.data.size());
  std::vector<int32_t> index(rank, 0);
  const int64_t count = in.NumElements();
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += index[i] * in_strides[perm[i]];
    std::memcpy(&out[flat * elem], &in.data[src * elem], elem);
    for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// RESHAPE/SQUEEZE/TRANSPOSE of a constant: the output tensor becomes a constant and the op dies.
bool FoldConstantOp(Graph& g, Op& op) {
  const bool foldable =
      op.type == OpType::kReshape || op.type == OpType::kSqueeze || op.type == OpType::kTranspose;
  if (!foldable || !g.input(op, 0).is_constant) return false;
  Tensor& out = g.tensors[op.outputs[0]];
  if (IsGraphOutput(g, op.outputs[0])) return false;
  const Tensor& in = g.input(op, 0);
  out.data = op.type == OpType::kTranspose ? TransposeData(in, ReadInts(g.input(op, 1))) : in.data;
  out.is_constant = true;
  op.dead = true;
  return true;
}

bool CanFuseActivationInto(const Op& producer) {
  switch (producer.type) {
    case OpType::kConv2D:
    case OpType::kDepthwiseConv2D:
    case OpType::kFullyConnected:
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kConcatenation:
      return true;
    default:
      return false;
  }
}

Activation* FusedActivationOf(Op& op) {
  if (auto* o = std::get_if<ConvOptions>(&op.options)) return &o->activation;
  if (auto* o = std::get_if<PoolOptions>(&op.options)) return &o->activation;
  if (auto* o = std::get_if<FullyConnectedOptions>(&op.options)) return &o->activation;
  if (auto* o = std::get_if<ElementwiseOptions>(&op.options)) return &o->activation;
  if (auto* o = std::get_if<ConcatOptions>(&op.options)) return &o->activation;
  return nullptr;
}

// Folds `relu` into `producer`, which writes its input `in`, when the bounds are exact: same
// quantization on both sides and no fused activation yet. The caller has checked that nothing
// else reads `in`.
bool FoldActivationInto(Op& producer, Op& relu, const Tensor& in, const Tensor& out) {
  if (!in.quant.SameAs(out.quant)) return false;
  Activation* act = FusedActivationOf(producer);
  if (producer.dead || !CanFuseActivationInto(producer) || !act || *act != Activation::kNone ||
      producer.outputs.size() != 1) {
    return false;
  }
  *act = relu.type == OpType::kRelu ? Activation::kRelu : Activation::kRelu6;
  producer.outputs[0] = relu.outputs[0];
  producer.fused_sources.push_back(relu.source_index);
  relu.dead = true;
  return true;
}

bool IsRelu(const Op& op) { return op.type == OpType::kRelu || op.type == OpType::kRelu6; }

bool FuseActivation(Graph& g, Op& relu) {
  if (!IsRelu(relu)) return false;
  const int in = relu.inputs[0];
  const Tensor& in_tensor = g.tensors[in];
  if (in_tensor.producer < 0 || in_tensor.consumers.size() != 1 || IsGraphOutput(g, in)) {
    return false;
  }
  if (!FoldActivationInto(g.ops[in_tensor.producer], relu, in_tensor, g.output(relu))) {
    return false;
  }
  g.RebuildUses();
  return true;
}

// The same fusion inside a called subgraph. Tensor::producer and consumers index the main graph's
// ops, so the subgraph's own writers and readers are counted here. A subgraph copied per handle
// binding shares its tensors with the copies; each copy is fused on its own ops, which stays
// consistent since a fused producer writes the ReLU's output tensor in that copy only.
void FuseSubgraphActivations(Graph& g, Subgraph& sub) {
  std::map<int, int> writer;
  std::map<int, int> readers;
  for (size_t i = 0; i < sub.ops.size(); ++i) {
    for (int t : sub.ops[i].inputs) {
      if (t != kNoTensor) ++readers[t];
    }
    for (int t : sub.ops[i].outputs) writer[t] = static_cast<int>(i);
  }
  for (Op& relu : sub.ops) {
    if (!IsRelu(relu)) continue;
    const int in = relu.inputs[0];
    const auto producer = writer.find(in);
    if (producer == writer.end() || readers[in] != 1 ||
        std::find(sub.outputs.begin(), sub.outputs.end(), in) != sub.outputs.end()) {
      continue;
    }
    Op& fused = sub.ops[static_cast<size_t>(producer->second)];
    if (FoldActivationInto(fused, relu, g.tensors[in], g.tensors[relu.outputs[0]])) {
      writer[relu.outputs[0]] = producer->second;
    }
  }
  std::erase_if(sub.ops, [](const Op& op) { return op.dead; });
}

bool IsCancellingPair(const std::vector<int32_t>& first, const std::vector<int32_t>& second) {
  if (first.size() != second.size()) return false;
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[second[i]] != static_cast<int32_t>(i)) return false;
  }
  return true;
}

// TRANSPOSE(p) feeding only TRANSPOSE(q) with q∘p = identity: both go; readers of the second
// read the first's input directly.
bool CancelTransposePair(Graph& g, Op& second) {
  if (second.type != OpType::kTranspose) return false;
  const Tensor& mid = g.input(second, 0);
  if (mid.producer < 0 || mid.consumers.size() != 1 || IsGraphOutput(g, second.inputs[0])) {
    return false;
  }
  Op& first = g.ops[mid.producer];
  if (first.type != OpType::kTranspose || first.dead) return false;
  if (!IsCancellingPair(ReadInts(g.input(first, 1)), ReadInts(g.input(second, 1)))) return false;
  const int source = first.inputs[0];
  const int result = second.outputs[0];
  if (IsGraphOutput(g, result) || !g.tensors[source].quant.SameAs(g.tensors[result].quant)) {
    return false;
  }
  for (Op& reader : g.ops) {
    for (int& t : reader.inputs) {
      if (t == result) t = source;
    }
  }
  first.dead = true;
  second.dead = true;
  g.RebuildUses();
  return true;
}

bool IsToChannelsLast(const std::vector<int32_t>& perm) {
  return perm == std::vector<int32_t>{0, 2, 3, 1};
}
bool IsToChannelsFirst(const std::vector<int32_t>& perm) {
  return perm == std::vector<int32_t>{0, 3, 1, 2};
}

}  // namespace

absl::Status Canonicalize(Compilation& c) {
  Graph& g = c.graph;
  for (Op& op : g.ops) {
    if (!op.dead && FoldConstantOp(g, op)) g.RebuildUses();
  }
  for (Op& op : g.ops) {
    if (!op.dead) FuseActivation(g, op);
  }
  for (Subgraph& sub : g.subgraphs) FuseSubgraphActivations(g, sub);
  g.Compact();
  return VerifyGraph(g);
}

absl::Status InferTensorFormat(Compilation& c) {
  Graph& g = c.graph;
  for (Op& op : g.ops) {
    if (!op.dead) CancelTransposePair(g, op);
  }
  g.Compact();
  for (Op& op : g.ops) {
    if (op.type != OpType::kTranspose) continue;
    const std::vector<int32_t> perm = ReadInts(g.input(op, 1));
    const bool from_input = g.input(op, 0).producer < 0;
    const bool to_output = IsGraphOutput(g, op.outputs[0]);
    if (IsToChannelsLast(perm)) {
      g.tensors[op.inputs[0]].layout = Layout::kNCHW;
      g.tensors[op.outputs[0]].layout = Layout::kNHWC;
    } else if (IsToChannelsFirst(perm)) {
      g.tensors[op.inputs[0]].layout = Layout::kNHWC;
      g.tensors[op.outputs[0]].layout = Layout::kNCHW;
    } else {
      continue;
    }
    if (c.options.format_conversion == FormatConversion::kCpu && (from_input || to_output)) {
      op.unit = Unit::kCpu;
      op.cpu_reason = absl::StrCat(g.Describe(op),
                                   ": format conversion placed on the CPU "
                                   "(--format-conversion cpu)");
    }
  }
  return VerifyGraph(g);
}

}  // namespace boardlab::compiler
