#pragma once

// The importer's control-flow stage (compiler/import_tflite.cc calls it): checks the subgraphs
// that IF and WHILE call, then merges every subgraph into one Graph (called subgraphs become
// Graph::subgraphs, their tensors appended to Graph::tensors).

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

/// `status` with "subgraph K: " after its "invalid model: " / "unsupported model: " prefix, so
/// that a message about a called subgraph's tensor or operator says whose.
absl::Status PrefixSubgraph(const absl::Status& status, int subgraph);

/// Checks what TFLite Micro's IF and WHILE kernels require of the subgraphs they call, each
/// imported on its own (`subgraphs[k]` is TFLite subgraph k, tensor indices local to it):
/// subgraph indices in range and not the main graph; no subgraph calling itself, directly or
/// through others; IF's condition a bool tensor of one element; IF's other inputs and outputs
/// matching both branches' inputs and outputs in count, type and shape; WHILE's inputs, outputs,
/// its body's inputs and outputs and its cond's inputs all alike, the cond yielding one bool.
/// Errors: InvalidArgument naming the op ("IF #2 of subgraph 1: ...") and what differs.
absl::Status CheckControlFlow(const std::vector<Graph>& subgraphs);

/// Empties the ops of every subgraph that no IF, WHILE or CALL_ONCE reaches from the main graph
/// (its inputs and outputs stay). TFLite Micro prepares such a subgraph like any other (so the
/// importer checks it, and import_resource_variables.cc allocates variables in prepare order
/// before this runs) but never invokes it: nothing of it runs, so nothing of it is compiled.
void DropUncalledSubgraphs(Graph& graph);

/// One Graph: subgraph 0's ops as the main graph, subgraph k's ops and tensor lists as
/// Graph::subgraphs[k - 1], every tensor renumbered into Graph::tensors.
Graph MergeSubgraphs(std::vector<Graph> subgraphs);

}  // namespace boardlab::compiler
