#include "compiler/greedy_memory_planner.h"

#include <random>

#include "gtest/gtest.h"

namespace boardlab::compiler {
namespace {

// Places buffers exactly where the test says, to plant overlaps for VerifyPlan.
class FixedPlanner : public MemoryPlanner {
 public:
  absl::Status AddBuffer(int64_t size, int first_use, int last_use) override {
    buffers_.push_back({size, first_use, last_use});
    offsets_.push_back(0);
    return absl::OkStatus();
  }
  absl::Status Plan() override { return absl::OkStatus(); }
  int64_t GetOffset(int buffer) const override { return offsets_[buffer]; }
  int64_t PeakBytes() const override { return 0; }
  int BufferCount() const override { return static_cast<int>(buffers_.size()); }
  const BufferRequest& GetBuffer(int buffer) const override { return buffers_[buffer]; }
  void SetOffset(int buffer, int64_t offset) { offsets_[buffer] = offset; }

 private:
  std::vector<BufferRequest> buffers_;
  std::vector<int64_t> offsets_;
};

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c: a and c never live together, so c can take a's bytes.
  GreedyMemoryPlanner planner;
  ASSERT_TRUE(planner.AddBuffer(1000, 0, 1).ok());
  ASSERT_TRUE(planner.AddBuffer(2000, 1, 2).ok());
  ASSERT_TRUE(planner.AddBuffer(1000, 2, 3).ok());
  ASSERT_TRUE(planner.Plan().ok());
  EXPECT_EQ(planner.GetOffset(1), 0);     // largest first, at the bottom
  EXPECT_EQ(planner.GetOffset(0), 2000);  // above b
  EXPECT_EQ(planner.GetOffset(2), 2000);  // reuses a's bytes
  EXPECT_EQ(planner.PeakBytes(), 3008);   // 2000 + 1000 aligned to 16
  EXPECT_EQ(ArenaLowerBound(planner), 3008);
  EXPECT_TRUE(VerifyPlan(planner).ok());
}

TEST(MemoryPlanner, FillsGapsBetweenLiveBuffers) {
  GreedyMemoryPlanner planner;
  ASSERT_TRUE(planner.AddBuffer(1000, 0, 1).ok());  // a: [0, 1008)
  ASSERT_TRUE(planner.AddBuffer(900, 1, 2).ok());   // b: above a
  ASSERT_TRUE(planner.AddBuffer(800, 2, 3).ok());   // c: below b, in a's old bytes
  ASSERT_TRUE(planner.AddBuffer(100, 2, 2).ok());   // d: the 208-byte hole between c and b
  ASSERT_TRUE(planner.AddBuffer(50, 2, 2).ok());    // e: the 96 bytes left of that hole
  ASSERT_TRUE(planner.Plan().ok());
  EXPECT_EQ(planner.GetOffset(0), 0);
  EXPECT_EQ(planner.GetOffset(1), 1008);
  EXPECT_EQ(planner.GetOffset(2), 0);
  EXPECT_EQ(planner.GetOffset(3), 800);
  EXPECT_EQ(planner.GetOffset(4), 912);
  EXPECT_EQ(planner.PeakBytes(), 1008 + 912);
  EXPECT_EQ(planner.PeakBytes(), ArenaLowerBound(planner));
  EXPECT_TRUE(VerifyPlan(planner).ok());
}

TEST(MemoryPlanner, OffsetsAreAligned) {
  GreedyMemoryPlanner planner;
  ASSERT_TRUE(planner.AddBuffer(3, 0, 0).ok());
  ASSERT_TRUE(planner.AddBuffer(5, 0, 0).ok());
  ASSERT_TRUE(planner.Plan().ok());
  EXPECT_EQ(planner.GetOffset(1), 0);  // the larger one goes first
  EXPECT_EQ(planner.GetOffset(0), 16);
  EXPECT_EQ(planner.PeakBytes(), 32);
}

TEST(MemoryPlanner, RejectsInvalidBuffers) {
  GreedyMemoryPlanner planner;
  EXPECT_EQ(planner.AddBuffer(-1, 0, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(planner.AddBuffer(16, 3, 2).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(planner.AddBuffer(16, -1, 2).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryPlanner, RandomLiveRangesNeverOverlap) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    GreedyMemoryPlanner planner;
    const int steps = 1 + static_cast<int>(rng() % 40);
    const int buffers = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < buffers; ++i) {
      const int first = static_cast<int>(rng() % steps);
      const int last = first + static_cast<int>(rng() % (steps - first));
      ASSERT_TRUE(planner.AddBuffer(rng() % 5000, first, last).ok());
    }
    ASSERT_TRUE(planner.Plan().ok());
    ASSERT_TRUE(VerifyPlan(planner).ok()) << "trial " << trial << ": " << VerifyPlan(planner);
    EXPECT_GE(planner.PeakBytes(), ArenaLowerBound(planner)) << "trial " << trial;
  }
}

TEST(MemoryPlanVerify, NamesBothOverlappingBuffers) {
  FixedPlanner planner;
  ASSERT_TRUE(planner.AddBuffer(100, 0, 2).ok());
  ASSERT_TRUE(planner.AddBuffer(100, 1, 3).ok());
  ASSERT_TRUE(planner.AddBuffer(100, 4, 5).ok());
  planner.SetOffset(1, 64);
  planner.SetOffset(2, 0);  // shares bytes with 0 and 1, but is never live with them
  const absl::Status status = VerifyPlan(planner);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "VerifyPlan: buffer 0 (live 0..2, bytes [0, 100)) overlaps buffer 1 (live 1..3, "
            "bytes [64, 164))");
}

TEST(MemoryPlanVerify, RejectsUnalignedOffsets) {
  FixedPlanner planner;
  ASSERT_TRUE(planner.AddBuffer(100, 0, 2).ok());
  planner.SetOffset(0, 8);
  EXPECT_EQ(VerifyPlan(planner).message(),
            "VerifyPlan: buffer 0 has offset 8 (unplanned or unaligned)");
}

TEST(MemoryPlanVerify, LowerBoundSumsLiveBytesPerStep) {
  const std::vector<BufferRequest> buffers = {{100, 0, 1}, {10, 1, 2}, {50, 2, 2}};
  // Step 1: 112 + 16; step 2: 16 + 64.
  EXPECT_EQ(ArenaLowerBound(buffers), 128);
  EXPECT_EQ(ArenaLowerBound(std::vector<BufferRequest>{}), 0);
}

}  // namespace
}  // namespace boardlab::compiler
