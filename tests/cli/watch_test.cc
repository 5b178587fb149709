// watch against the in-process fake server: progress, reconnect after a dropped stream with
// after_seq, the verdict and profile, --out files, --json, and exit codes from the verdict.

#include "cli/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "proto/support/digest.h"
#include "runtime/cli/profile_table.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/cli/fake_boardlab_server.h"

namespace boardlab::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr WatchOptions kFastWatch{std::chrono::milliseconds(1), std::chrono::milliseconds(8),
                                  std::chrono::milliseconds(300)};

class RecordingObserver : public JobObserver {
 public:
  void OnEvent(const v1::JobEvent& event) override { seqs.push_back(event.seq()); }
  void OnStreamBroken(const absl::Status& why, std::chrono::milliseconds) override {
    breaks.push_back(why);
  }
  std::vector<int64_t> seqs;
  std::vector<absl::Status> breaks;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The ETDump a sim board stores: one Execute run of a delegate call (one NPU kernel) and a
// softmax kernel call, in simulated cycles.
std::string SimEtdump() {
  std::vector<uint8_t> buffer(16 * 1024);
  runtime::etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  runtime::etdump::ClockRecord clock;
  clock.kind = runtime::etdump::ClockKind::kSimCycles;
  clock.ticks_per_second = 325000000;
  runtime::etdump::WriteClockRecord(w, clock);
  w.BeginRun("Execute");
  const uint8_t npu[2] = {0, static_cast<uint8_t>(runtime::ExecutionUnit::kNpu)};
  w.LogDelegateEvent(10, 0, 0, 0, 300, npu, 2);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, 0, 320);
  w.LogProfileEvent("native_call_softmax.out", 0, 1, 330, 600);
  w.LogProfileEvent("OPERATOR_CALL", 0, 1, 320, 620);
  w.LogProfileEvent("Method::execute", -1, -1, 0, 620);
  const auto bytes = w.Finish();
  return bytes.ok() ? std::string(bytes->data(), bytes->data() + bytes->size()) : "";
}

constexpr char kDebugMap[] = R"({
    "delegates": [{"instruction": 0, "partition": 0, "backend": "BoardlabNeutronBackend",
                   "kernels": [{"id": 10, "kernel": 0, "ops": [0], "names": ["fc"],
                                "name": "FULLY_CONNECTED #0", "macs": 160}]}],
    "cpu_ops": [{"instruction": 1, "op": 1, "ops": [1], "name": "SOFTMAX #1", "macs": 0}]})";

class WatchTest : public testing::CliTest {
 protected:
  WatchTest() {
    model_ = testing::WriteTestFile("watch_model.tflite", "model bytes");
    GlobalOptions options;
    options.server = server_.address();
    connection_ = *Connect(options);
  }

  // A finished job with a verdict, checks, timing and files in the fake's store.
  v1::Job Outcome(v1::JobResult result) {
    v1::Job job;
    job.set_result(result);
    job.set_message(result == v1::JOB_RESULT_PASS ? "outputs match" : "output 0 differs");
    job.set_board_id("sim-0");
    job.set_attempt(1);
    job.set_inference_us(1234.5);
    job.set_inference_cycles(617250);
    job.set_inference_clock("rt700-sim-cycles");
    v1::OutputCheck* check = job.add_checks();
    check->set_passed(result == v1::JOB_RESULT_PASS);
    check->set_max_abs_diff(result == v1::JOB_RESULT_PASS ? 0 : 3);
    run::Profile profile;
    profile.clock.kind = "rt700-sim-cycles";
    profile.clock.ticks_per_second = 500e6;
    profile.iterations = 1;
    run::ProfileRow row;
    row.op = "FULLY_CONNECTED 'fc'";
    row.ran_on = "cpu";
    row.ticks = 617250;
    row.cycles = 617250;
    row.us = 1234.5;
    profile.rows.push_back(row);
    profile.total_us = 1234.5;
    profile.total_cycles = 617250;
    v1::JobFiles& files = *job.mutable_files();
    *files.mutable_artifact() = server_.artifacts().Preload("pte bytes");
    *files.mutable_report() = server_.artifacts().Preload("{\"report\": 1}");
    *files.add_outputs() = server_.artifacts().Preload("output bytes");
    *files.mutable_profile() = server_.artifacts().Preload(run::ProfileJson(profile).dump());
    *files.mutable_log() = server_.artifacts().Preload("board log");
    return job;
  }

