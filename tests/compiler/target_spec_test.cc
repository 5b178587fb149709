#include "compiler/target_spec.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace boardlab::compiler {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// The embedded imxrt700 spec as JSON, for tests that change one field.
nlohmann::json TargetJson() {
  nlohmann::json json;
  json["kind"] = "target";
  json["name"] = "test";
  json["description"] = "d";
  json["cpu"] = "cortex-m33";
  json["npu"] = "neutron-n3-64";
  json["sram_bytes"] = 1024;
  json["timing"] = {{"cpu_clock_hz", 1e8},
                    {"npu_clock_hz", 1e8},
                    {"npu_macs_per_pipe", 8},
                    {"npu_pipes", 8},
                    {"npu_kernel_setup_cycles", 1},
                    {"npu_row_overhead_cycles", 2},
                    {"sram_bytes_per_cycle", 3},
                    {"flash_bytes_per_second", 4},
                    {"flash_transfer_setup_cycles", 5},
                    {"cpu_cycles_per_mac_conv", 6},
                    {"cpu_cycles_per_mac_depthwise", 7},
                    {"cpu_cycles_per_mac_fc", 8},
                    {"cpu_cycles_per_element_elementwise", 9},
                    {"cpu_cycles_per_element_move", 10},
                    {"cpu_cycles_per_element_lut", 11},
                    {"cpu_kernel_call_cycles", 12}};
  json["npu_limits"] = {
      {"num_macs", 16},         {"conv_max_kernel", 1},      {"conv_max_stride", 2},
      {"conv_max_dilation", 3}, {"conv_max_kernel_macs", 4}, {"conv_max_groups", 13},
      {"pool_max_kernel", 5},   {"pool_max_stride", 6},      {"softmax_max_channels", 7},
      {"softmax_max_rows", 8},  {"softmax_max_elements", 9}, {"resize_scales", {1, 3}},
      {"max_rank", 4}};
  return json;
}

absl::StatusOr<TargetSpec> Parse(const nlohmann::json& json) {
  return ParseTargetSpec(json.dump(), "t.json");
}

TEST(TargetSpec, LoadsTheEmbeddedImxrt700) {
  absl::StatusOr<TargetSpec> spec = LoadTargetSpec("imxrt700");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "imxrt700");
  EXPECT_EQ(spec->cpu_name, "cortex-m33");
  EXPECT_EQ(spec->npu_name, "neutron-n3-64");
  EXPECT_EQ(spec->sram_bytes, 7864320);
  EXPECT_EQ(spec->timing.npu_clock_hz, 325e6);
  EXPECT_EQ(spec->timing.cpu_clock_hz, 325e6);
  EXPECT_EQ(spec->timing.npu_macs_per_pipe * spec->timing.npu_pipes, 64);
  EXPECT_GT(spec->timing.npu_kernel_setup_cycles, 0);
  EXPECT_GT(spec->timing.cpu_kernel_call_cycles, 0);
  EXPECT_EQ(spec->npu.conv_max_kernel_macs, 65535);
  EXPECT_EQ(spec->npu.softmax_max_channels, 2040);
  EXPECT_EQ(spec->npu.resize_scales, (std::vector<int32_t>{1, 2, 4, 8}));
}

TEST(TargetSpec, ReadsEveryFieldFromTheFile) {
  absl::StatusOr<TargetSpec> spec = Parse(TargetJson());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->timing.npu_kernel_setup_cycles, 1);
  EXPECT_EQ(spec->timing.cpu_cycles_per_element_lut, 11);
  EXPECT_EQ(spec->timing.cpu_kernel_call_cycles, 12);
  EXPECT_EQ(spec->npu.num_macs, 16);
  EXPECT_EQ(spec->npu.softmax_max_elements, 9);
  EXPECT_EQ(spec->npu.resize_scales, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(spec->npu.max_rank, 4);
  EXPECT_EQ(spec->npu.conv_max_groups, 13);
}

TEST(TargetSpec, MissingFieldIsAnErrorNamingFieldAndFile) {
  nlohmann::json json = TargetJson();
  json["timing"].erase("cpu_cycles_per_mac_fc");
  absl::StatusOr<TargetSpec> spec = Parse(json);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(), "t.json: missing field timing.cpu_cycles_per_mac_fc");
  json = TargetJson();
  json["npu_limits"].erase("max_rank");
  EXPECT_EQ(Parse(json).status().message(), "t.json: missing field npu_limits.max_rank");
}

