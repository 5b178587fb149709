#pragma once

// Cost-model stage: estimated cycles and microseconds of every op, from the RT700 timing model
// (runtime/timing/timing_model.h) that the simulator board also uses, so the compile report and
// the simulated profile agree. docs/cost-model.md explains the model and its calibration.
//
// Usage:
//   RETURN_IF_ERROR(EstimateCost(c));   // after partitioning and memory planning
//   for (size_t i = 0; i < c.op_costs.size(); ++i) ... c.op_costs[i].microseconds ...

#include "absl/status/status.h"
#include "compiler/compilation.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::compiler {

/// The NPU kernel shape of `op` (an op the partitioner placed on the NPU). Rank-4 NHWC outputs map
/// to rows N*H, columns W, channels C; other ranks to rows = all but the last dimension.
runtime::timing::NpuKernelShape NpuShapeFor(const Graph& graph, const Op& op,
                                            bool weights_in_flash);

/// The Cortex-M33 kernel shape of `op` (an op that runs on the CPU).
runtime::timing::CpuKernelShape CpuShapeFor(const Graph& graph, const Op& op);

/// Fills c.op_costs (one entry per op; dead and removed ops cost 0) and c.total_microseconds
/// with c.target.timing, and c.subgraph_op_costs with one run of each op of each called
/// subgraph (not in the total: IF picks a branch and WHILE loops at run time). NPU ops use
/// c.memory.weights_in_flash. FailedPrecondition when an op has no unit yet (the partitioner has
/// not run).
absl::Status EstimateCost(Compilation& c);

}  // namespace boardlab::compiler
