#pragma once

// Target specs and board profiles: the facts about a chip and a board that the compiler needs,
// loaded from JSON data files (compiler/targets/*.json) so that a new target or board needs no
// code change.
//
// Usage:
//   absl::StatusOr<TargetSpec> target = LoadTargetSpec("imxrt700");
//   absl::StatusOr<BoardProfile> board = LoadBoardProfile("imxrt700-evk");
//
// A file whose "kind" is "target" describes a chip (clocks, NPU geometry, memory bandwidths and
// NPU operator limits); "board" describes a board built around a target (its SRAM budget for a
// model, its external flash). Names resolve to the files compiled into the library; a path ending
// in ".json" is read from disk instead.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::compiler {

/// Limits of the NPU's operators (shared/reference/neutron-rt700.md section 4). The partitioner's
/// constraint table reads these numbers; the descriptions name them.
struct NpuLimits {
  int32_t num_macs = 8;                  // channel granule: Cin is rounded up to this
  int32_t conv_max_kernel = 4096;        // per axis
  int32_t conv_max_stride = 4096;        // per axis
  int32_t conv_max_dilation = 4096;      // per axis
  int64_t conv_max_kernel_macs = 65535;  // kernel_h * kernel_w * round_up(Cin, num_macs)
  int32_t conv_max_groups = 10;          // groups a grouped convolution is split into
  int32_t pool_max_kernel = 4096;
  int32_t pool_max_stride = 4096;
  int32_t softmax_max_channels = 2040;
  int64_t softmax_max_rows = 4096;        // N*H*W
  int64_t softmax_max_elements = 524288;  // C*N*H*W
  std::vector<int32_t> resize_scales = {1, 2, 4, 8};
  int32_t max_rank = 6;
};

struct TargetSpec {
  std::string name;         // "imxrt700"
  std::string description;  // "NXP i.MX RT700: Cortex-M33 + eIQ Neutron N3-64"
  std::string cpu_name;     // "cortex-m33"
  std::string npu_name;     // "neutron-n3-64"
  int64_t sram_bytes = 0;   // on-chip SRAM of the compute domain
  runtime::timing::TimingParams timing;
  NpuLimits npu;
};

struct BoardProfile {
  std::string name;    // "imxrt700-evk"
  std::string target;  // must name the TargetSpec it is built on
  std::string description;
  /// SRAM the application may give to the model: activation arena plus, when weights live in
  /// SRAM, the weights; with weights in flash, the arena plus the weight scratch window.
  int64_t sram_budget_bytes = 0;
  /// External flash that can hold weights (0 = none).
  int64_t flash_bytes = 0;
};

/// Loads a target spec by name ("imxrt700") or from a JSON file path.
absl::StatusOr<TargetSpec> LoadTargetSpec(std::string_view name_or_path);

/// Loads a board profile by name ("imxrt700-evk") or from a JSON file path.
absl::StatusOr<BoardProfile> LoadBoardProfile(std::string_view name_or_path);

/// Parses JSON text of kind "target" / "board"; `origin` names the source in error messages.
absl::StatusOr<TargetSpec> ParseTargetSpec(std::string_view json_text, std::string_view origin);
absl::StatusOr<BoardProfile> ParseBoardProfile(std::string_view json_text, std::string_view origin);

/// Names of the embedded target specs and board profiles, for --help and error messages.
std::vector<std::string> EmbeddedTargetNames();
std::vector<std::string> EmbeddedBoardNames();

/// The board profile a target uses when none is named (the first embedded board of that target).
absl::StatusOr<BoardProfile> DefaultBoardFor(const TargetSpec& target);

}  // namespace boardlab::compiler
