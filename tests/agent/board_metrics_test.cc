// agent/board_metrics.h: the serial driver's counters as a Prometheus text file that promtool
// accepts, rewritten whole after every change.

#include "agent/board_metrics.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/process.h"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(BoardMetrics, CountsEveryStepAndPromtoolAcceptsTheFile) {
  const fs::path path = fs::path(::testing::TempDir()) / "board_metrics_test.prom";
  fs::remove(path);
  BoardMetrics metrics(path.string());
  metrics.AddRetransmissions("evk-0", 5);
  metrics.AddRetransmissions("evk-0", 2);
  metrics.CountStep("evk-0", RecoveryStep::kResync);
  metrics.CountStep("evk-0", RecoveryStep::kReset);
  metrics.CountStep("evk-0", RecoveryStep::kPowerCycle);
  metrics.CountFlash("evk-0", true);
  metrics.CountFlash("evk-1", false);
  metrics.SetQuarantined("evk-1", true);
  metrics.SetQuarantined("evk-1", true);  // still the one quarantine
  ASSERT_TRUE(metrics.write_status().ok()) << metrics.write_status();

  const std::string text = ReadText(path);
  EXPECT_EQ(text, metrics.Text());
  EXPECT_NE(text.find("boardlab_agent_link_retransmissions_total{board=\"evk-0\"} 7"),
            std::string::npos)
      << text;
  for (const char* step : {"resync", "reset", "power_cycle"}) {
    EXPECT_NE(text.find("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"" +
                        std::string(step) + "\"} 1"),
              std::string::npos)
        << step << "\n"
        << text;
  }
  EXPECT_NE(text.find("boardlab_agent_board_flashes_total{board=\"evk-0\",result=\"ok\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("boardlab_agent_board_flashes_total{board=\"evk-1\",result=\"failed\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("boardlab_agent_board_quarantines_total{board=\"evk-1\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("boardlab_agent_board_quarantined{board=\"evk-1\"} 1"), std::string::npos);
  metrics.SetQuarantined("evk-1", false);
  EXPECT_NE(ReadText(path).find("boardlab_agent_board_quarantined{board=\"evk-1\"} 0"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  const std::string promtool = BOARDLAB_AGENT_PROMTOOL;
  ASSERT_FALSE(promtool.empty()) << "promtool is missing: run deploy/install-deps.sh";
  testing::CommandResult check =
      testing::RunCommand(promtool + " check metrics < " + path.string());
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(BoardMetrics, AnUnwritableFileIsReportedNotFatal) {
  BoardMetrics metrics("/nonexistent-dir/metrics.prom");
  metrics.CountFlash("evk-0", true);
  EXPECT_FALSE(metrics.write_status().ok());
  EXPECT_NE(metrics.Text().find("boardlab_agent_board_flashes_total"), std::string::npos);
}

// The file is rewritten at every change: its failure is said once when it starts, and once when
// it ends, not at every counter.
TEST(BoardMetrics, AFailingFileIsReportedOnceWhenItFailsAndOnceWhenItRecovers) {
  const fs::path dir = fs::path(::testing::TempDir()) / "metrics-recovers";
  fs::remove_all(dir);
  const fs::path path = dir / "metrics.prom";
  BoardMetrics metrics(path.string());
  ::testing::internal::CaptureStderr();
  metrics.CountFlash("evk-0", true);
  metrics.CountFlash("evk-0", false);
  metrics.CountStep("evk-0", RecoveryStep::kReset);
  const std::string failing = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(metrics.write_status().ok());
  const std::string said = absl::StrCat("boardlab-agent: board metrics: writing '", path.string(),
                                        ".tmp' failed; they are counted but not written");
  EXPECT_NE(failing.find(said), std::string::npos) << failing;
  EXPECT_EQ(failing.find(said), failing.rfind(said)) << "said more than once:\n" << failing;

  fs::create_directories(dir);
  ::testing::internal::CaptureStderr();
  metrics.CountFlash("evk-0", true);
  metrics.CountFlash("evk-0", true);
  const std::string recovered = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(metrics.write_status().ok()) << metrics.write_status();
  EXPECT_EQ(recovered, absl::StrCat("boardlab-agent: board metrics: writing '", path.string(),
                                    "' works again\n"));
  EXPECT_NE(ReadText(path).find("boardlab_agent_board_flashes_total"), std::string::npos);
}

}  // namespace
}  // namespace boardlab::agent
