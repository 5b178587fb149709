#pragma once

#include "absl/status/status.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// Orders the ops for execution so that every NPU partition is one contiguous run (it becomes one
/// delegate call) while each op still runs after its producers. Partitions and CPU ops are nodes
/// of a dependency graph, sorted topologically; among ready nodes the one holding the earliest
/// op of the source order goes first, so a model that needs no reordering keeps its order.
/// Errors: Internal when the partitions depend on each other in a cycle (a partitioner bug).
absl::Status ScheduleOps(Compilation& c);

}  // namespace boardlab::compiler
