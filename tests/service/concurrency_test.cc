// Many clients at once against four sim boards on two agents: every job finishes PASS, none is
// lost, and no board ever runs two jobs at the same time (per-board intervals rebuilt from each
// job's events).

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

constexpr int kClients = 20;
constexpr int kJobsPerClient = 10;
constexpr int kJobs = kClients * kJobsPerClient;

TEST(ConcurrencyTest, TwoHundredJobsFromTwentyClientsOnFourBoards) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 2));
  ASSERT_TRUE(lab.StartAgent("b", 2));
  const std::string model = lab.WriteFile("fc.tflite", FastModel());

  // The expected output, once, from the host reference run.
  ClientResult reference =
      lab.RunClient({"submit", model, "--input", "random:7", "--expect-reference", "--wait",
                     "--out", lab.Path("reference"), "--json"});
  ASSERT_EQ(reference.exit_code, 0) << reference;
  const std::string expected = lab.Path("reference/output0.bin");

  std::mutex mutex;
  std::vector<std::string> job_ids;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int j = 0; j < kJobsPerClient; ++j) {
        ClientResult r =
            lab.RunClient({"submit", model, "--input", "random:7", "--expected", expected, "--wait",
                           "--json", "--label", absl::StrCat("client=", c)},
                          std::chrono::seconds(90));
        absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
        std::lock_guard lock(mutex);
        if (r.exit_code != 0 || !job.ok() || job->result() != v1::JOB_RESULT_PASS) {
          failures.push_back(absl::StrCat("client ", c, " job ", j, ": ",
                                          ::testing::PrintToString(r.exit_code), "\n", r.err));
          continue;
        }
        job_ids.push_back(job->id());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(failures.empty()) << failures.size() << " submits failed; first:\n"
                                << failures.front();
  ASSERT_EQ(job_ids.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(job_ids.begin(), job_ids.end()).size(),
            static_cast<size_t>(kJobs))
      << "two submits were answered with the same job";

  // None lost: the server lists all of them (and the reference job), all done and passed.
  absl::StatusOr<std::vector<v1::Job>> listed = lab.ListJobs();
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), static_cast<size_t>(kJobs + 1));
  int passed = 0;
  for (const v1::Job& job : *listed) {
    if (job.state() == v1::JOB_STATE_DONE && job.result() == v1::JOB_RESULT_PASS) ++passed;
  }
  EXPECT_EQ(passed, kJobs + 1);

  // One board, one job at a time.
  std::map<std::string, std::vector<BoardInterval>> by_board;
  for (const std::string& id : job_ids) {
    absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(id);
    ASSERT_TRUE(events.ok()) << id << ": " << events.status();
    const int finished =
        static_cast<int>(std::count_if(events->begin(), events->end(), [](const v1::JobEvent& e) {
          return e.kind_case() == v1::JobEvent::kFinished;
        }));
    EXPECT_EQ(finished, 1) << id;
    std::vector<BoardInterval> intervals = BoardIntervals(*events);
    ASSERT_FALSE(intervals.empty()) << id << " never went to a board";
    EXPECT_EQ(intervals.back().board_id, events->back().finished().board_id()) << id;
    for (const BoardInterval& interval : intervals) {
      ASSERT_FALSE(interval.board_id.empty()) << id << ": an ASSIGNED event without a board";
      ASSERT_LE(interval.start_ms, interval.end_ms) << id;
      by_board[interval.board_id].push_back(interval);
    }
  }
  EXPECT_EQ(by_board.size(), 4u) << "the jobs did not spread over the four boards";
  std::vector<std::pair<int64_t, int>> edges;  // (time, +1 start / -1 end) for the peak
  for (auto& [board, intervals] : by_board) {
    std::sort(intervals.begin(), intervals.end(), [](const auto& a, const auto& b) {
      return std::tie(a.start_ms, a.end_ms) < std::tie(b.start_ms, b.end_ms);
    });
    for (size_t i = 1; i < intervals.size(); ++i) {
      const BoardInterval& before = intervals[i - 1];
      const BoardInterval& after = intervals[i];
      EXPECT_GE(after.start_ms, before.end_ms)
          << "board " << board << " ran " << before.job_id << " [" << before.start_ms << ", "
          << before.end_ms << "] and " << after.job_id << " [" << after.start_ms << ", "
          << after.end_ms << "] at once";
    }
    for (const BoardInterval& interval : intervals) {
      edges.push_back({interval.start_ms, +1});
      edges.push_back({interval.end_ms, -1});
    }
  }
  // The boards did run in parallel (else this test would prove little).
  std::sort(edges.begin(), edges.end());  // an end sorts before a start at the same time
  int running = 0, peak = 0;
  for (const auto& [time, delta] : edges) peak = std::max(peak, running += delta);
  EXPECT_GE(peak, 2) << "never two boards busy at once";
}

}  // namespace
}  // namespace boardlab::testing::service
