// Unit tests of the RT700 timing model and its calibration against NXP's measured latencies
// (shared/reference/neutron-rt700.md section 2). docs/cost-model.md records the figures these
// tests print.

#include "runtime/timing/timing_model.h"

#include <cstdio>
#include <vector>

#include "gtest/gtest.h"

namespace boardlab::runtime::timing {
namespace {

// The calibrated values (docs/cost-model.md; compiler/targets/imxrt700.json copies them).
TimingParams CalibratedParams() {
  TimingParams p;
  p.cpu_clock_hz = 325e6;
  p.npu_clock_hz = 325e6;
  p.npu_macs_per_pipe = 8;
  p.npu_pipes = 8;
  p.npu_kernel_setup_cycles = 1000;
  p.npu_row_overhead_cycles = 150;
  p.sram_bytes_per_cycle = 8;
  p.flash_bytes_per_second = 250e6;
  p.flash_transfer_setup_cycles = 500;
  p.cpu_cycles_per_mac_conv = 1.5;
  p.cpu_cycles_per_mac_depthwise = 2.0;
  p.cpu_cycles_per_mac_fc = 2.0;
  p.cpu_cycles_per_element_elementwise = 4;
  p.cpu_cycles_per_element_move = 1.5;
  p.cpu_cycles_per_element_lut = 12;
  p.cpu_kernel_call_cycles = 300;
  return p;
}

// Params without overheads, so MAC-array arithmetic can be checked exactly.
TimingParams BareParams() {
  TimingParams p;
  p.sram_bytes_per_cycle = 1e9;
  return p;
}

// Shape builders for the anchor networks (int8 activations; weights + int32 bias).
NpuKernelShape Conv(int64_t oh, int64_t ow, int64_t cin, int64_t cout, int64_t kh, int64_t kw,
                    int64_t stride, bool flash = false) {
  NpuKernelShape s;
  s.kind = NpuKernelClass::kConv;
  s.out_rows = oh;
  s.out_cols = ow;
  s.out_channels = cout;
  s.in_channels = cin;
  s.kernel_taps = kh * kw;
  s.input_bytes = oh * stride * ow * stride * cin;
  s.output_bytes = oh * ow * cout;
  s.weight_bytes = cout * cin * kh * kw + 4 * cout;
  s.weights_in_flash = flash;
  return s;
}

NpuKernelShape Depthwise(int64_t oh, int64_t ow, int64_t c, int64_t stride, bool flash = false) {
  NpuKernelShape s = Conv(oh, ow, c, c, 3, 3, stride, flash);
  s.kind = NpuKernelClass::kDepthwise;
  s.in_channels = 1;
  s.weight_bytes = 9 * c + 4 * c;
  return s;
}

NpuKernelShape Pool(int64_t h, int64_t w, int64_t c) {
  NpuKernelShape s;
  s.kind = NpuKernelClass::kPool;
  s.out_channels = c;
  s.kernel_taps = h * w;
  s.input_bytes = h * w * c;
  s.output_bytes = c;
  return s;
}

NpuKernelShape Vector(NpuKernelClass kind, int64_t n) {
  NpuKernelShape s;
  s.kind = kind;
  s.out_channels = n;
  s.input_bytes = n;
  s.output_bytes = n;
  return s;
}

NpuKernelShape Fc(int64_t cin, int64_t cout, bool flash = false) {
  return Conv(1, 1, cin, cout, 1, 1, 1, flash);
}

// MLPerf Tiny DS-CNN (neutron-rt700.md section 12), everything on the NPU as our partitioner
// places it.
std::vector<NpuKernelShape> KwsDsCnn() {
  std::vector<NpuKernelShape> layers = {Conv(25, 5, 1, 64, 10, 4, 2)};
  layers[0].input_bytes = 49 * 10;
  for (int i = 0; i < 4; ++i) {
    layers.push_back(Depthwise(25, 5, 64, 1));
    layers.push_back(Conv(25, 5, 64, 64, 1, 1, 1));
  }
  layers.push_back(Pool(25, 5, 64));
  layers.push_back(Vector(NpuKernelClass::kDataMovement, 64));  // reshape
  layers.push_back(Fc(64, 12));
  layers.push_back(Vector(NpuKernelClass::kSoftmax, 12));
  return layers;
}

// MobileNet v1 (tensorflow/models research/slim mobilenet_v1.md): conv 3x3 s2, 13 depthwise
// separable blocks, global average pool, FC to 1000 classes, softmax.
std::vector<NpuKernelShape> MobileNetV1(double alpha, int64_t resolution, bool flash) {
  auto ch = [alpha](int64_t c) { return static_cast<int64_t>(c * alpha); };
  int64_t size = resolution / 2;
  std::vector<NpuKernelShape> layers = {Conv(size, size, 3, ch(32), 3, 3, 2, flash)};
  const int64_t blocks[][2] = {{64, 1},  {128, 2},  {128, 1}, {256, 2}, {256, 1},
                               {512, 2}, {512, 1},  {512, 1}, {512, 1}, {512, 1},
                               {512, 1}, {1024, 2}, {1024, 1}};
  int64_t cin = ch(32);
  for (const auto& [cout, stride] : blocks) {
    size /= stride;
    layers.push_back(Depthwise(size, size, cin, stride, flash));
    layers.push_back(Conv(size, size, cin, ch(cout), 1, 1, 1, flash));
    cin = ch(cout);
  }
  layers.push_back(Pool(size, size, cin));
  layers.push_back(Vector(NpuKernelClass::kDataMovement, cin));
  layers.push_back(Fc(cin, 1000, flash));
  layers.push_back(Vector(NpuKernelClass::kSoftmax, 1000));
  return layers;
}

struct NetworkEstimate {
  int64_t macs = 0;
  uint64_t cycles = 0;
  double microseconds = 0;
};

NetworkEstimate Estimate(const std::vector<NpuKernelShape>& layers, const TimingParams& p) {
  NetworkEstimate e;
  for (const NpuKernelShape& s : layers) {
    if (s.kind == NpuKernelClass::kConv || s.kind == NpuKernelClass::kDepthwise) {
      e.macs += s.out_rows * s.out_cols * s.out_channels * s.in_channels * s.kernel_taps;
    }
    e.cycles += NpuKernelCycles(s, p).total;
  }
  e.microseconds = CyclesToMicroseconds(e.cycles, p.npu_clock_hz);
  return e;
}

void Report(const char* name, const NetworkEstimate& e, double measured_us) {
  std::printf(
      "[anchor] %-24s MACs %10lld  cycles %10llu  estimate %9.1f us  measured %9.1f us"
      "  error %+5.1f %%\n",
      name, static_cast<long long>(e.macs), static_cast<unsigned long long>(e.cycles),
      e.microseconds, measured_us, (e.microseconds / measured_us - 1) * 100);
}

TEST(TimingModel, AlignedPointwiseConvHasFullUtilization) {
  const NpuKernelCost cost = NpuKernelCycles(Conv(56, 56, 256, 256, 1, 1, 1), BareParams());
  EXPECT_DOUBLE_EQ(cost.utilization, 1.0);
  // MAC array: 56*56 pixels x 32 channel groups x 32 input steps; drain: 8 cycles per block.
  EXPECT_EQ(cost.compute, 56u * 56 * 32 * 32 + 56u * 56 * 32 * 8);
}

TEST(TimingModel, SingleInputChannelConvUsesOneEighthOfTheMacs) {
  const NpuKernelCost cost = NpuKernelCycles(Conv(25, 5, 1, 64, 10, 4, 2), BareParams());
  EXPECT_DOUBLE_EQ(cost.utilization, 1.0 / 8);
}

TEST(TimingModel, DepthwisePadsTapsToTheMacWidth) {
  const NpuKernelCost cost = NpuKernelCycles(Depthwise(25, 5, 64, 1), BareParams());
  EXPECT_DOUBLE_EQ(cost.utilization, 9.0 / 16);
  EXPECT_EQ(cost.compute, 125u * 8 * 2 + 125u * 8 * 8);
}

TEST(TimingModel, UnalignedChannelsWasteLanes) {
  // 12 output channels occupy two pipe groups (16 lanes), 12 input channels two MAC steps.
  const NpuKernelCost cost = NpuKernelCycles(Conv(4, 4, 12, 12, 1, 1, 1), BareParams());
  EXPECT_DOUBLE_EQ(cost.utilization, (12.0 * 12) / (16 * 16));
}

TEST(TimingModel, SetupAndRowOverheadAddToCompute) {
  TimingParams p = BareParams();
  const uint64_t bare = NpuKernelCycles(Conv(10, 10, 8, 8, 1, 1, 1), p).compute;
  p.npu_kernel_setup_cycles = 1000;
  p.npu_row_overhead_cycles = 50;
  EXPECT_EQ(NpuKernelCycles(Conv(10, 10, 8, 8, 1, 1, 1), p).compute, bare + 1000 + 10 * 50);
}

TEST(TimingModel, MemoryBoundKernel) {
  TimingParams p = BareParams();
  p.sram_bytes_per_cycle = 1;
  const NpuKernelShape s = Vector(NpuKernelClass::kDataMovement, 4096);
  const NpuKernelCost cost = NpuKernelCycles(s, p);
  EXPECT_EQ(cost.memory, 8192u);
  EXPECT_EQ(cost.total, cost.compute);  // streaming is part of the vector work
  EXPECT_GE(cost.total, cost.memory);
}

TEST(TimingModel, FlashPrefetchBoundsWeightHeavyKernels) {
  TimingParams p = CalibratedParams();
  const NpuKernelShape fc = Fc(1024, 1000, /*flash=*/true);
  const NpuKernelCost cost = NpuKernelCycles(fc, p);
  // 1,028,000 weight bytes at 250 MB/s and 325 MHz = 1.3 cycles per byte, plus DMA setup.
  EXPECT_EQ(cost.prefetch, 1336400u + 500u);
  EXPECT_EQ(cost.total, cost.prefetch);
  EXPECT_GT(cost.prefetch, cost.compute);
  // The same kernel with weights in SRAM reads them over the SRAM port instead.
  EXPECT_EQ(NpuKernelCycles(Fc(1024, 1000), p).prefetch, 0u);
  EXPECT_EQ(NpuKernelCycles(Fc(1024, 1000), p).memory, (1024u + 1000 + 1028000) / 8);
}

TEST(TimingModel, DeterministicIntegerCycles) {
  const TimingParams p = CalibratedParams();
  const NpuKernelShape s = Conv(7, 7, 1024, 1024, 1, 1, 1, true);
  EXPECT_EQ(NpuKernelCycles(s, p).total, NpuKernelCycles(s, p).total);
}

TEST(TimingModel, CpuKernelCycles) {
  TimingParams p = CalibratedParams();
  EXPECT_EQ(CpuKernelCycles({CpuKernelClass::kConv, 1000, 0}, p), 300u + 1500);
  EXPECT_EQ(CpuKernelCycles({CpuKernelClass::kDepthwise, 1000, 0}, p), 300u + 2000);
  EXPECT_EQ(CpuKernelCycles({CpuKernelClass::kLut, 0, 10}, p), 300u + 120);
  EXPECT_EQ(CpuKernelCycles({CpuKernelClass::kDataMovement, 0, 100}, p), 300u + 150);
  EXPECT_DOUBLE_EQ(CyclesToMicroseconds(325, 325e6), 1.0);
}

// NXP measured 595 us for DS-CNN KWS on the MIMXRT700-EVK (tflm_kws); the model must land within
// +-25 %.
TEST(TimingModelCalibration, KwsDsCnnWithin25Percent) {
  const NetworkEstimate e = Estimate(KwsDsCnn(), CalibratedParams());
  Report("KWS DS-CNN", e, 595);
  EXPECT_EQ(e.macs, 2656768);
  EXPECT_GE(e.microseconds, 446);
  EXPECT_LE(e.microseconds, 744);
}

TEST(TimingModelCalibration, MobileNetV1Quarter128Within30Percent) {
  const NetworkEstimate e = Estimate(MobileNetV1(0.25, 128, false), CalibratedParams());
  Report("MobileNet v1 0.25 128", e, 2759);
  EXPECT_NEAR(e.macs, 14e6, 0.5e6);
  EXPECT_NEAR(e.microseconds, 2759, 2759 * 0.30);
}

TEST(TimingModelCalibration, MobileNetV1Full224FlashWithin30Percent) {
  const NetworkEstimate e = Estimate(MobileNetV1(1.0, 224, true), CalibratedParams());
  Report("MobileNet v1 1.0 224 flash", e, 53376);
  EXPECT_NEAR(e.macs, 569e6, 1e6);
  EXPECT_NEAR(e.microseconds, 53376, 53376 * 0.30);
}

}  // namespace
}  // namespace boardlab::runtime::timing