  std::string Submit(v1::JobResult result) {
    server_.jobs().SetOutcome(Outcome(result));
    testing::CapturedRun run = testing::RunCaptured({"submit", model_}, server_.address());
    EXPECT_EQ(run.code, 0) << run.err;
    return run.out.substr(0, run.out.find('\n'));
  }

  Connection connection_;
  std::string model_;
};

TEST_F(WatchTest, ReconnectsAfterTheLastSeqWhenTheStreamDrops) {
  const std::string job_id = Submit(v1::JOB_RESULT_PASS);
  server_.jobs().DropFirstWatchAfter(3);
  RecordingObserver observer;
  absl::StatusOr<v1::Job> job = FollowJob(connection_, job_id, kFastWatch, observer);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS);
  EXPECT_THAT(observer.seqs, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));  // each once, in order
  EXPECT_THAT(server_.jobs().watch_after_seqs(), ElementsAre(0, 3));
  ASSERT_EQ(observer.breaks.size(), 1u);
  EXPECT_EQ(observer.breaks[0].code(), absl::StatusCode::kUnavailable);
}

TEST_F(WatchTest, GivesUpWhenNoEventArrivesWithinTheWindow) {
  const std::string job_id = Submit(v1::JOB_RESULT_PASS);
  server_.jobs().FailAllWatches();
  RecordingObserver observer;
  absl::StatusOr<v1::Job> job = FollowJob(connection_, job_id, kFastWatch, observer);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr("boardlab watch " + job_id));
  EXPECT_GT(server_.jobs().watch_after_seqs().size(), 3u);
}

v1::JobEvent Event(int64_t seq, int64_t time_ms) {
  v1::JobEvent event;
  event.set_seq(seq);
  event.set_time_ms(time_ms);
  return event;
}

