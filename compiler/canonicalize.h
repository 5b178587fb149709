#pragma once

#include "absl/status/status.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// Canonicalisation rewrites, applied before partitioning (each keeps the numbers bit-exact
/// with running the original ops one after another):
/// - FoldConstantOps: RESHAPE, SQUEEZE and TRANSPOSE of a constant become a constant.
/// - FuseActivations: a RELU/RELU6 whose input comes only from a CONV_2D, DEPTHWISE_CONV_2D,
///   FULLY_CONNECTED, ADD, SUB, MUL, pool or CONCATENATION with the same quantization becomes
///   that op's fused activation (the clamp in the same quantized space is the same numbers).
/// The graph is compacted and verified afterwards.
absl::Status Canonicalize(Compilation& c);

/// Tensor-format pass for channels-first (PyTorch) exports: pairs of TRANSPOSE ops whose
/// permutations cancel are removed, tensors reached through an NCHW->NHWC TRANSPOSE from a graph
/// input are tagged kNCHW, and with `--format-conversion cpu` the remaining format-conversion
/// TRANSPOSEs at the graph edges are placed on the CPU (their `unit` is preset to kCpu with a
/// reason, which the partitioner keeps).
absl::Status InferTensorFormat(Compilation& c);

}  // namespace boardlab::compiler
