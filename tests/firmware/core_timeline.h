#pragma once

// What the timeline of a firmware run must show, for the QEMU tests of both an505 builds
// (semihosting and board link): the board counts QEMU instructions, and the NPU kernels and the
// weight copies all ran on the Cortex-M33, so that no two of them overlap and none claims NPU
// cycles or microseconds.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/shared_data.h"
#include "tests/support/trace_checks.h"

namespace boardlab::firmware {

/// Checks the Chrome trace at `trace` and the SVG at `svg` of one firmware run (which must have
/// NPU kernels and weights in flash), and draws the SVG to `png`.
inline void ExpectTheCoreDidEverything(const std::string& trace, const std::string& svg,
                                       const std::string& png) {
  const std::vector<uint8_t> bytes = testing::ReadFile(trace);
  absl::StatusOr<testing::TraceLanes> lanes =
      testing::ReadTrace(std::string(bytes.begin(), bytes.end()));
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ(lanes->other_data["clock"], "qemu-icount");
  EXPECT_EQ(lanes->other_data["ts_unit"], "instructions");
  EXPECT_EQ(lanes->thread_names[2], "NPU kernels run on the Cortex-M33 (software engine)");
  EXPECT_EQ(lanes->thread_names[3], "weight copies by the Cortex-M33 (memcpy)");
  ASSERT_FALSE(lanes->slices[2].empty());
  ASSERT_FALSE(lanes->slices[3].empty());
  EXPECT_TRUE(testing::SlicesDoNotOverlap(*lanes));
  std::vector<testing::TraceSlice> on_core = lanes->slices[2];
  on_core.insert(on_core.end(), lanes->slices[3].begin(), lanes->slices[3].end());
  std::sort(on_core.begin(), on_core.end(),
            [](const testing::TraceSlice& a, const testing::TraceSlice& b) { return a.ts < b.ts; });
  for (size_t i = 1; i < on_core.size(); ++i) {
    EXPECT_LE(on_core[i - 1].ts + on_core[i - 1].dur, on_core[i].ts) << on_core[i].name;
  }
  for (const testing::TraceSlice& s : lanes->slices[2]) {
    EXPECT_EQ(s.args["ran_on"], "npu-emulated-cortex-m33") << s.name;
    EXPECT_FALSE(s.args.contains("cycles")) << s.name;
    EXPECT_FALSE(s.args.contains("us")) << s.name;
  }
  for (const testing::TraceSlice& s : lanes->slices[3]) {
    EXPECT_EQ(s.args["ran_on"], "dma-emulated-cortex-m33") << s.name;
  }
  const std::vector<uint8_t> picture = testing::ReadFile(svg);
  absl::StatusOr<testing::SvgSlices> slices =
      testing::ReadSvgSlices(std::string(picture.begin(), picture.end()));
  ASSERT_TRUE(slices.ok()) << slices.status();
  EXPECT_EQ(slices->per_lane[1], static_cast<int>(lanes->slices[2].size()));
  EXPECT_EQ(slices->per_lane[2], static_cast<int>(lanes->slices[3].size()));
  EXPECT_TRUE(testing::RenderSvgToPng(svg, png));
}

}  // namespace boardlab::firmware
