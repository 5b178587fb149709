// The signal library's real FFTs on the host runtime beyond TFLite Micro's own vectors
// (tests/support/signal_fft_cases.cc, checked in hand_derived_ops_test.cc): kissfft's
// fixed-point arithmetic worked out by hand on the smallest transforms (its halving by
// 16383 / 32768, its twiddles rounded from double, its int16 sums that wrap), the zero padding
// of short rows, a float32 round trip, and every mix of its radix 2, 3, 4 and 5 stages against
// a long double DFT (float32 to its rounding, int16 and int32 scaled by 1 / fft_length).

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "runtime/kernels/reference/signal_fft.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/tflite_builder.h"

namespace boardlab {
namespace {

using runtime::kernels::RealFftPlan;
using testing::IntMapFlexbuffer;
using testing::TflType;
using Bytes = std::vector<uint8_t>;

// A plan of `fft_length` over its own buffers, its twiddles filled.
template <typename T>
struct Plan {
  std::vector<T> buffer;
  RealFftPlan<T> plan;
  Plan(int32_t fft_length, bool inverse)
      : buffer(static_cast<size_t>(runtime::kernels::RealFftPlanScalars(fft_length))) {
    plan.fft_length = fft_length;
    plan.inverse = inverse;
    plan.twiddles = buffer.data();
    plan.super_twiddles = buffer.data() + fft_length;
    plan.work = buffer.data() + fft_length + fft_length / 2;
    runtime::kernels::real_fft_init(plan);
  }
};

// fft_length 8 (a 4-point complex FFT): twiddles floor(0.5 + 32767 cos), floor(0.5 + 32767 sin)
// of -2 pi i / 4 (cos(-pi / 2) = 6e-17 rounds to 0); kiss_fftr's split twiddles of
// -pi (i + 1) / 4 - pi / 2: 32767 x -0.7071 = -23169.77 rounds to -23170. The inverse's sines
// change sign.
TEST(SignalFft, Int16TwiddlesAsKissfftRoundsThem) {
  const Plan<int16_t> forward(8, false);
  EXPECT_EQ(std::vector<int16_t>(forward.plan.twiddles, forward.plan.twiddles + 8),
            (std::vector<int16_t>{32767, 0, 0, -32767, -32767, 0, 0, 32767}));
  EXPECT_EQ(std::vector<int16_t>(forward.plan.super_twiddles, forward.plan.super_twiddles + 4),
            (std::vector<int16_t>{-23170, -23170, -32767, 0}));
  const Plan<int16_t> inverse(8, true);
  EXPECT_EQ(std::vector<int16_t>(inverse.plan.twiddles, inverse.plan.twiddles + 8),
            (std::vector<int16_t>{32767, 0, 0, 32767, -32767, 0, 0, -32767}));
  EXPECT_EQ(std::vector<int16_t>(inverse.plan.super_twiddles, inverse.plan.super_twiddles + 4),
            (std::vector<int16_t>{-23170, 23170, -32767, 0}));
  // int32: 2147483647 x -0.70710678 = -1518500249.29.
  const Plan<int32_t> wide(8, false);
  EXPECT_EQ(wide.plan.super_twiddles[0], -1518500249);
  EXPECT_EQ(wide.plan.twiddles[3], -2147483647);
}

// {4000, 2000, -6000, 8000} as the pairs (4000, 2000), (-6000, 8000): the radix-2 stage halves
// each by x 16383 / 32768 rounded ((4000, 2000) -> (2000, 1000), (-6000, 8000) -> (-3000,
// 4000)), adds and subtracts the twiddled one ((-1000, 5000), (5000, -3000)); the split halves
// again: DC (-500 + 2500) = 2000, Nyquist -500 - 2500 = -3000, bin 1 from (2500, -1500) and
// (2500, 1500): 2500 and the imaginary part -3000 x -32767 = 98301000, plus 2^14, shifted right
// by 15 = 3000, halved to 1500 (the exact transform / 4 is 2500 + 1500i).
TEST(SignalFft, Int16FourPointsByHand) {
  const Plan<int16_t> p(4, false);
  const std::vector<int16_t> in = {4000, 2000, -6000, 8000};
  std::vector<int16_t> out(6);
  runtime::kernels::rfft_apply(p.plan, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<int16_t>{2000, 0, 2500, 1500, -3000, 0}));
}

// kiss_fftri forms DC + Nyquist in an int16: 20000 + 20000 wraps to -25536, which its halving
// takes to -12767 and the radix-2 stage to -6383 (unwrapped the samples would be 10000, 0).
TEST(SignalFft, Int16IrfftSumsWrapAsKissfftsDo) {
  const Plan<int16_t> p(4, true);
  const std::vector<int16_t> in = {20000, 0, 0, 0, 20000, 0};
  std::vector<int16_t> out(4);
  runtime::kernels::irfft_apply(p.plan, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<int16_t>{-6383, 0, -6383, 0}));
}

