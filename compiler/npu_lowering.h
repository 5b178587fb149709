#pragma once

// NPU lowering: turns each NPU partition of a partitioned, memory-planned graph into the
// delegate payload the runtime's NPU engine executes (runtime/schema/npu_payload.fbs, byte
// layout in docs/artifact-format.md).
//
// Usage:
//   absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(compilation);
//   // blobs->at(p).bytes is the processed data of the DelegateCall for partition p.
//
// One live op becomes one NPU kernel (fusions were done by earlier passes; an op that fused
// several TFLite operators lists them all in the debug map). Weights are reordered into the
// NPU's blocked layout and requantization parameters are precomputed, so the runtime does no
// per-model setup arithmetic beyond what docs/artifact-format.md lists.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// The delegate blob header: magic, version, flatbuffer size, weight section size (uint32 LE).
inline constexpr std::string_view kNpuPayloadMagic = "BLNP";
inline constexpr uint32_t kNpuPayloadVersion = 1;
inline constexpr size_t kNpuPayloadHeaderBytes = 16;
/// Alignment of the flatbuffer and weight sections and of each kernel's constants.
inline constexpr size_t kNpuPayloadAlignment = 16;
/// Output channels the N3-64 computes in parallel (its pipes); the input-channel granule is the
/// target's NpuLimits::num_macs.
inline constexpr int kNpuPipes = 8;

/// Which TFLite operators one NPU kernel came from.
struct NpuDebugEntry {
  int kernel = 0;               // index in the partition's NpuProgram.kernels
  int debug_id = 0;             // program-unique delegate debug id (ETDump delegate_debug_id_int)
  std::vector<int> source_ops;  // TFLite operator indices, sorted
  std::vector<std::string> names;  // the kernel's output tensor names (TFLite layer names)
  std::string name;                // the IR op it was lowered from: "CONV_2D #0"
  int64_t macs = 0;                // multiply-accumulates of that op (Graph::Macs)
};

struct NpuPartitionBlob {
  int partition = 0;
  std::vector<uint8_t> bytes;  // the whole delegate blob (header + flatbuffer + weights)
  int64_t weight_bytes = 0;    // size of the weight section
  /// Bytes of one weight scratch slot: the largest single kernel's constants, rounded up to 16.
  /// With c.memory.weights_in_flash the scratch window (NpuProgram.sram_weight_scratch_size) is
  /// twice this.
  int64_t largest_kernel_weight_bytes = 0;
  /// SRAM weight scratch this payload's command stream uses (NpuProgram.sram_weight_scratch_size):
  /// 0 with weights in SRAM, else one or two slots. Two unless c.memory.weight_scratch_bytes was
  /// non-zero and smaller than two slots.
  int64_t weight_scratch_bytes = 0;
  /// Graph tensor indices of the partition inputs and outputs = the delegate arguments, in
  /// order (inputs first).
  std::vector<int> input_tensors;
  std::vector<int> output_tensors;
  std::vector<NpuDebugEntry> debug;
};

/// Lowers every NPU partition 0..c.num_partitions-1. Needs c.graph partitioned (op.unit and
/// op.partition) and c.memory.tensor_offset for intermediates. With c.memory.weights_in_flash
/// the command stream prefetches each kernel's constants into a double-buffered SRAM scratch.
///
/// Errors: FailedPrecondition when the graph is not partitioned or planned consistently
/// (empty partition, intermediate without arena offset, missing quantization); Unimplemented
/// for operand variants the NPU payload cannot express (non-int8 weights, non-zero weight zero
/// points).
absl::StatusOr<std::vector<NpuPartitionBlob>> LowerNpuPartitions(const Compilation& c);

/// The sections of a delegate blob, after checking the header. Views point into `blob`.
struct NpuPayloadView {
  uint32_t version = 0;
  std::span<const uint8_t> flatbuffer;
  std::span<const uint8_t> weights;
};
absl::StatusOr<NpuPayloadView> ParseNpuPayload(std::span<const uint8_t> blob);

/// Conv weights OHWI -> [ceil(O/bo)][kH][kW][ceil(I/bi)][bo][bi], zero-padded. FC weights [O][I]
/// use it with kH = kW = 1.
std::vector<int8_t> ReorderConvWeights(std::span<const int8_t> ohwi, int out_channels, int kernel_h,
                                       int kernel_w, int in_channels, int block_out, int block_in);

/// Depthwise weights [1][kH][kW][C] -> [kH][kW][ceil(C/block)*block], zero-padded.
std::vector<int8_t> ReorderDepthwiseWeights(std::span<const int8_t> hwc, int kernel_h, int kernel_w,
                                            int channels, int block);

}  // namespace boardlab::compiler
