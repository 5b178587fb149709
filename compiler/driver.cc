#include "compiler/driver.h"

#include <chrono>
#include <functional>

#include "absl/strings/str_cat.h"
#include "compiler/canonicalize.h"
#include "compiler/cost_model.h"
#include "compiler/import_tflite.h"
#include "compiler/npu_lowering.h"
#include "compiler/partition.h"
#include "compiler/plan_memory.h"
#include "compiler/pte_writer.h"
#include "compiler/report.h"
#include "compiler/schedule.h"
#include "compiler/split_group_conv.h"

namespace boardlab::compiler {
namespace {

class StageRunner {
 public:
  explicit StageRunner(std::vector<StageTiming>& timings) : timings_(timings) {}

  absl::Status Run(const char* stage, const std::function<absl::Status()>& body) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = body();
    const auto end = std::chrono::steady_clock::now();
    timings_.push_back({stage, std::chrono::duration<double, std::milli>(end - start).count()});
    return status;
  }

 private:
  std::vector<StageTiming>& timings_;
};

absl::Status LoadTarget(Compilation& c) {
  absl::StatusOr<TargetSpec> target = LoadTargetSpec(c.options.target);
  if (!target.ok()) return target.status();
  c.target = *std::move(target);
  absl::StatusOr<BoardProfile> board =
      c.options.board.empty() ? DefaultBoardFor(c.target) : LoadBoardProfile(c.options.board);
  if (!board.ok()) return board.status();
  if (board->target != c.target.name) {
    return absl::InvalidArgumentError(absl::StrCat("board '", board->name, "' is built on target '",
                                                   board->target, "', not '", c.target.name, "'"));
  }
  c.board = *std::move(board);
  return absl::OkStatus();
}

int64_t CpuConstantBytes(const Compilation& c) {
  int64_t bytes = 0;
  for (const Tensor& t : c.graph.tensors) {
    if (!t.is_constant || t.consumers.empty()) continue;
    bool used_by_cpu = false;
    for (int consumer : t.consumers) used_by_cpu |= c.graph.ops[consumer].unit == Unit::kCpu;
    if (used_by_cpu) bytes += t.SizeBytes();
  }
  return bytes;
}

// Lowering depends on whether weights are prefetched from flash and on the scratch window (one or
// two slots), and the placement depends on the lowered weight sizes: lower, place, and lower
// again until the placement stops changing (it settles by the second round: the lowered sizes do
// not depend on the placement).
absl::StatusOr<std::vector<NpuPartitionBlob>> LowerAndPlaceWeights(Compilation& c) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const bool assumed_flash = c.memory.weights_in_flash;
    const int64_t assumed_scratch = c.memory.weight_scratch_bytes;
    absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
    if (!blobs.ok()) return blobs.status();
    int64_t weights = CpuConstantBytes(c);
    int64_t largest = 0;
    for (const NpuPartitionBlob& blob : *blobs) {
      weights += blob.weight_bytes;
      largest = std::max(largest, blob.largest_kernel_weight_bytes);
    }
    if (absl::Status s = PlaceWeights(c, weights, largest); !s.ok()) return s;
    if (c.memory.weights_in_flash == assumed_flash &&
        c.memory.weight_scratch_bytes == assumed_scratch) {
      return blobs;
    }
  }
  return absl::InternalError("weight placement did not settle");
}

}  // namespace

std::string CompilerVersion() { return BOARDLAB_COMPILER_VERSION; }

absl::StatusOr<CompileResult> Compile(std::span<const uint8_t> model,
                                      const CompileOptions& options) {
  CompileResult result;
  Compilation& c = result.compilation;
  c.options = options;
  StageRunner stages(result.timings);
  std::vector<NpuPartitionBlob> blobs;

  auto import = [&]() -> absl::Status {
    absl::StatusOr<Graph> graph = ImportTflite(model, &c.warnings);
    if (!graph.ok()) return graph.status();
    c.graph = *std::move(graph);
    return absl::OkStatus();
  };
  auto lower = [&]() -> absl::Status {
    absl::StatusOr<std::vector<NpuPartitionBlob>> lowered = LowerAndPlaceWeights(c);
    if (!lowered.ok()) return lowered.status();
    blobs = *std::move(lowered);
    return absl::OkStatus();
  };
  auto serialize = [&]() -> absl::Status {
    absl::StatusOr<std::vector<uint8_t>> pte = WritePte(c, blobs);
    if (!pte.ok()) return pte.status();
    result.pte = *std::move(pte);
    result.debug_map_json = DebugMapJson(c, blobs);
    return absl::OkStatus();
  };

  const std::pair<const char*, std::function<absl::Status()>> pipeline[] = {
      {"target", [&] { return LoadTarget(c); }},
      {"import", import},
      {"canonicalize", [&] { return Canonicalize(c); }},
      {"tensor-format", [&] { return InferTensorFormat(c); }},
      {"split-groups", [&] { return SplitGroupConvolutions(c); }},
      {"partition", [&] { return RunPartitioner(c); }},
      {"schedule", [&] { return ScheduleOps(c); }},
      {"plan-memory", [&] { return PlanMemory(c); }},
      {"lower-npu", lower},
      {"cost-model", [&] { return EstimateCost(c); }},
      {"serialize", serialize},
  };
  for (const auto& [name, body] : pipeline) {
    if (absl::Status s = stages.Run(name, body); !s.ok()) return s;
  }
  result.report_json = ReportJson(result);
  return result;
}

}  // namespace boardlab::compiler