// float32 has no scaling in the forward transform and divides by fft_length after the inverse:
// the round trip gives the samples back to float rounding.
TEST(SignalFft, FloatRoundTrip) {
  constexpr int32_t n = 256;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> samples(n), bins(n + 2), back(n);
  for (float& x : samples) x = d(rng);
  const Plan<float> forward(n, false), inverse(n, true);
  runtime::kernels::rfft_apply(forward.plan, samples.data(), bins.data());
  runtime::kernels::irfft_apply(inverse.plan, bins.data(), back.data());
  for (int32_t i = 0; i < n; ++i) EXPECT_NEAR(back[i], samples[i], 1e-3f) << i;
  EXPECT_EQ(bins[1], 0.0f);      // DC is real
  EXPECT_EQ(bins[n + 1], 0.0f);  // so is Nyquist
}

// The even lengths whose half factors into 2s, 3s and 5s, so that every mix of kissfft's radix
// 2, 3, 4 and 5 stages runs: 6 (3), 10 (5), 12 (2, 3), 24 (4, 3), 30 (3, 5), 90 (3, 3, 5), 96
// (4, 4, 3), 250 (5, 5, 5), 360 (4, 3, 3, 5), 1000 (4, 5, 5, 5), 1920 (4, 4, 4, 3, 5), 4000
// (4, 4, 5, 5, 5), and a power of two for scale.
const int32_t kMixedLengths[] = {6, 10, 12, 24, 30, 90, 96, 250, 360, 1000, 1920, 4000, 512};

// cos and sin of 2 pi j / n for j in 0..n-1 in long double: the DFTs below take the phase of
// t k modulo n from it.
struct UnitCircle {
  std::vector<long double> cos, sin;
  explicit UnitCircle(int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      const long double phase = 2.0L * M_PIl * static_cast<long double>(j) / n;
      cos.push_back(std::cos(phase));
      sin.push_back(std::sin(phase));
    }
  }
};

// The real DFT of `x`: fft_length / 2 + 1 (real, imaginary) bins, unscaled.
std::vector<long double> Dft(const std::vector<long double>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const UnitCircle circle(n);
  std::vector<long double> bins(static_cast<size_t>(n + 2), 0.0L);
  for (int64_t k = 0; k <= n / 2; ++k) {
    for (int64_t t = 0; t < n; ++t) {
      bins[2 * k] += x[t] * circle.cos[t * k % n];
      bins[2 * k + 1] -= x[t] * circle.sin[t * k % n];
    }
  }
  return bins;
}

// The real inverse DFT of fft_length / 2 + 1 bins, divided by fft_length (the imaginary parts of
// DC and Nyquist unused, as kiss_fftri ignores them).
std::vector<long double> InverseDft(const std::vector<long double>& bins, int64_t n) {
  const UnitCircle circle(n);
  std::vector<long double> x(static_cast<size_t>(n), 0.0L);
  for (int64_t t = 0; t < n; ++t) {
    long double sum = bins[0] + (t % 2 == 0 ? 1 : -1) * bins[n];
    for (int64_t k = 1; k < n / 2; ++k) {
      sum += 2 * (bins[2 * k] * circle.cos[t * k % n] - bins[2 * k + 1] * circle.sin[t * k % n]);
    }
    x[t] = sum / n;
  }
  return x;
}

template <typename T>
std::vector<T> RandomValues(size_t count, double limit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-limit, limit);
  std::vector<T> v(count);
  for (T& x : v) x = static_cast<T>(std::is_floating_point_v<T> ? d(rng) : std::round(d(rng)));
  return v;
}

template <typename T>
std::vector<long double> Wide(const std::vector<T>& v) {
  return std::vector<long double>(v.begin(), v.end());
}

// The largest |got - want| over the values, and the largest |want|.
template <typename T>
std::pair<long double, long double> Deviation(const std::vector<T>& got,
                                              const std::vector<long double>& want) {
  long double error = 0, peak = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    error = std::max(error, std::fabs(static_cast<long double>(got[i]) - want[i]));
    peak = std::max(peak, std::fabs(want[i]));
  }
  return {error, peak};
}

