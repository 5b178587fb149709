// The service with both board drivers (issue 5): one agent with a `sim` board and a `qemu` board
// (boardlab-firmware on qemu-system-arm, mps2-an505 Cortex-M33). The same model and input give
// the same verdict and the same output bytes on both, and the qemu run brings back an ETDump and
// a per-op profile read from it, labelled with its clock (QEMU instructions) and with the NPU
// kernels run on the Cortex-M33.

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/harness.h"
#include "tests/support/shared_data.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;

constexpr char kAgentConfig[] = R"(boards:
  - {id: lab-sim-0, type: imxrt700-sim, driver: sim}
  - {id: lab-qemu-0, type: imxrt700-qemu, driver: qemu, timeout_seconds: 240}
)";

bool FirmwareAvailable(std::string& why) {
  if (!BOARDLAB_SERVICE_QEMU_FOUND) {
    why = "qemu-system-arm is not installed (deploy/install-deps.sh installs it)";
    return false;
  }
  const std::string elf = BOARDLAB_SERVICE_FIRMWARE_ELF;
  if (elf.empty() || !fs::is_regular_file(elf)) {
    why = "the firmware was not built (needs arm-none-eabi-gcc): '" + elf + "'";
    return false;
  }
  return true;
}

TEST(QemuBoardTest, SimAndQemuBoardsGiveTheSameOutputs) {
  std::string why;
  if (!FirmwareAvailable(why)) GTEST_SKIP() << why;
  std::optional<std::string> model = SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: " << SharedModelsDir();
  const std::string golden =
      (fs::path(SharedModelsDir()).parent_path() / "golden" / "kws_dscnn_int8").string();

  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgentWithConfig("lab", kAgentConfig, 2));
  std::map<std::string, std::string> out_dirs;
  std::map<std::string, std::string> job_ids;
  for (const std::string type : {"imxrt700-sim", "imxrt700-qemu"}) {
    const std::string out = lab.Path("out-" + type);
    ClientResult r = lab.RunClient(
        {"submit", *model, "--board-type", type, "--input", golden + "/seed1.input.bin",
         "--expected", golden + "/seed1.output.bin", "--wait", "--out", out, "--json"},
        std::chrono::seconds(240));
    ASSERT_EQ(r.exit_code, 0) << type << ": " << r << "\nagent log:\n" << lab.AgentLog("lab");
    absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
    EXPECT_EQ(job->board_id(), type == "imxrt700-sim" ? "lab-sim-0" : "lab-qemu-0");
    EXPECT_GT(job->inference_us(), 0) << type;
    EXPECT_TRUE(fs::is_regular_file(out + "/etdump.etdp")) << type;
    out_dirs[type] = out;
    job_ids[type] = job->id();
  }
  EXPECT_EQ(ReadFile(out_dirs["imxrt700-sim"] + "/output0.bin"),
            ReadFile(out_dirs["imxrt700-qemu"] + "/output0.bin"));
  EXPECT_EQ(ReadFile(out_dirs["imxrt700-qemu"] + "/output0.bin"),
            ReadFile(golden + "/seed1.output.bin"));
  // The firmware's profile, read back from its ETDump: the delegate call with its NPU kernels.
  const std::vector<uint8_t> profile = ReadFile(out_dirs["imxrt700-qemu"] + "/profile.json");
  auto json = nlohmann::json::parse(profile.begin(), profile.end(), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << "profile.json is not JSON";
  const auto& ops = json.contains("profile") ? json["profile"]["ops"] : json["ops"];
  ASSERT_TRUE(ops.is_array() && !ops.empty()) << json.dump().substr(0, 400);
  EXPECT_FALSE(ops[0]["npu_kernels"].empty());
  // Its clock is QEMU's instruction count and its NPU kernels ran on the Cortex-M33, emulated;
  // the sim board's are simulated RT700 cycles on the NPU timing model.
  EXPECT_EQ(json["profile"]["clock"], "qemu-icount");
  EXPECT_TRUE(json["profile"]["total_cycles"].is_null());
  for (const auto& kernel : ops[0]["npu_kernels"]) {
    EXPECT_EQ(kernel["ran_on"], "npu-emulated-cortex-m33");
    EXPECT_TRUE(kernel["cycles"].is_null());
  }
  const std::vector<uint8_t> sim_profile = ReadFile(out_dirs["imxrt700-sim"] + "/profile.json");
  auto sim_json = nlohmann::json::parse(sim_profile.begin(), sim_profile.end(), nullptr, false);
  ASSERT_FALSE(sim_json.is_discarded()) << "the sim profile.json is not JSON";
  EXPECT_EQ(sim_json["profile"]["clock"], "rt700-sim-cycles");
  EXPECT_EQ(sim_json["profile"]["ops"][0]["npu_kernels"][0]["ran_on"], "npu");

  // The client's table of the qemu job says the same.
  ClientResult table = lab.RunClient({"watch", job_ids["imxrt700-qemu"]});
  ASSERT_EQ(table.exit_code, 0) << table;
  EXPECT_NE(table.out.find("clock: QEMU instructions (icount shift 0), not Cortex-M33 cycles"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(" npu-emulated-cortex-m33 "), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find(" npu "), std::string::npos) << table.out;
}

}  // namespace
}  // namespace boardlab::testing::service
