#pragma once

// The importer's resource-variable stage (compiler/import_tflite.cc calls it after merging the
// subgraphs): resolves every VAR_HANDLE when compiling, so that a resource variable becomes a
// variable tensor of the state buffer and READ_VARIABLE / ASSIGN_VARIABLE copies from and into
// it (docs/compiler.md, "Resource variables").

#include "absl/status/status.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

/// Rewrites `graph` (merged by MergeSubgraphs) so that no resource handle is left:
/// - each distinct variable (VAR_HANDLEs with the same shared_name, in any subgraph; a handle
///   without a container matches any container) becomes one variable tensor with the type,
///   shape and quantization of its first ASSIGN_VARIABLE in TFLite Micro's prepare order
///   (subgraph 0 first, then 1, 2, ..., each in operator order) whose handle is a VAR_HANDLE's
///   output, reset at load to that assignment's zero point as one int8 byte, 0 without
///   quantization (TFLite Micro's MicroResourceVariables::Allocate);
/// - a handle passed into or out of IF / WHILE (TFLite Micro copies the id like any value)
///   names the variables that reach it along those copies; a subgraph called with different
///   variables' handles is first copied per binding (CloneSubgraphsPerHandleBinding), then the
///   subgraphs nothing calls are emptied (DropUncalledSubgraphs: TFLite Micro prepares them, so
///   they still count for the allocation above, but never runs them; in a model without
///   resource variables or CALL_ONCE they are emptied all the same); READ_VARIABLE's and
///   ASSIGN_VARIABLE's input 0
///   becomes the variable tensor; the VAR_HANDLEs, and the handles in IF / WHILE operands and
///   their subgraphs' inputs and outputs, are removed;
/// - each CALL_ONCE gets inputs {its "not run yet" flag (a bool variable reset to 1, one per
///   CALL_ONCE of the model, shared by the copies of its subgraph), a constant false} that the
///   lowering reads and writes;
/// - main-graph ops with side effects on variables get Op::effect_order.
/// Errors: Unimplemented ("unsupported model: ...") when a handle cannot be bound to one
/// variable when compiling (a main-graph input or output; a handle that names no variable, or
/// several depending on the path taken at run time: IF branches returning different variables'
/// handles, a loop replacing its handle; a handle given to another op; copies beyond
/// kMaxCopiedSubgraphOps or their analysis beyond kMaxAnalyzedSubgraphOps); InvalidArgument
/// ("invalid model: ...") for what TFLite Micro cannot run either: an assignment of another
/// type or byte count than the first one, a read into a tensor of another type or byte count, a
/// read of a variable that nothing assigns, a variable assigned only through handles passed in
/// by IF / WHILE (these checks skip the subgraphs nothing calls, which TFLite Micro never runs).
absl::Status ResolveResourceVariables(Graph& graph);

}  // namespace boardlab::compiler
