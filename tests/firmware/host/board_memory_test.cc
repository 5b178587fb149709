// The firmware's memory pools (firmware/board_memory.h), built for the host with small pools
// (tests/CMakeLists.txt: 4 KiB RAM, 8 KiB bulk, 2 KiB scratch), so that the placement rules both
// boards share are tested without a board: the weight scratch goes to the non-cacheable pool when
// it fits there, the bulk pool is reserved from its top, a run's allocations are released.

#include "firmware/board_memory.h"

#include <gtest/gtest.h>

namespace boardlab::firmware {
namespace {

class BoardMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override { start_ = memory_.mark(); }
  void TearDown() override { memory_.Release(start_); }
  BoardMemory& memory_ = BoardMemory::Get();
  BoardMemory::Mark start_{};
};

TEST_F(BoardMemoryTest, PoolsHaveTheConfiguredSizes) {
  EXPECT_EQ(memory_.ram_capacity(), 4096u);
  EXPECT_EQ(memory_.scratch_capacity(), 2048u);
  EXPECT_EQ(memory_.CapacityBytes(), memory_.ram_capacity() + memory_.psram_capacity() + 2048u);
  EXPECT_STREQ(BoardMemory::bulk_name(), "bulk test pool");
}

TEST_F(BoardMemoryTest, WeightScratchGoesToTheScratchPool) {
  uint8_t* p = memory_.Allocate(1000, BoardMemory::kWeightScratch);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(memory_.scratch_used(), 1024u);  // rounded to 64 bytes
  EXPECT_EQ(memory_.ram_used(), 0u);
  EXPECT_FALSE(memory_.InRam(p));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % BoardMemory::kAlignment, 0u);
}

TEST_F(BoardMemoryTest, WeightScratchTooLargeForTheScratchPoolFallsBackToRamThenBulk) {
  uint8_t* p = memory_.Allocate(3000, BoardMemory::kWeightScratch);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(memory_.InRam(p));
  EXPECT_EQ(memory_.scratch_used(), 0u);
  uint8_t* q = memory_.Allocate(5000, BoardMemory::kWeightScratch);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(memory_.psram_used(), 5056u);
  EXPECT_EQ(memory_.Allocate(1u << 20, BoardMemory::kWeightScratch), nullptr);
}

TEST_F(BoardMemoryTest, OtherPreferencesNeverTakeTheScratchPool) {
  ASSERT_NE(memory_.Allocate(4096, BoardMemory::kFast), nullptr);
  ASSERT_NE(memory_.Allocate(memory_.psram_capacity(), BoardMemory::kBulk), nullptr);
  EXPECT_EQ(memory_.Allocate(64, BoardMemory::kFast), nullptr);
  EXPECT_EQ(memory_.scratch_used(), 0u);
}

TEST_F(BoardMemoryTest, ReleaseReturnsEveryPoolToTheMark) {
  ASSERT_NE(memory_.Allocate(100, BoardMemory::kWeightScratch), nullptr);
  ASSERT_NE(memory_.Allocate(100, BoardMemory::kFast), nullptr);
  ASSERT_NE(memory_.Allocate(100, BoardMemory::kBulk), nullptr);
  memory_.Release(start_);
  EXPECT_EQ(memory_.scratch_used(), 0u);
  EXPECT_EQ(memory_.ram_used(), 0u);
  EXPECT_EQ(memory_.psram_used(), 0u);
}

}  // namespace
}  // namespace boardlab::firmware