TEST(TargetSpec, UnknownKeyIsAnError) {
  nlohmann::json json = TargetJson();
  json["timing"]["npu_pipe"] = 8;
  absl::StatusOr<TargetSpec> spec = Parse(json);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("t.json: unknown field timing.npu_pipe "));
  json = TargetJson();
  json["sram"] = 1;
  EXPECT_THAT(Parse(json).status().message(), HasSubstr("unknown field sram "));
}

TEST(TargetSpec, WrongTypeIsAClearError) {
  nlohmann::json json = TargetJson();
  json["timing"]["npu_pipes"] = "8";
  EXPECT_EQ(Parse(json).status().message(), "t.json: timing.npu_pipes must be a number");
  json = TargetJson();
  json["npu_limits"]["num_macs"] = 8.5;
  EXPECT_EQ(Parse(json).status().message(), "t.json: npu_limits.num_macs must be an integer");
  json = TargetJson();
  json["timing"]["cpu_clock_hz"] = 0;
  EXPECT_EQ(Parse(json).status().message(),
            "t.json: timing.cpu_clock_hz must be a finite number > 0");
  json = TargetJson();
  json["timing"] = 3;
  EXPECT_EQ(Parse(json).status().message(), "t.json: timing must be an object");
  EXPECT_THAT(ParseTargetSpec("{", "t.json").status().message(), HasSubstr("t.json: invalid JSON"));
}

TEST(TargetSpec, KindMustMatch) {
  nlohmann::json json = TargetJson();
  json["kind"] = "board";
  EXPECT_EQ(Parse(json).status().message(), "t.json: kind is \"board\", expected \"target\"");
  absl::StatusOr<TargetSpec> spec = LoadTargetSpec("imxrt700-evk");  // a board, not a target
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
}

TEST(TargetSpec, UnknownNameListsTheAvailableOnes) {
  absl::StatusOr<TargetSpec> spec = LoadTargetSpec("imxrt600");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(spec.status().message(), HasSubstr("unknown target 'imxrt600'; available: "));
  EXPECT_THAT(spec.status().message(), HasSubstr("imxrt700"));
  EXPECT_EQ(LoadTargetSpec("/no/such/file.json").status().code(), absl::StatusCode::kNotFound);
}

TEST(TargetSpec, LoadsAPathFromDisk) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("boardlab_target_spec_test_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << TargetJson().dump(2);
  absl::StatusOr<TargetSpec> spec = LoadTargetSpec(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "test");
  EXPECT_EQ(spec->npu.num_macs, 16);
}

TEST(TargetSpec, EmbeddedNames) {
  EXPECT_THAT(EmbeddedTargetNames(), Contains("imxrt700"));
  EXPECT_THAT(EmbeddedBoardNames(), Contains("imxrt700-evk"));
  EXPECT_THAT(EmbeddedTargetNames(), ::testing::Not(Contains("imxrt700-evk")));
}

TEST(TargetSpec, LoadsTheEvkBoardAndItIsTheDefault) {
  absl::StatusOr<BoardProfile> board = LoadBoardProfile("imxrt700-evk");
  ASSERT_TRUE(board.ok()) << board.status();
  EXPECT_EQ(board->target, "imxrt700");
  EXPECT_EQ(board->sram_budget_bytes, 4456448);
  EXPECT_EQ(board->flash_bytes, 67108864);
  absl::StatusOr<TargetSpec> target = LoadTargetSpec("imxrt700");
  ASSERT_TRUE(target.ok());
  absl::StatusOr<BoardProfile> fallback = DefaultBoardFor(*target);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(fallback->name, "imxrt700-evk");
  target->name = "other";
  EXPECT_EQ(DefaultBoardFor(*target).status().code(), absl::StatusCode::kNotFound);
}

TEST(TargetSpec, BoardErrors) {
  EXPECT_EQ(ParseBoardProfile(R"({"kind": "board", "name": "b", "target": "t",
      "description": "", "sram_budget_bytes": 1})",
                              "b.json")
                .status()
                .message(),
            "b.json: missing field flash_bytes");
  EXPECT_THAT(ParseBoardProfile(R"({"kind": "board", "name": "b", "target": "t",
      "description": "", "sram_budget_bytes": 1, "flash_bytes": 0, "flash": 2})",
                                "b.json")
                  .status()
                  .message(),
              HasSubstr("b.json: unknown field flash "));
}

}  // namespace
}  // namespace boardlab::compiler
