#pragma once

// The Neutron NPU's operator constraints as data (STYLE.md rule 16). One table of generic
// constraints applies to every op the NPU can run; one table per op type adds that type's rules.
// The partitioner's CPU-placement messages and docs/supported-ops.md are both built from these
// tables, so the documentation cannot drift from the code.
//
// Usage:
//   std::vector<std::string> failures = CheckNpuSupport(graph, op, target.npu);
//   if (failures.empty()) { /* the op may run on the NPU */ }
//   else op.cpu_reason = failures[0];  // "CONV_2D #12: <description> — <detail>"
//
// The rules follow the current (SDK >= 3.1.2) Neutron-C flow as ExecuTorch's NXP backend encodes
// it: shared/reference/neutron-rt700.md sections 4 and 4.1, quantization rules from
// shared/reference/tflite-int8.md section 8. Context rules that depend on the partition an op
// lands in (no-op-only partitions, a lone MEAN) live in the partitioner.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir.h"
#include "compiler/target_spec.h"

namespace boardlab::compiler {

struct ConstraintResult {
  bool ok = true;
  /// The numbers behind a failure, e.g. "kernel_h*kernel_w*ceil8(Cin)=73728 > 65535"; empty
  /// when `ok`.
  std::string detail;
};

struct NpuConstraint {
  std::string_view id;           // stable identifier, e.g. "conv_kernel_macs"
  std::string_view description;  // what must hold, for people and the generated docs
  /// Checks `op` of `graph` against `limits`. The op's operands have been validated by the
  /// importer (ValidateOpOperands), so shapes may be indexed.
  ConstraintResult (*check)(const Graph& graph, const Op& op, const NpuLimits& limits);
};

/// Constraints every op must meet to run on the NPU (int8 per-tensor activations, rank, ...).
/// They apply to the op types for which NpuSupportsOpType() is true.
const std::vector<NpuConstraint>& GenericNpuConstraints();

/// The rules specific to `type`. For an op type the NPU never runs, this is one constraint that
/// always fails and says why.
const std::vector<NpuConstraint>& ConstraintsFor(OpType type);

/// The entry of an op type that has no NPU rules: it always fails ("not supported by the Neutron
/// NPU"), so that a newly added op type stays on the CPU until someone writes its rules.
const NpuConstraint& NpuNotSupportedConstraint();

/// The entry of an op type that the Neutron-C flow runs but boardlab does not lower to the NPU
/// (ABS, reductions, MIRROR_PAD, SPLIT): it always fails and says so.
const NpuConstraint& NpuNotLoweredConstraint();

/// False for op types the Neutron NPU cannot run at all (QUANTIZE, DEQUANTIZE, ...).
bool NpuSupportsOpType(OpType type);

/// Every failed constraint of `op`, generic ones first, as "CONV_2D #12: <description> —
/// <detail>". Empty when the op may run on the NPU.
std::vector<std::string> CheckNpuSupport(const Graph& graph, const Op& op, const NpuLimits& limits);

/// Groups of a CONV_2D: input channels / the weights' input depth (1 for an ordinary
/// convolution and for every other op type).
int32_t ConvGroups(const Graph& graph, const Op& op);

/// A DEPTHWISE_CONV_2D over a one-channel input with depth_multiplier M > 1: every output
/// channel reads the same input channel, so it is an ordinary convolution with M output channels
/// and the NPU lowering emits it as one (weights [1,H,W,M] become OHWI [M,H,W,1]).
bool IsSingleChannelDepthwise(const Graph& graph, const Op& op);

/// The values of a constant integer tensor (int8, uint8, int32 or int64, little-endian data);
/// nullopt when the tensor is not constant, has another type or its data size is wrong.
std::optional<std::vector<int64_t>> ConstantIntegers(const Tensor& tensor);

}  // namespace boardlab::compiler
