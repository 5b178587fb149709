// The whole pipeline on the real models of ../shared/models.

#include "compiler/driver.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/shared_data.h"

namespace boardlab::compiler {
namespace {

std::vector<uint8_t> LoadOrSkip(const std::string& relative, bool& skipped) {
  auto path = testing::SharedModelPath(relative);
  skipped = !path;
  return path ? testing::ReadFile(*path) : std::vector<uint8_t>{};
}

#define LOAD_MODEL_OR_SKIP(var, relative)                            \
  bool var##_skipped = false;                                        \
  std::vector<uint8_t> var = LoadOrSkip(relative, var##_skipped);    \
  if (var##_skipped) {                                               \
    GTEST_SKIP() << "shared models folder absent: ../shared/models"; \
  }

int CountUnit(const Graph& g, Unit unit) {
  int n = 0;
  for (const Op& op : g.ops) n += op.unit == unit;
  return n;
}

class RealModelCompileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealModelCompileTest, CompilesWithEveryOpPlacedAndAReport) {
  LOAD_MODEL_OR_SKIP(model, GetParam());
  absl::StatusOr<CompileResult> result = Compile(model, CompileOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  const Graph& g = result->compilation.graph;
  for (const Op& op : g.ops) {
    EXPECT_TRUE(op.unit == Unit::kNpu || op.unit == Unit::kCpu) << g.Describe(op);
    if (op.unit == Unit::kCpu) {
      EXPECT_FALSE(op.cpu_reason.empty()) << g.Describe(op);
    }
  }
  EXPECT_GT(result->pte.size(), 64u);
  EXPECT_GT(result->compilation.total_microseconds, 0);
  nlohmann::json report = nlohmann::json::parse(result->report_json);
  EXPECT_EQ(report["ops"].size(), g.ops.size());
  EXPECT_EQ(report["totals"]["npu_ops"].get<int>(), CountUnit(g, Unit::kNpu));
  EXPECT_GE(report["memory"]["arena_bytes"].get<int64_t>(),
            report["memory"]["arena_lower_bound_bytes"].get<int64_t>());
}

TEST_P(RealModelCompileTest, CpuOnlyPutsEveryOpOnTheCpu) {
  LOAD_MODEL_OR_SKIP(model, GetParam());
  CompileOptions options;
  options.cpu_only = true;
  absl::StatusOr<CompileResult> result = Compile(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const Graph& g = result->compilation.graph;
  EXPECT_EQ(CountUnit(g, Unit::kCpu), static_cast<int>(g.ops.size()));
  EXPECT_EQ(result->compilation.num_partitions, 0);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, RealModelCompileTest,
                         ::testing::Values("mlperf-tiny/vww_96_int8.tflite",
                                           "mlperf-tiny/resnet8_int8.tflite",
                                           "mlperf-tiny/kws_dscnn_int8.tflite",
                                           "mlperf-tiny/ad_fcae_int8.tflite",
                                           "tflite-micro/hello_world_int8.tflite",
                                           "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(info.param.find('/') + 1);
                           name = name.substr(0, name.find('.'));
                           for (char& ch : name) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// NXP measured 595 us for DS-CNN KWS on the RT700 (neutron-rt700.md section 2); the cost model
// must land within +-25 %.
TEST(CostModelCalibration, KwsLatencyWithinQuarterOfNxpMeasurement) {
  LOAD_MODEL_OR_SKIP(model, "mlperf-tiny/kws_dscnn_int8.tflite");
  absl::StatusOr<CompileResult> result = Compile(model, CompileOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  const double us = result->compilation.total_microseconds;
  EXPECT_GE(us, 595 * 0.75);
  EXPECT_LE(us, 595 * 1.25);
}

TEST(KwsPartition, ConvolutionsRunOnTheNpuInOnePartition) {
  LOAD_MODEL_OR_SKIP(model, "mlperf-tiny/kws_dscnn_int8.tflite");
  absl::StatusOr<CompileResult> result = Compile(model, CompileOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  const Graph& g = result->compilation.graph;
  for (const Op& op : g.ops) {
    if (op.type == OpType::kConv2D || op.type == OpType::kDepthwiseConv2D) {
      EXPECT_EQ(op.unit, Unit::kNpu) << g.Describe(op) << ": " << op.cpu_reason;
    }
  }
  EXPECT_EQ(result->compilation.num_partitions, 1);
}

TEST(NoNpuOption, KeepsTheNamedOpsOnTheCpuWithAReason) {
  LOAD_MODEL_OR_SKIP(model, "mlperf-tiny/kws_dscnn_int8.tflite");
  CompileOptions options;
  options.no_npu = {OpType::kDepthwiseConv2D};
  absl::StatusOr<CompileResult> result = Compile(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const Graph& g = result->compilation.graph;
  int depthwise = 0;
  for (const Op& op : g.ops) {
    if (op.type != OpType::kDepthwiseConv2D) continue;
    ++depthwise;
    EXPECT_EQ(op.unit, Unit::kCpu);
    EXPECT_NE(op.cpu_reason.find("--no-npu"), std::string::npos) << op.cpu_reason;
  }
  EXPECT_EQ(depthwise, 4);
  // The depthwise ops split the NPU work into runs around them.
  EXPECT_GE(result->compilation.num_partitions, 4);
}

TEST(MobileNetV2Export, InputTransposeIsPlacedByTheFormatOption) {
  LOAD_MODEL_OR_SKIP(model, "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite");
  for (FormatConversion where : {FormatConversion::kNpu, FormatConversion::kCpu}) {
    CompileOptions options;
    options.format_conversion = where;
    absl::StatusOr<CompileResult> result = Compile(model, options);
    ASSERT_TRUE(result.ok()) << result.status();
    const Graph& g = result->compilation.graph;
    const Op& first = g.ops.front();
    ASSERT_EQ(first.type, OpType::kTranspose);
    EXPECT_EQ(g.tensors[first.inputs[0]].layout, Layout::kNCHW);
    EXPECT_EQ(first.unit, where == FormatConversion::kCpu ? Unit::kCpu : Unit::kNpu)
        << first.cpu_reason;
  }
}

TEST(MobileNetV2Export, WeightsGoToFlashWhenTheBudgetIsSmall) {
  LOAD_MODEL_OR_SKIP(model, "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite");
  CompileOptions options;
  options.sram_budget = 4 << 20;
  absl::StatusOr<CompileResult> result = Compile(model, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const MemoryPlan& m = result->compilation.memory;
  EXPECT_TRUE(m.weights_in_flash);
  EXPECT_GT(m.min_weight_scratch_bytes, 0);
  EXPECT_LE(m.arena_bytes + m.weight_scratch_bytes, 4 << 20);
}

}  // namespace
}  // namespace boardlab::compiler
