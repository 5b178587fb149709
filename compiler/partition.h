#pragma once

// The partitioner: decides for every op whether it runs on the Neutron NPU or the Cortex-M33, and
// groups the NPU ops into NPU graphs (partitions), each of which becomes one delegate call.
//
// Usage:
//   absl::Status status = RunPartitioner(compilation);  // after canonicalisation
//   for (const Op& op : compilation.graph.ops) { op.unit, op.partition, op.cpu_reason }
//
// Algorithm (a port of ExecuTorch's NXP partitioner, shared/reference/neutron-rt700.md section 6):
// 1. Placement. Every live op is checked against the target's constraint tables
//    (npu_constraints.h) unless the options force it onto the CPU (--cpu-only, --no-npu).
// 2. Grouping. NPU ops are visited in execution order. An op joins the partitions of the NPU ops
//    whose outputs it reads directly (merging them) unless that would create a cycle: it does not
//    join a partition P when one of its inputs comes from an op outside P that itself depends on
//    P (P -> CPU op -> this op), and it never merges two partitions of which one depends on the
//    other. Otherwise it starts a new partition. So every partition is convex: no path leaves it
//    and re-enters it, the graph of partitions and CPU ops is acyclic, and a topological order of
//    it runs each partition as one contiguous delegate call. (The ops of a partition need not be
//    adjacent in the current op order; the scheduler may have to group them.)
// 3. Validation. A partition whose ops are all no-ops (RESHAPE, SQUEEZE, identity TRANSPOSE /
//    PAD / SLICE / RESIZE, single-input CONCATENATION) would give the NPU an empty graph, and a
//    MEAN alone in a partition that reduces only size-1 axes with keep_dims is rejected by the NPU
//    flow; their ops go back to the CPU and grouping reruns until nothing changes (a fixed point;
//    every round moves at least one op, so it ends).
// 4. Partitions are numbered 0..n-1 in the execution order of their first op.

#include "absl/status/status.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// Sets `unit`, `cpu_reason` and `partition` of every live op of `c.graph` (ops already marked
/// Unit::kRemoved are left alone) and `c.num_partitions`. NPU limits come from `c.target.npu`,
/// forced placements from `c.options`. An unsupported op is a placement, not an error: the
/// status is an error only when the graph fails VerifyGraph afterwards.
absl::Status RunPartitioner(Compilation& c);

/// True when `op` computes nothing on the NPU (its output equals its input), such as RESHAPE or
/// an identity TRANSPOSE. A partition of such ops only is not delegated.
bool IsNpuNoOp(const Graph& graph, const Op& op);

}  // namespace boardlab::compiler
