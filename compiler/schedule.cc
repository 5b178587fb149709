#include "compiler/schedule.h"

#include <functional>
#include <queue>
#include <set>
#include <vector>

namespace boardlab::compiler {
namespace {

// Node of the schedule: partition p is node p; CPU op i is node num_partitions + i.
int NodeOf(const Compilation& c, int op) {
  const Op& o = c.graph.ops[op];
  return o.unit == Unit::kNpu && o.partition >= 0 ? o.partition : c.num_partitions + op;
}

}  // namespace

absl::Status ScheduleOps(Compilation& c) {
  Graph& g = c.graph;
  const int num_ops = static_cast<int>(g.ops.size());
  const int num_nodes = c.num_partitions + num_ops;
  std::vector<std::vector<int>> members(num_nodes);
  for (int i = 0; i < num_ops; ++i) members[NodeOf(c, i)].push_back(i);

  std::vector<std::set<int>> successors(num_nodes);
  std::vector<int> pending(num_nodes, 0);
  const std::vector<int> effect_before = EffectPredecessors(g);
  for (int i = 0; i < num_ops; ++i) {
    const int to = NodeOf(c, i);
    auto depend_on = [&](int op) {
      const int from = NodeOf(c, op);
      if (from != to && successors[from].insert(to).second) ++pending[to];
    };
    for (int t : g.ops[i].inputs) {
      if (t != kNoTensor && g.tensors[t].producer >= 0) depend_on(g.tensors[t].producer);
    }
    if (effect_before[i] >= 0) depend_on(effect_before[i]);
  }

  // Ready nodes by the source position of their first op.
  using Entry = std::pair<int, int>;  // (first op index, node)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (int n = 0; n < num_nodes; ++n) {
    if (!members[n].empty() && pending[n] == 0) ready.push({members[n].front(), n});
  }
  std::vector<int> order;
  order.reserve(num_ops);
  while (!ready.empty()) {
    const int node = ready.top().second;
    ready.pop();
    order.insert(order.end(), members[node].begin(), members[node].end());
    for (int next : successors[node]) {
      if (--pending[next] == 0) ready.push({members[next].front(), next});
    }
  }
  if (static_cast<int>(order.size()) != num_ops) {
    return absl::InternalError("ScheduleOps: NPU partitions depend on each other in a cycle");
  }
  std::vector<Op> scheduled;
  scheduled.reserve(num_ops);
  for (int i : order) scheduled.push_back(std::move(g.ops[i]));
  g.ops = std::move(scheduled);
  g.RebuildUses();
  return VerifyGraph(g);
}

}  // namespace boardlab::compiler