TEST(ProgressPrinter, StatesLogsAndReconnects) {
  std::ostringstream out;
  ProgressPrinter progress(out);
  v1::JobEvent compiling = Event(1, 10'000);
  compiling.set_state(v1::JOB_STATE_COMPILING);
  v1::JobEvent log = Event(2, 10'100);
  log.set_log("compiled (cache hit)");
  v1::JobEvent assigned = Event(3, 12'345);
  assigned.set_state(v1::JOB_STATE_ASSIGNED);
  assigned.set_board_id("lab1-sim-0");
  assigned.set_attempt(2);
  v1::JobEvent finished = Event(4, 75'000);
  finished.mutable_finished()->set_result(v1::JOB_RESULT_PASS);
  progress.OnEvent(compiling);
  progress.OnEvent(log);
  progress.OnStreamBroken(absl::UnavailableError("server gone"), std::chrono::milliseconds(250));
  progress.OnStreamBroken(absl::UnavailableError("refused"), std::chrono::milliseconds(500));
  progress.OnEvent(assigned);
  progress.OnEvent(finished);
  EXPECT_EQ(out.str(),
            "[   0.00s] compiling\n"
            "           | compiled (cache hit)\n"
            "           lost the event stream: UNAVAILABLE: server gone\n"
            "           reconnecting in 250ms (attempt 1)\n"
            "           reconnecting in 500ms (attempt 2)\n"
            "           reconnected\n"
            "[   2.35s] assigned to board lab1-sim-0, attempt 2 (compiling took 2.3s)\n"
            "[  65.00s] done\n");
}

TEST_F(WatchTest, AnUnknownJobIsExitTwoAtOnce) {
  EXPECT_EQ(Run({"watch", "job-404"}), 2);
  EXPECT_THAT(err_, HasSubstr("boardlab: watching job job-404: no such job"));
  EXPECT_THAT(server_.jobs().watch_after_seqs(), ElementsAre(0));
}

TEST_F(WatchTest, PrintsProgressVerdictAndProfile) {
  const std::string job_id = Submit(v1::JOB_RESULT_PASS);
  ASSERT_EQ(Run({"watch", job_id}), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("compiling\n"));
  EXPECT_THAT(err_, HasSubstr("queued (compiling took 250ms)"));
  EXPECT_THAT(err_, HasSubstr("assigned to board sim-0, attempt 1 (queued took 250ms)"));
  EXPECT_THAT(err_, HasSubstr("| board sim-0: artifact loaded"));
  EXPECT_THAT(err_, HasSubstr("[   1.75s] done"));
  EXPECT_THAT(out_, HasSubstr("PASS   job " + job_id + " on board sim-0 (attempt 1)"));
  EXPECT_THAT(out_, HasSubstr("outputs match"));
  EXPECT_THAT(out_, HasSubstr("output 0: pass (max abs diff 0)"));
  EXPECT_THAT(out_, HasSubstr("inference: 1234.5 us, 617250 cycles"));
  EXPECT_THAT(out_, HasSubstr("clock: simulated RT700 cycles"));
  EXPECT_THAT(out_, ::testing::ContainsRegex("FULLY_CONNECTED 'fc' +cpu +617250 +1234.50 +100.0%"));
}

TEST_F(WatchTest, ExitCodeIsTheVerdict) {
  const std::string job_id = Submit(v1::JOB_RESULT_FAIL);
  EXPECT_EQ(Run({"watch", job_id}), 1);
  EXPECT_THAT(out_, HasSubstr("FAIL   job"));
  EXPECT_THAT(out_, HasSubstr("output 0: FAIL (max abs diff 3)"));
  EXPECT_EQ(Run({"status", job_id}), 1);
  // The summary names the inference time's clock; the profile table follows, with its clock
  // and where each op ran.
  EXPECT_THAT(out_, HasSubstr("  inference   1234.5 us (clock: simulated RT700)\n"));
  EXPECT_THAT(out_, HasSubstr("  clock: simulated RT700 cycles"));
  EXPECT_THAT(out_, HasSubstr("ran on"));
  EXPECT_THAT(out_, HasSubstr("FULLY_CONNECTED 'fc'"));
  for (const auto& [result, code] :
       std::vector<std::pair<v1::JobResult, int>>{{v1::JOB_RESULT_COMPILE_ERROR, 3},
                                                  {v1::JOB_RESULT_RUN_ERROR, 4},
                                                  {v1::JOB_RESULT_QUEUE_TIMEOUT, 5},
                                                  {v1::JOB_RESULT_CANCELLED, 6}}) {
    EXPECT_EQ(Run({"watch", Submit(result)}), code) << v1::JobResult_Name(result);
  }
}

TEST_F(WatchTest, SubmitWaitOutWritesTheJobsFiles) {
  server_.jobs().SetOutcome(Outcome(v1::JOB_RESULT_PASS));
  const std::string dir = ::testing::TempDir() + "/watch_out";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(Run({"submit", model_, "--wait", "--out", dir}), 0) << err_;
  EXPECT_EQ(ReadFile(dir + "/artifact.pte"), "pte bytes");
  EXPECT_EQ(ReadFile(dir + "/report.json"), "{\"report\": 1}");
  EXPECT_EQ(ReadFile(dir + "/output0.bin"), "output bytes");
  EXPECT_EQ(ReadFile(dir + "/log.txt"), "board log");
  EXPECT_THAT(ReadFile(dir + "/profile.json"), HasSubstr("FULLY_CONNECTED"));
  // The table's JSON twin names the clock and where each op ran, too.
  EXPECT_THAT(ReadFile(dir + "/profile.json"), HasSubstr("\"clock_label\":"));
  EXPECT_THAT(ReadFile(dir + "/profile.json"), HasSubstr("\"ran_on\":\"cpu\""));
  EXPECT_THAT(ReadFile(dir + "/job.json"), HasSubstr("\"result\":\"JOB_RESULT_PASS\""));
  EXPECT_FALSE(std::filesystem::exists(dir + "/etdump.etdp"));  // the job has none
  EXPECT_THAT(err_, HasSubstr("wrote 6 files to " + dir));
}

// --out also draws the run's timeline from the job's ETDump and debug map.
TEST_F(WatchTest, OutDrawsTheTimelineFromTheEtdumpAndDebugMap) {
  v1::Job outcome = Outcome(v1::JOB_RESULT_PASS);
  *outcome.mutable_files()->mutable_etdump() = server_.artifacts().Preload(SimEtdump());
  *outcome.mutable_files()->mutable_debug_map() = server_.artifacts().Preload(kDebugMap);
  server_.jobs().SetOutcome(outcome);
  const std::string dir = ::testing::TempDir() + "/watch_timeline";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(Run({"submit", model_, "--wait", "--out", dir}), 0) << err_;
  const nlohmann::json trace = nlohmann::json::parse(ReadFile(dir + "/trace.json"), nullptr, false);
  ASSERT_FALSE(trace.is_discarded());
  std::vector<std::string> slices;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") slices.push_back(e["name"]);
  }
  EXPECT_THAT(slices, ElementsAre("delegate 0 (BoardlabNeutronBackend)", "SOFTMAX #1",
                                  "FULLY_CONNECTED #0"));
  EXPECT_EQ(trace["otherData"]["source"].get<std::string>().rfind("job j", 0), 0u);
  const std::string svg = ReadFile(dir + "/timeline.svg");
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("SOFTMAX #1"));
  // 6 files + etdump.etdp and debug_map.json + trace.json and timeline.svg.
  EXPECT_THAT(err_, HasSubstr("wrote 10 files to " + dir));
}

// A timeline that cannot be drawn is a warning: the verdict and the job's files stay.
TEST_F(WatchTest, AnEtdumpWithoutATimelineIsOnlyAWarning) {
  v1::Job outcome = Outcome(v1::JOB_RESULT_PASS);
  *outcome.mutable_files()->mutable_etdump() = server_.artifacts().Preload("not an etdump");
  server_.jobs().SetOutcome(outcome);
  const std::string dir = ::testing::TempDir() + "/watch_no_timeline";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(Run({"submit", model_, "--wait", "--out", dir}), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("warning: no timeline (trace.json, timeline.svg): 'job j"));
  EXPECT_THAT(err_, HasSubstr("not an ETDump"));
  EXPECT_EQ(ReadFile(dir + "/etdump.etdp"), "not an etdump");
  EXPECT_FALSE(std::filesystem::exists(dir + "/trace.json"));
  EXPECT_THAT(err_, HasSubstr("wrote 7 files to " + dir));
}

TEST_F(WatchTest, JsonPrintsOnlyTheFinalJob) {
  const std::string job_id = Submit(v1::JOB_RESULT_PASS);
  ASSERT_EQ(Run({"watch", job_id, "--json"}), 0) << err_;
  EXPECT_EQ(out_.find('\n'), out_.size() - 1);  // one line
  EXPECT_THAT(out_, HasSubstr("\"id\":\"" + job_id + "\""));
  EXPECT_THAT(out_, HasSubstr("\"inference_us\":1234.5"));
  EXPECT_THAT(out_, ::testing::Not(HasSubstr("FULLY_CONNECTED")));
}

TEST_F(WatchTest, AMissingProfileIsAWarningNotAFailure) {
  v1::Job outcome = Outcome(v1::JOB_RESULT_PASS);
  outcome.mutable_files()->mutable_profile()->set_sha256(std::string(64, '0'));
  server_.jobs().SetOutcome(outcome);
  ASSERT_EQ(Run({"submit", model_, "--wait"}), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("warning: cannot show the profile"));
}

TEST_F(WatchTest, FilesThatCannotBeDownloadedFailAPassingJob) {
  v1::Job outcome = Outcome(v1::JOB_RESULT_PASS);
  outcome.mutable_files()->mutable_log()->set_sha256(std::string(64, '0'));
  server_.jobs().SetOutcome(outcome);
  EXPECT_EQ(Run({"submit", model_, "--wait", "--out", ::testing::TempDir() + "/watch_bad"}), 5);
  EXPECT_THAT(err_, HasSubstr("downloading log.txt: no such blob"));
}

}  // namespace
}  // namespace boardlab::cli
