#include "compiler/ir.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {

int DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kBool:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUint32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
      return 8;
    case DataType::kResource:
    case DataType::kOther:
      return 0;
  }
  return 0;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kBool:
      return "bool";
    case DataType::kUint32:
      return "uint32";
    case DataType::kUint64:
      return "uint64";
    case DataType::kResource:
      return "resource";
    case DataType::kOther:
      return "other";
  }
  return "other";
}

bool Quantization::SameAs(const Quantization& other) const {
  if (scale.size() != other.scale.size() || zero_point.size() != other.zero_point.size()) {
    return false;
  }
  for (size_t i = 0; i < scale.size(); ++i) {
    // Converters write shared quantization as the identical float; a relative tolerance absorbs
    // re-serialisation through text formats without accepting genuinely different scales.
    if (std::fabs(scale[i] - other.scale[i]) > 1e-6f * std::max(scale[i], other.scale[i])) {
      return false;
    }
  }
  return zero_point == other.zero_point;
}

int64_t Tensor::NumElements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

int Graph::AddTensor(Tensor tensor) {
  tensors.push_back(std::move(tensor));
  return static_cast<int>(tensors.size()) - 1;
}

void Graph::RebuildUses() {
  for (Tensor& t : tensors) {
    t.producer = -1;
    t.consumers.clear();
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].dead) continue;
    for (int in : ops[i].inputs) {
      if (in != kNoTensor) tensors[in].consumers.push_back(static_cast<int>(i));
    }
    for (int out : ops[i].outputs) tensors[out].producer = static_cast<int>(i);
  }
}

void Graph::Compact() {
  std::vector<Op> live_ops;
  live_ops.reserve(ops.size());
  for (Op& op : ops) {
    if (!op.dead) live_ops.push_back(std::move(op));
  }
  ops = std::move(live_ops);

  std::vector<char> used(tensors.size(), 0);
  for (const Op& op : ops) {
    for (int t : op.inputs) {
      if (t != kNoTensor) used[t] = 1;
    }
    for (int t : op.outputs) used[t] = 1;
  }
  for (int t : inputs) used[t] = 1;
  for (int t : outputs) used[t] = 1;
  // A called subgraph's tensors are all kept: its ops stay as imported.
  for (const Subgraph& sub : subgraphs) {
    for (const Op& op : sub.ops) {
      for (int t : op.inputs) {
        if (t != kNoTensor) used[t] = 1;
      }
      for (int t : op.outputs) used[t] = 1;
    }
    for (int t : sub.inputs) used[t] = 1;
    for (int t : sub.outputs) used[t] = 1;
  }

  std::vector<int> remap(tensors.size(), kNoTensor);
  std::vector<Tensor> kept;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(tensors[i]));
  }
  tensors = std::move(kept);
  auto apply = [&remap](std::vector<int>& indices) {
    for (int& t : indices) {
      if (t != kNoTensor) t = remap[t];
    }
  };
  for (Op& op : ops) {
    apply(op.inputs);
    apply(op.outputs);
  }
  apply(inputs);
  apply(outputs);
  for (Subgraph& sub : subgraphs) {
    for (Op& op : sub.ops) {
      apply(op.inputs);
      apply(op.outputs);
    }
    apply(sub.inputs);
    apply(sub.outputs);
  }
  RebuildUses();
}

std::string Graph::Describe(const Op& op) const {
  return absl::StrCat(OpTypeName(op.type), " #", op.source_index);
}

std::string Graph::Describe(const Op& op, int subgraph_index) const {
  if (subgraph_index <= 0) return Describe(op);
  std::string name = absl::StrCat(Describe(op), " of subgraph ", SourceSubgraph(subgraph_index));
  const int copy = subgraph(subgraph_index).copy;
  if (copy > 0) absl::StrAppend(&name, ", copy ", copy);
  return name;
}

