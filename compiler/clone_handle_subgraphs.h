#pragma once

// The resource-variable stage's first step (import_resource_variables.cc runs it on the merged
// graph, before it binds handles): a subgraph that IF / WHILE call with handles of different
// variables becomes one subgraph per binding, so that every handle in every subgraph names the
// same variables on every call, as binding when compiling needs.
//
// TFLite Micro passes a handle by value and follows its id at run time: two IFs sharing a branch
// subgraph, each passing another variable's handle, reach a different variable from the same
// READ_VARIABLE. A copy of the branch per binding makes each of those reads name one variable.

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

/// The variable each VAR_HANDLE output tensor names (an index the caller chooses), for every
/// VAR_HANDLE of the graph.
using HandleVariables = std::map<int, int>;

/// At most this many ops in the copies of all subgraphs (a subgraph's first binding keeps the
/// subgraph itself and costs nothing). Bindings multiply through nested calls: a hostile model
/// could ask for billions of copies. Real models need a few.
inline constexpr size_t kMaxCopiedSubgraphOps = size_t{1} << 16;

/// At most this many ops analysed beyond each subgraph's first binding, copied or not: a WHILE's
/// cond and body are analysed with every binding its loop state passes through before the last
/// (the one copied), and a hostile model could make those multiply too. The chain's own limit.
inline constexpr size_t kMaxAnalyzedSubgraphOps = size_t{1} << 20;

/// Rewrites `graph` (merged by MergeSubgraphs, handles not yet resolved):
/// - follows the handles from the main graph down the calls. A call's binding is what each of its
///   operands can name: a VAR_HANDLE's output its variable; an IF's output what either branch
///   returns there; a WHILE's loop state what its inputs and its body's outputs name, grown until
///   it stops changing; any other tensor nothing;
/// - a subgraph keeps its index for the first binding it is called with (in program order, depth
///   first) and gets a copy appended to graph.subgraphs for each other one; the calls go to their
///   binding's subgraph, nested calls in copies likewise. A copy's ops share the original's
///   tensors (its calls never overlap the original's, as every call site's inlined ops share them
///   already), except its resource handles, which are new tensors so that they can name other
///   variables; CALL_ONCE ops are copied as they are (the caller shares their flag);
/// - each copy's Subgraph::copy numbers it among its TFLite subgraph's copies (1, 2, ...), in the
///   order they are made; Subgraph::source stays the TFLite subgraph's.
/// Subgraphs no call reaches from the main graph are left as they are (DropUncalledSubgraphs).
/// Errors: Unimplemented ("unsupported model: ...") when the copies would hold more than
/// kMaxCopiedSubgraphOps ops, or their analysis more than kMaxAnalyzedSubgraphOps; the graph is
/// unchanged then.
absl::Status CloneSubgraphsPerHandleBinding(Graph& graph, const HandleVariables& variables);

}  // namespace boardlab::compiler
