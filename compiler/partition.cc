#include "compiler/partition.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/npu_constraints.h"

namespace boardlab::compiler {
namespace {

bool IsLive(const Op& op) { return !op.dead && op.unit != Unit::kRemoved; }

// Why `op` must stay on the CPU; empty when it may run on the NPU. Forced placements come first
// so that the message names the option the user passed rather than a constraint.
std::string CpuReason(const Compilation& c, const Op& op) {
  const std::string name = c.graph.Describe(op);
  if (c.options.cpu_only) return absl::StrCat(name, ": --cpu-only");
  // An earlier pass (tensor format, --format-conversion cpu) may have placed the op already.
  if (op.unit == Unit::kCpu && !op.cpu_reason.empty()) return op.cpu_reason;
  const std::vector<OpType>& no_npu = c.options.no_npu;
  if (std::find(no_npu.begin(), no_npu.end(), op.type) != no_npu.end()) {
    return absl::StrCat(name, ": --no-npu ", std::string(OpTypeName(op.type)));
  }
  std::vector<std::string> failures = CheckNpuSupport(c.graph, op, c.target.npu);
  return failures.empty() ? std::string() : std::move(failures.front());
}

void PlaceOps(Compilation& c) {
  for (Op& op : c.graph.ops) {
    if (!IsLive(op)) continue;
    op.partition = -1;
    op.cpu_reason = CpuReason(c, op);
    op.unit = op.cpu_reason.empty() ? Unit::kNpu : Unit::kCpu;
  }
  // What a subgraph runs depends on a condition only known at run time, between the NPU's
  // fixed command streams: every op of a called subgraph runs on the CPU.
  for (size_t k = 0; k < c.graph.subgraphs.size(); ++k) {
    for (Op& op : c.graph.subgraphs[k].ops) {
      op.partition = -1;
      op.unit = Unit::kCpu;
      op.cpu_reason = absl::StrCat(c.graph.Describe(op, static_cast<int>(k) + 1),
                                   ": in a subgraph that IF, WHILE or CALL_ONCE calls; those run "
                                   "on the Cortex-M33");
    }
  }
}

// Groups NPU ops into convex partitions (the rule is in partition.h). Partition ids are merged
// with a union-find; dependency sets hold raw ids and are read through Find().
class Grouper {
 public:
  explicit Grouper(const Graph& graph)
      : graph_(graph),
        effect_before_(EffectPredecessors(graph)),
        part_(graph.ops.size(), -1),
        deps_(graph.ops.size()) {}

  // Partition id per op (canonical, not yet renumbered); -1 for CPU and dead ops.
  std::vector<int> Run() {
    for (size_t i = 0; i < graph_.ops.size(); ++i) {
      const Op& op = graph_.ops[i];
      if (!IsLive(op)) continue;
      deps_[i] = Upstream(op);
      if (op.unit == Unit::kNpu) Assign(static_cast<int>(i));
    }
    std::vector<int> result(part_.size(), -1);
    for (size_t i = 0; i < part_.size(); ++i) {
      if (part_[i] >= 0) result[i] = Find(part_[i]);
    }
    return result;
  }

 private:
  int Find(int p) {
    while (parent_[p] != p) p = parent_[p] = parent_[parent_[p]];
    return p;
  }

  // Live ops that write an input of `op`, and the resource-variable access `op` must follow
  // (Op::effect_order): an order without a tensor, which a partition must not break either.
  std::vector<int> Producers(const Op& op) const {
    std::vector<int> producers;
    for (int t : op.inputs) {
      if (t == kNoTensor) continue;
      const int p = graph_.tensors[t].producer;
      if (p >= 0 && IsLive(graph_.ops[p])) producers.push_back(p);
    }
    const int before = effect_before_[static_cast<size_t>(&op - graph_.ops.data())];
    if (before >= 0) producers.push_back(before);
    return producers;
  }

  // Raw ids of every partition with a path into `op`.
  std::set<int> Upstream(const Op& op) const {
    std::set<int> up;
    for (int p : Producers(op)) {
      up.insert(deps_[p].begin(), deps_[p].end());
      if (part_[p] >= 0) up.insert(part_[p]);
    }
    return up;
  }

  bool Contains(const std::set<int>& raw_ids, int canonical) {
    return std::any_of(raw_ids.begin(), raw_ids.end(),
                       [&](int id) { return Find(id) == canonical; });
  }

  bool InJoined(int op, const std::vector<int>& joined) {
    return part_[op] >= 0 &&
           std::find(joined.begin(), joined.end(), Find(part_[op])) != joined.end();
  }

  // Whether `op` may join partition `p` together with the partitions already in `joined`.
  bool CanJoin(int op, std::vector<int> joined, int p) {
    for (int j : joined) {
      if (Contains(part_deps_[j], p) || Contains(part_deps_[p], j)) return false;
    }
    joined.push_back(p);
    for (int producer : Producers(graph_.ops[op])) {
      // A producer outside the merged set that depends on `p` means p -> producer -> op.
      if (!InJoined(producer, joined) && Contains(deps_[producer], p)) return false;
    }
    return true;
  }