int64_t Graph::Macs(const Op& op) const {
  if (op.outputs.empty()) return 0;  // ASSIGN_VARIABLE, CALL_ONCE
  const Tensor& out = output(op);
  switch (op.type) {
    case OpType::kConv2D: {
      const Tensor& w = input(op, 1);  // OHWI
      return out.NumElements() * w.shape[1] * w.shape[2] * w.shape[3];
    }
    case OpType::kTransposeConv: {
      const Tensor& w = input(op, 1);  // OHWI; every input element meets every tap
      return input(op, 2).NumElements() * w.shape[0] * w.shape[1] * w.shape[2];
    }
    case OpType::kDepthwiseConv2D: {
      const Tensor& w = input(op, 1);  // 1 x H x W x C
      return out.NumElements() * w.shape[1] * w.shape[2];
    }
    case OpType::kFullyConnected: {
      const Tensor& w = input(op, 1);  // [units, depth]
      return out.NumElements() * w.shape.back();
    }
    case OpType::kSvdf: {
      // The feature matmul over the input, then the time matmul over the state's memory.
      const Tensor& feature = input(op, 1);  // [filters, input_size]
      const Tensor& time = input(op, 2);     // [filters, memory]
      return int64_t{input(op, 0).shape[0]} * feature.shape[0] * (feature.shape[1] + time.shape[1]);
    }
    case OpType::kUnidirectionalSequenceLstm: {
      // Per step and batch row: four gates, each an input FC and a recurrent FC.
      const Tensor& in = input(op, 0);  // [time, batch, input] or [batch, time, input]
      const Tensor& w = input(op, 2);   // input-to-forget weights [state, input]
      const int64_t rows = int64_t{in.shape[0]} * in.shape[1];
      return rows * 4 * w.shape[0] * (int64_t{w.shape[1]} + w.shape[0]);
    }
    case OpType::kBatchMatMul: {
      const Tensor& a = input(op, 0);
      const auto& opt = op.opts<BatchMatMulOptions>();
      int32_t depth = opt.adj_x ? a.shape[a.shape.size() - 2] : a.shape.back();
      return out.NumElements() * depth;
    }
    case OpType::kAveragePool2D: {
      const auto& opt = op.opts<PoolOptions>();
      return out.NumElements() * opt.filter_w * opt.filter_h;
    }
    case OpType::kMean:
      return input(op, 0).NumElements();
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
      return out.NumElements();
    default:
      return 0;
  }
}

std::vector<int> EffectPredecessors(const Graph& graph) {
  std::vector<int> effects;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    if (!graph.ops[i].dead && graph.ops[i].effect_order >= 0)
      effects.push_back(static_cast<int>(i));
  }
  std::stable_sort(effects.begin(), effects.end(), [&graph](int a, int b) {
    return graph.ops[a].effect_order < graph.ops[b].effect_order;
  });
  std::vector<int> before(graph.ops.size(), -1);
  for (size_t k = 1; k < effects.size(); ++k) before[effects[k]] = effects[k - 1];
  return before;
}

absl::Status VerifyGraph(const Graph& graph) {
  const int num_tensors = static_cast<int>(graph.tensors.size());
  auto check_index = [num_tensors](int t, bool optional) {
    return (optional && t == kNoTensor) || (t >= 0 && t < num_tensors);
  };
  std::vector<int> writer(graph.tensors.size(), -1);
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.dead) continue;
    for (int t : op.inputs) {
      if (!check_index(t, true)) {
        return absl::InternalError(absl::StrCat("VerifyGraph: ", graph.Describe(op),
                                                " reads tensor ", t, " out of range"));
      }
      if (t == kNoTensor) continue;
      const Tensor& tensor = graph.tensors[t];
      if (!tensor.is_constant && tensor.producer != -1 && tensor.producer >= static_cast<int>(i)) {
        return absl::InternalError(absl::StrCat("VerifyGraph: ", graph.Describe(op), " reads '",
                                                tensor.name, "' before its producer runs"));
      }
      if (std::count(tensor.consumers.begin(), tensor.consumers.end(), static_cast<int>(i)) == 0) {
        return absl::InternalError(absl::StrCat("VerifyGraph: '", tensor.name,
                                                "' does not list reader ", graph.Describe(op)));
      }
    }
    for (int t : op.outputs) {
      if (!check_index(t, false)) {
        return absl::InternalError(absl::StrCat("VerifyGraph: ", graph.Describe(op),
                                                " writes tensor ", t, " out of range"));
      }
      if (writer[t] != -1) {
        return absl::InternalError(
            absl::StrCat("VerifyGraph: '", graph.tensors[t].name, "' has two producers"));
      }
      writer[t] = static_cast<int>(i);
      if (graph.tensors[t].producer != static_cast<int>(i)) {
        return absl::InternalError(absl::StrCat("VerifyGraph: '", graph.tensors[t].name,
                                                "' does not name its producer ",
                                                graph.Describe(op)));
      }
    }
  }
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    for (int c : graph.tensors[t].consumers) {
      if (c < 0 || c >= static_cast<int>(graph.ops.size()) || graph.ops[c].dead) {
        return absl::InternalError(absl::StrCat("VerifyGraph: '", graph.tensors[t].name,
                                                "' lists a consumer that does not exist"));
      }
    }
    if (graph.tensors[t].producer != writer[t]) {
      return absl::InternalError(absl::StrCat("VerifyGraph: '", graph.tensors[t].name,
                                              "' names a producer that does not write it"));
    }
  }
  int last_effect = -1;
  for (const Op& op : graph.ops) {
    if (op.dead || op.effect_order < 0) continue;
    if (op.effect_order <= last_effect) {
      return absl::InternalError(absl::StrCat("VerifyGraph: ", graph.Describe(op),
                                              " runs before a resource-variable access that "
                                              "precedes it in the program"));
    }
    last_effect = op.effect_order;
  }
  for (int t : graph.inputs) {
    if (!check_index(t, false)) return absl::InternalError("VerifyGraph: graph input out of range");
  }
  for (int t : graph.outputs) {
    if (!check_index(t, false)) {
      return absl::InternalError("VerifyGraph: graph output out of range");
    }
  }
  return absl::OkStatus();
}

}  // namespace boardlab::compiler
