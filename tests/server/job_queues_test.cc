#include "server/job_queues.h"

#include <gtest/gtest.h>

#include <vector>

namespace boardlab::server {
namespace {

std::vector<int64_t> Order(const JobQueues& queues, const std::string& type) {
  std::vector<int64_t> numbers;
  queues.Visit(type, [&](const JobQueues::Place& job) {
    numbers.push_back(job.number);
    return true;
  });
  return numbers;
}

TEST(JobQueuesTest, HighestPriorityFirstThenOldest) {
  JobQueues queues;
  queues.Add("rt700", {0, 1}, "a");
  queues.Add("rt700", {5, 2}, "a");
  queues.Add("rt700", {0, 3}, "b");
  queues.Add("rt700", {-3, 4}, "b");
  queues.Add("rt700", {5, 5}, "b");
  EXPECT_EQ(Order(queues, "rt700"), (std::vector<int64_t>{2, 5, 1, 3, 4}));
}

TEST(JobQueuesTest, VisitGivesPrioritiesAndStopsWhenAsked) {
  JobQueues queues;
  queues.Add("t", {7, 1}, "a");
  queues.Add("t", {-2, 2}, "a");
  std::vector<int32_t> priorities;
  queues.Visit("t", [&](const JobQueues::Place& job) {
    priorities.push_back(job.priority);
    return false;
  });
  EXPECT_EQ(priorities, (std::vector<int32_t>{7}));
  int visited = 0;
  queues.Visit("unknown", [&](const JobQueues::Place&) { return ++visited > 0; });
  EXPECT_EQ(visited, 0);
}

TEST(JobQueuesTest, TypesAreSeparateAndLengthsSkipEmptyQueues) {
  JobQueues queues;
  queues.Add("a", {0, 1}, "t");
  queues.Add("a", {0, 2}, "t");
  queues.Add("b", {0, 3}, "t");
  ASSERT_TRUE(queues.Remove("b", {0, 3}, "t"));
  EXPECT_EQ(queues.Length("a"), 2u);
  EXPECT_EQ(queues.Length("b"), 0u);
  EXPECT_EQ(queues.Length("never"), 0u);
  EXPECT_EQ(queues.TotalLength(), 2u);
  EXPECT_EQ(queues.Lengths(""), (std::map<std::string, int>{{"a", 2}}));
  EXPECT_EQ(queues.Lengths("b"), (std::map<std::string, int>{}));
}

TEST(JobQueuesTest, TenantsAreCountedUntilTheirLastJobLeaves) {
  JobQueues queues;
  queues.Add("t", {0, 1}, "x");
  queues.Add("t", {0, 2}, "x");
  queues.Add("t", {1, 3}, "y");
  EXPECT_EQ(queues.TenantCount("t"), 2u);
  ASSERT_TRUE(queues.Remove("t", {0, 1}, "x"));
  EXPECT_EQ(queues.TenantCount("t"), 2u);
  ASSERT_TRUE(queues.Remove("t", {0, 2}, "x"));
  EXPECT_EQ(queues.TenantCount("t"), 1u);
}

TEST(JobQueuesTest, RemovingAJobThatIsNotQueuedChangesNothing) {
  JobQueues queues;
  queues.Add("t", {0, 1}, "x");
  EXPECT_FALSE(queues.Remove("t", {1, 1}, "x"));  // same number, other priority
  EXPECT_FALSE(queues.Remove("u", {0, 1}, "x"));
  EXPECT_EQ(queues.TenantCount("t"), 1u);
  EXPECT_EQ(queues.Length("t"), 1u);
  queues.Add("t", {0, 1}, "x");  // added twice: still one job, one count
  ASSERT_TRUE(queues.Remove("t", {0, 1}, "x"));
  EXPECT_EQ(queues.TenantCount("t"), 0u);
}

TEST(JobQueuesTest, PositionsAreOneBasedAndOnlyForQueuedJobs) {
  JobQueues queues;
  for (int64_t n = 1; n <= 5; ++n) queues.Add("t", {0, n}, "x");
  queues.Add("t", {9, 6}, "x");  // goes first
  EXPECT_EQ(queues.Positions("t", {1, 5, 6, 42}),
            (std::map<int64_t, int32_t>{{6, 1}, {1, 2}, {5, 6}}));
  EXPECT_TRUE(queues.Positions("t", {}).empty());
  EXPECT_TRUE(queues.Positions("other", {1}).empty());
}

}  // namespace
}  // namespace boardlab::server
