// The tables people read: boards, jobs, durations and state names.

#include "cli/tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(FormatDuration, MillisecondsSecondsMinutes) {
  EXPECT_EQ(FormatDuration(0), "0ms");
  EXPECT_EQ(FormatDuration(999), "999ms");
  EXPECT_EQ(FormatDuration(1250), "1.2s");
  EXPECT_EQ(FormatDuration(245'000), "4m05s");
}

TEST(StateNames, ShortAndLowerCase) {
  EXPECT_EQ(StateName(v1::JOB_STATE_COLLECTING), "collecting");
  EXPECT_EQ(BoardStateName(v1::BOARD_STATE_QUARANTINED), "quarantined");
}

TEST(PrintBoardsTable, SaysWhatHoldsEachBoard) {
  google::protobuf::RepeatedPtrField<v1::Board> boards;
  v1::Board* busy = boards.Add();
  busy->set_id("lab1-sim-0");
  busy->set_type("imxrt700-sim");
  busy->set_state(v1::BOARD_STATE_BUSY);
  busy->set_job_id("j7");
  busy->set_jobs_run(12);
  v1::Tag* tag = busy->add_tags();
  tag->set_key("ram");
  tag->set_value("64M");
  v1::Board* reserved = boards.Add();
  reserved->set_id("lab1-sim-1");
  reserved->set_state(v1::BOARD_STATE_RESERVED);
  reserved->set_reserved_by("alice");
  v1::Board* maintenance = boards.Add();
  maintenance->set_id("lab1-sim-2");
  maintenance->set_state(v1::BOARD_STATE_MAINTENANCE);
  maintenance->set_reason("cable swap");
  std::ostringstream out;
  PrintBoardsTable(boards, out);
  std::istringstream lines(out.str());
  std::string header, first, second, third;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, third);
  EXPECT_THAT(header, MatchesRegex("BOARD +TYPE +STATE +HELD BY / REASON +TAGS +JOBS RUN"));
  EXPECT_THAT(first, MatchesRegex("lab1-sim-0 +imxrt700-sim +busy +job j7 +ram=64M +12"));
  EXPECT_THAT(second, HasSubstr("reserved by alice"));
  EXPECT_THAT(third, HasSubstr("maintenance  cable swap"));
}

TEST(PrintJobsTable, ShowsVerdictsQueuePlacesAndFitsLongNames) {
  google::protobuf::RepeatedPtrField<v1::Job> jobs;
  v1::Job* running = jobs.Add();
  running->set_id("j2");
  running->set_state(v1::JOB_STATE_RUNNING);
  running->mutable_spec()->set_name("kws.tflite");
  v1::Job* done = jobs.Add();
  done->set_id("j1");
  done->set_state(v1::JOB_STATE_DONE);
  done->set_result(v1::JOB_RESULT_COMPILE_ERROR);
  done->mutable_spec()->set_name("mobilenet_v2_int8_1x3x224x224.tflite");
  done->set_submit_time_ms(1'000'000);
  done->set_end_time_ms(1'002'500);
  v1::Job* queued = jobs.Add();
  queued->set_id("j3");
  queued->set_state(v1::JOB_STATE_QUEUED);
  queued->set_queue_position(2);
  queued->set_queue_length(5);
  std::ostringstream out;
  PrintJobsTable(jobs, out);
  EXPECT_THAT(out.str(), HasSubstr("\nj2                       running        kws.tflite"));
  EXPECT_THAT(out.str(), HasSubstr("\nj3                       queued 2/5     -"));
  EXPECT_THAT(out.str(), HasSubstr("COMPILE_ERROR  mobilenet_v2_int8_1x3x224... default"));
  EXPECT_THAT(out.str(), HasSubstr("2.5s\n"));
}

TEST(PrintVerdict, VerdictChecksAndInference) {
  v1::Job job;
  job.set_id("j9");
  job.set_result(v1::JOB_RESULT_FAIL);
  job.set_message("output 1 differs");
  job.set_board_id("b0");
  job.set_attempt(2);
  v1::OutputCheck* check = job.add_checks();
  check->set_index(1);
  check->set_max_abs_diff(4);
  job.set_inference_us(10.25);
  job.set_inference_clock("rt700-sim-cycles");
  job.mutable_spec()->mutable_run()->set_iterations(5);
  std::ostringstream out;
  PrintVerdict(job, out);
  EXPECT_EQ(out.str(),
            "FAIL   job j9 on board b0 (attempt 2): output 1 differs\n"
            "  output 1: FAIL (max abs diff 4)\n"
            "inference: 10.2 us (clock: simulated RT700) (mean of 5 iterations)\n");
}

// The inference time always says what timed it; QEMU's figures say they are not the board's.
TEST(PrintVerdict, InferenceNamesItsClock) {
  for (const auto& [clock, text] : std::vector<std::pair<std::string, std::string>>{
           {"", "clock not recorded"},
           {"qemu-icount", "clock: QEMU instruction count, not the board's time"},
           {"qemu-virtual-time", "clock: QEMU virtual time, not the board's time"},
           {"dwt-cycles", "clock: DWT cycles on the board"},
           {"cmsdk-timer0 (qemu virtual time)", "clock: cmsdk-timer0 (qemu virtual time)"}}) {
    v1::Job job;
    job.set_id("j1");
    job.set_result(v1::JOB_RESULT_PASS);
    job.set_state(v1::JOB_STATE_DONE);
    job.set_inference_us(5);
    job.set_inference_clock(clock);
    std::ostringstream verdict, summary;
    PrintVerdict(job, verdict);
    PrintJobSummary(job, summary);
    EXPECT_THAT(verdict.str(), HasSubstr("inference: 5.0 us (" + text + ")\n")) << clock;
    EXPECT_THAT(summary.str(), HasSubstr("  inference   5.0 us (" + text + ")\n")) << clock;
  }
}

TEST(PrintJobSummary, AQueuedJobShowsItsPlaceInTheQueue) {
  v1::Job job;
  job.set_id("j3");
  job.set_state(v1::JOB_STATE_QUEUED);
  job.set_queue_position(3);
  job.set_queue_length(7);
  std::ostringstream out;
  PrintJobSummary(job, out);
  EXPECT_THAT(out.str(), HasSubstr("  queue       3 of 7 (next: 1; fair share may reorder)\n"));
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_queue_position(0);
  std::ostringstream running;
  PrintJobSummary(job, running);
  EXPECT_THAT(running.str(), ::testing::Not(HasSubstr("queue ")));
}

TEST(PrintBoardTypeSummary, BoardsByStateAndQueuedJobsPerType) {
  v1::ListBoardsResponse response;
  for (v1::BoardState state : {v1::BOARD_STATE_IDLE, v1::BOARD_STATE_BUSY, v1::BOARD_STATE_BUSY,
                               v1::BOARD_STATE_OFFLINE}) {
    v1::Board* board = response.add_boards();
    board->set_type("imxrt700-sim");
    board->set_state(state);
  }
  (*response.mutable_queued_jobs())["imxrt700-sim"] = 5;
  (*response.mutable_queued_jobs())["imxrt700-evk"] = 1;  // a type whose boards are all gone
  std::ostringstream out;
  PrintBoardTypeSummary(response, out);
  EXPECT_EQ(out.str(),
            "imxrt700-evk     0 boards; 1 job queued\n"
            "imxrt700-sim     4 boards: 2 busy, 1 idle, 1 offline; 5 jobs queued\n");
}

}  // namespace
}  // namespace boardlab::cli