// float32: kissfft's unscaled forward transform equals the DFT to float rounding at every mix
// of stages (a wrong twiddle, stage order of operands or sign would be off by the signal's
// size): within 1e-6 of the largest bin.
TEST(SignalFft, FloatMixedRadixEqualsTheDft) {
  for (int32_t n : kMixedLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomValues<float>(static_cast<size_t>(n), 1000.0, n);
    std::vector<float> bins(static_cast<size_t>(n + 2));
    const Plan<float> p(n, false);
    runtime::kernels::rfft_apply(p.plan, x.data(), bins.data());
    const auto [error, peak] = Deviation(bins, Dft(Wide(x)));
    EXPECT_LE(error, 1e-6L * peak) << error << " of " << peak;
  }
}

// float32's inverse, divided by fft_length at the end: the inverse DFT of random bins.
TEST(SignalFft, FloatMixedRadixInverseEqualsTheInverseDft) {
  for (int32_t n : kMixedLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> bins = RandomValues<float>(static_cast<size_t>(n + 2), 1000.0, n);
    std::vector<float> x(static_cast<size_t>(n));
    const Plan<float> p(n, true);
    runtime::kernels::irfft_apply(p.plan, bins.data(), x.data());
    const auto [error, peak] = Deviation(x, InverseDft(Wide(bins), n));
    EXPECT_LE(error, 1e-6L * peak) << error << " of " << peak;
  }
}

// Fixed point: every stage divides by its radix (x times SAMP_MAX / radix, rounded), the split
// by 2, so the bins are the DFT / fft_length; the stages' roundings add up to a few LSBs (at
// most 3.5 over these lengths and seeds, against a bound of 6).
template <typename T>
void ExpectFixedPointIsTheScaledDft(double limit, long double lsbs) {
  for (int32_t n : kMixedLengths) {
    SCOPED_TRACE(n);
    const std::vector<T> x = RandomValues<T>(static_cast<size_t>(n), limit, n);
    std::vector<T> bins(static_cast<size_t>(n + 2));
    const Plan<T> forward(n, false);
    runtime::kernels::rfft_apply(forward.plan, x.data(), bins.data());
    std::vector<long double> want = Dft(Wide(x));
    for (long double& w : want) w /= n;
    EXPECT_LE(Deviation(bins, want).first, lsbs);
    // The inverse of those bins: the inverse DFT (its stages scale by 1 / fft_length in all).
    std::vector<T> back(static_cast<size_t>(n));
    const Plan<T> inverse(n, true);
    runtime::kernels::irfft_apply(inverse.plan, bins.data(), back.data());
    EXPECT_LE(Deviation(back, InverseDft(Wide(bins), n)).first, lsbs);
  }
}

TEST(SignalFft, Int32MixedRadixIsTheScaledDft) {
  ExpectFixedPointIsTheScaledDft<int32_t>(1 << 30, 6);
}

TEST(SignalFft, Int16MixedRadixIsTheScaledDft) {
  ExpectFixedPointIsTheScaledDft<int16_t>(16000, 6);
}

// SignalRfft over rows of `length` samples, fft_length `fft_length`, compiled and run once.
runtime::testing::PteRun RunRfft(int32_t rows, int32_t length, int32_t fft_length,
                                 const std::vector<int16_t>& samples) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {rows, length}, TflType::kInt16);
  const int out = b.AddTensor("output", {rows, fft_length + 2}, TflType::kInt16);
  b.AddCustomOperator("SignalRfft", {in}, {out},
                      IntMapFlexbuffer({{"T", 7}, {"fft_length", fft_length}}));
  b.SetInputs({in});
  b.SetOutputs({out});
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(b.Finish(), {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {runtime::Error::kInternal, "compile failed", {}, {}};
  return runtime::testing::RunPte(compiled->pte, {tflm_reference::BytesOf(samples)});
}

// Rows shorter than fft_length are zero padded, row by row: two rows of 40 samples give the
// transforms of the same rows padded to 64 by hand.
TEST(SignalFft, ShortRowsAreZeroPadded) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-20000, 20000);
  std::vector<int16_t> rows(80), padded(128, 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i] = static_cast<int16_t>(d(rng));
    padded[i / 40 * 64 + i % 40] = rows[i];
  }
  const auto short_rows = RunRfft(2, 40, 64, rows);
  const auto full_rows = RunRfft(2, 64, 64, padded);
  ASSERT_EQ(short_rows.error, runtime::Error::kOk) << short_rows.message;
  ASSERT_EQ(full_rows.error, runtime::Error::kOk) << full_rows.message;
  EXPECT_EQ(short_rows.outputs, full_rows.outputs);
  EXPECT_NE(tflm_reference::ValuesOf<int16_t>(full_rows.outputs[0])[0], 0);
}

}  // namespace
}  // namespace boardlab
