#pragma once

// Serialization stage: writes the compiled program as an ExecuTorch .pte (runtime/schema/
// program.fbs, container per shared/reference/executorch-formats.md section 1) and the debug map
// that joins runtime profiles back to TFLite operators. docs/artifact-format.md specifies what
// boardlab puts into the generic ExecuTorch structures (operator names, argument lists, delegate
// payload).
//
// Usage:
//   absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
//   absl::StatusOr<std::vector<uint8_t>> pte = WritePte(c, *blobs);
//   std::string debug_map = DebugMapJson(c, *blobs);

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compilation.h"
#include "compiler/npu_lowering.h"

namespace boardlab::compiler {

/// BackendDelegate.id of every NPU partition's DelegateCall.
inline constexpr std::string_view kNpuBackendId = "BoardlabNeutronBackend";
/// Operator names of CPU kernel calls: kCpuOperatorPrefix + lowercase TFLite name ("conv_2d"),
/// overload kCpuOperatorOverload.
inline constexpr std::string_view kCpuOperatorPrefix = "boardlab::";
inline constexpr std::string_view kCpuOperatorOverload = "out";
inline constexpr uint64_t kPteSegmentAlignment = 128;
inline constexpr uint64_t kPteConstantAlignment = 16;
inline constexpr uint32_t kPteExtendedHeaderBytes = 32;
/// Planned buffers (AllocationDetails.memory_id, 1-based): the activation arena, the NPU weight
/// scratch window (0 bytes when the weights are in SRAM but a state buffer follows), and the
/// variable state, which nothing but the variable tensors uses.
inline constexpr uint32_t kArenaMemoryId = 1;
inline constexpr uint32_t kWeightScratchMemoryId = 2;
inline constexpr uint32_t kStateMemoryId = 3;

/// One entry of the program's single chain: a CPU op's KernelCall or an NPU partition's
/// DelegateCall.
struct PteInstruction {
  bool is_delegate = false;
  int index = 0;  // graph op index (CPU) or NPU partition (delegate)
};

/// The chain's instruction order: every CPU op and every NPU partition once, dependencies first,
/// otherwise in the graph's execution order (a partition sorts by its first op). Errors:
/// FailedPrecondition for ops without a unit, Internal when partitions form a cycle.
absl::StatusOr<std::vector<PteInstruction>> ScheduleInstructions(const Compilation& c);

/// One instruction of the chain once IF and WHILE are expanded into it (docs/artifact-format.md
/// section "Control flow"). A control-flow op becomes copies between its tensors and those of
/// the subgraphs it calls, the called subgraphs' ops inlined, a condition kernel that turns the
/// bool tensor into the chain's jump flag, and JumpFalseCalls.
enum class ChainStepKind : uint8_t {
  kKernel,     // `op`'s KernelCall
  kDelegate,   // NPU partition `partition`'s DelegateCall
  kCopy,       // boardlab::copy from tensor `from` to tensor `to` (for control-flow op `op`, or
               // READ_VARIABLE / ASSIGN_VARIABLE `op`)
  kCondition,  // boardlab::if / while / call_once: bool tensor `from` -> the jump flag
  kJump,       // JumpFalseCall to `destination`: on the jump flag when `conditional`, else always
};
struct ChainStep {
  ChainStepKind kind = ChainStepKind::kKernel;
  /// kKernel: the op; kCopy, kCondition, kJump: the IF or WHILE they implement.
  const Op* op = nullptr;
  int subgraph = 0;  // the TFLite subgraph `op` belongs to (0 = main)
  int partition = -1;
  int from = kNoTensor;
  int to = kNoTensor;
  bool conditional = false;
  int destination = -1;  // instruction index; == chain length for "past the end"
};

/// The chain: ScheduleInstructions' order with every IF and WHILE expanded (recursively, their
/// called subgraphs' ops inline). Errors: those of ScheduleInstructions.
absl::StatusOr<std::vector<ChainStep>> ExpandChain(const Compilation& c);

/// Operator names of the chain's helper kernels (not TFLite operators).
inline constexpr std::string_view kCopyOperator = "boardlab::copy";

/// Writes the .pte: one ExecutionPlan "forward" with a single chain. `blobs[p]` must be the
/// lowered partition p (LowerNpuPartitions). Activations are memory-planned into buffer 1 at
/// c.memory.tensor_offset; variable tensors into buffer 3 at c.memory.state_offset, with their
/// reset values (zero point or 0) in the mutable-data segment; constants go to segment 0; each
/// distinct delegate blob gets its own 128-aligned segment. Errors: FailedPrecondition when the
/// plan, partitions and blobs disagree (missing arena offset, blob count), Unimplemented for tensor
/// types ExecuTorch cannot express.
absl::StatusOr<std::vector<uint8_t>> WritePte(const Compilation& c,
                                              const std::vector<NpuPartitionBlob>& blobs);

/// {"delegates":[{"instruction","partition","backend","kernels":[{"id","kernel","ops","names"}]}],
///  "cpu_ops":[{"instruction","op","ops","name"}]}; "id" is the NPU kernel's delegate debug id.
/// On an inconsistent compilation returns {"error": "..."}.
std::string DebugMapJson(const Compilation& c, const std::vector<NpuPartitionBlob>& blobs);

/// The "eh00" extended header of a .pte; nullopt when the file has none (no segments).
struct PteExtendedHeader {
  uint32_t length = 0;
  uint64_t program_size = 0;
  uint64_t segment_base_offset = 0;
  uint64_t segment_data_size = 0;
};
std::optional<PteExtendedHeader> ReadPteExtendedHeader(std::span<const uint8_t> pte);

}  // namespace boardlab::compiler