  void Assign(int op) {
    std::vector<int> candidates;
    for (int producer : Producers(graph_.ops[op])) {
      if (part_[producer] >= 0) candidates.push_back(Find(part_[producer]));
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<int> joined;
    for (int p : candidates) {
      if (CanJoin(op, joined, p)) joined.push_back(p);
    }
    int root = joined.empty() ? NewPartition() : joined.front();
    for (int j : joined) {
      if (j == root) continue;
      parent_[j] = root;
      part_deps_[root].insert(part_deps_[j].begin(), part_deps_[j].end());
    }
    part_[op] = root;
    part_deps_[root].insert(deps_[op].begin(), deps_[op].end());
  }

  int NewPartition() {
    parent_.push_back(static_cast<int>(parent_.size()));
    part_deps_.emplace_back();
    return parent_.back();
  }

  const Graph& graph_;
  std::vector<int> effect_before_;        // EffectPredecessors
  std::vector<int> part_;                 // raw partition id per op
  std::vector<std::set<int>> deps_;       // per op: raw ids of partitions upstream of it
  std::vector<int> parent_;               // union-find over partition ids
  std::vector<std::set<int>> part_deps_;  // per root: partitions upstream of any member
};

// Whether a MEAN alone in its partition reduces only axes of size 1 with keep_dims: the NPU
// flow rejects such a partition (it would compute nothing).
bool IsLoneMeanNoOp(const Graph& graph, const Op& op) {
  if (op.type != OpType::kMean || !op.opts<ReducerOptions>().keep_dims) return false;
  const std::vector<int32_t>& shape = graph.input(op, 0).shape;
  std::optional<std::vector<int64_t>> axes = ConstantIntegers(graph.input(op, 1));
  if (!axes) return false;
  const int64_t rank = static_cast<int64_t>(shape.size());
  return std::all_of(axes->begin(), axes->end(), [&](int64_t axis) {
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank && shape[axis] == 1;
  });
}

// Sends the ops of partitions the NPU flow would reject back to the CPU; true if any moved.
bool RejectInvalidPartitions(Graph& graph, const std::vector<int>& part) {
  std::map<int, std::vector<int>> members;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] >= 0) members[part[i]].push_back(static_cast<int>(i));
  }
  bool changed = false;
  for (const auto& [id, ops] : members) {
    std::string why;
    if (std::all_of(ops.begin(), ops.end(),
                    [&](int i) { return IsNpuNoOp(graph, graph.ops[i]); })) {
      why = "partition of no-ops only: the NPU would receive an empty graph";
    } else if (ops.size() == 1 && IsLoneMeanNoOp(graph, graph.ops[ops[0]])) {
      why =
          "MEAN alone in a partition with keep_dims over size-1 axes only: the NPU would "
          "receive an empty graph";
    } else {
      continue;
    }
    for (int i : ops) {
      graph.ops[i].unit = Unit::kCpu;
      graph.ops[i].cpu_reason = absl::StrCat(graph.Describe(graph.ops[i]), ": ", why);
    }
    changed = true;
  }
  return changed;
}

// Numbers partitions 0..n-1 in the execution order of their first op; returns n.
int NumberPartitions(Graph& graph, const std::vector<int>& part) {
  std::map<int, int> number;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] < 0) continue;
    auto [it, inserted] = number.emplace(part[i], static_cast<int>(number.size()));
    graph.ops[i].partition = it->second;
  }
  return static_cast<int>(number.size());
}

bool IsIdentity(const std::optional<std::vector<int64_t>>& perm) {
  if (!perm) return false;
  for (size_t i = 0; i < perm->size(); ++i) {
    if ((*perm)[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool AllZero(const std::optional<std::vector<int64_t>>& values) {
  return values && std::all_of(values->begin(), values->end(), [](int64_t v) { return v == 0; });
}

// RELU / RELU6 whose clamp does not survive quantization (the clamp bounds fall outside int8 in
// the output's quantization, with the same quantization in and out): the op copies its input.
bool IsIdentityClamp(const Graph& graph, const Op& op) {
  const Tensor& in = graph.input(op, 0);
  const Tensor& out = graph.output(op);
  if (in.quant.empty() || !in.quant.SameAs(out.quant)) return false;
  const int64_t zero = out.quant.zp();
  if (zero > -128) return false;  // quantize(0) clips something
  if (op.type == OpType::kRelu) return true;
  const int64_t six = zero + static_cast<int64_t>(std::round(6.0 / out.quant.scale[0]));
  return six >= 127;
}

}  // namespace

bool IsNpuNoOp(const Graph& graph, const Op& op) {
  switch (op.type) {
    case OpType::kReshape:
    case OpType::kSqueeze:
    case OpType::kExpandDims:
      return true;
    case OpType::kTranspose:
      return IsIdentity(ConstantIntegers(graph.input(op, 1)));
    case OpType::kPad:
    case OpType::kPadV2:
      return AllZero(ConstantIntegers(graph.input(op, 1)));
    case OpType::kConcatenation:
      return std::count_if(op.inputs.begin(), op.inputs.end(),
                           [](int t) { return t != kNoTensor; }) == 1;
    case OpType::kSlice:
    case OpType::kResizeNearestNeighbor:
      return graph.input(op, 0).shape == graph.output(op).shape;
    case OpType::kRelu:
    case OpType::kRelu6:
      return IsIdentityClamp(graph, op);
    default:
      return false;
  }
}

absl::Status RunPartitioner(Compilation& c) {
  Graph& graph = c.graph;
  PlaceOps(c);
  std::vector<int> part;
  do {
    part = Grouper(graph).Run();
  } while (RejectInvalidPartitions(graph, part));
  c.num_partitions = NumberPartitions(graph, part);
  return VerifyGraph(graph);
}

}  // namespace boardlab::compiler
