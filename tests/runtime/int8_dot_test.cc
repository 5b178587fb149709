// The inner loops shared by the conv-like kernels (int8_dot.h, requantize_s8.h) and ADD's element
// loop (add_s8.h) against plain
// scalar definitions, on shapes that reach every tail and on extreme values. The AVX2 paths run
// when the CPU has AVX2; ctest also runs this suite with BOARDLAB_NO_AVX2=1 (the SSE2 baseline).

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/requantize_s8.h"

namespace boardlab::runtime::kernels {
namespace {

std::vector<int8_t> RandomS8(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<int16_t> RandomWidened(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-255, 255);
  std::vector<int16_t> v(n);
  for (auto& x : v) x = static_cast<int16_t>(d(rng));
  return v;
}

TEST(KernelInnerLoops, DotTileMatchesScalarOnEveryTileAndTail) {
  std::mt19937 rng(7);
  for (const int32_t chunk_stride : {8, 64}) {
    for (const int32_t k : {0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 40, 64, 100, 264}) {
      const int32_t chunks = (k + 7) / 8;
      // Row r's chunk j at r * row_stride + j * chunk_stride (row_stride 8 for blocked rows).
      const int32_t row_stride = chunk_stride == 8 ? k : 8;
      const auto w = RandomS8(rng, static_cast<size_t>(4 * row_stride + chunks * chunk_stride + 8));
      const int32_t x_stride = k + 3;
      const auto x = RandomWidened(rng, static_cast<size_t>(4 * x_stride + 8));
      auto paired = x;
      for (int32_t p = 0; p < kDotMaxPixels; ++p) PairQuadsForDot(paired.data() + p * x_stride, k);
      for (int32_t rows = 1; rows <= kDotMaxRows; ++rows) {
        for (int32_t pixels = 1; pixels <= kDotMaxPixels; ++pixels) {
          int32_t out[(kDotMaxRows + 1) * kDotMaxPixels];
          DotTile(w.data(), row_stride, chunk_stride, rows, paired.data(), x_stride, pixels, k, out,
                  rows + 1);
          for (int32_t p = 0; p < pixels; ++p) {
            for (int32_t r = 0; r < rows; ++r) {
              int32_t want = 0;
              for (int32_t i = 0; i < k; ++i) {
                want += w[r * row_stride + (i / 8) * chunk_stride + i % 8] * x[p * x_stride + i];
              }
              ASSERT_EQ(out[p * (rows + 1) + r], want)
                  << "k " << k << " chunk_stride " << chunk_stride << " tile " << rows << "x"
                  << pixels;
            }
          }
        }
      }
    }
  }
}

// DotTiles on plain rows (k_last < k, as the conv's padded rows use it) and on 8x8 blocks.
TEST(KernelInnerLoops, DotTilesMatchesScalarOnPlainAndBlockedRows) {
  std::mt19937 rng(9);
  for (const bool blocked : {false, true}) {
    for (const int32_t k_last : {1, 8, 27, 40, 72}) {
      const int32_t k = blocked ? (k_last + 7) / 8 * 8 : k_last + 5;
      for (const int32_t rows : {1, 2, 3, 8, 9, 16, 17}) {
        const int32_t row_stride = blocked ? 8 : k_last;
        const int32_t chunk_stride = blocked ? 64 : 8;
        const int32_t chunks = (k + 7) / 8;
        const int32_t block_stride = blocked ? chunks * 64 : 8 * row_stride;
        const auto w = RandomS8(rng, static_cast<size_t>((rows + 8) * (k + 8) + chunks * 64));
        const int32_t x_stride = k + 8;
        auto x = RandomWidened(rng, static_cast<size_t>(kDotMaxPixels * x_stride));
        // Past k_last the inputs are zero (the conv's padding), so every row may read up to k.
        for (int32_t p = 0; p < kDotMaxPixels; ++p) {
          for (int32_t i = k_last; i < x_stride; ++i) x[p * x_stride + i] = 0;
        }
        auto paired = x;
        for (int32_t p = 0; p < kDotMaxPixels; ++p) {
          PairQuadsForDot(paired.data() + p * x_stride, k_last);
        }
        for (int32_t pixels = 1; pixels <= kDotMaxPixels; ++pixels) {
          std::vector<int32_t> out(static_cast<size_t>(pixels * (rows + 1)));
          DotTiles(w.data(), block_stride, row_stride, chunk_stride, rows, paired.data(), x_stride,
                   pixels, kDotPairsQuads ? k_last : k, k_last, out.data(), rows + 1);
          for (int32_t p = 0; p < pixels; ++p) {
            for (int32_t r = 0; r < rows; ++r) {
              int32_t want = 0;
              for (int32_t i = 0; i < k_last; ++i) {
                want += w[(r / 8) * block_stride + (r % 8) * row_stride + (i / 8) * chunk_stride +
                          i % 8] *
                        x[p * x_stride + i];
              }
              ASSERT_EQ(out[p * (rows + 1) + r], want)
                  << "blocked " << blocked << " k_last " << k_last << " rows " << rows << " pixels "
                  << pixels;
            }
          }
        }
      }
    }
  }
}

TEST(KernelInnerLoops, DotTilesPackedMatchesScalar) {
  std::mt19937 rng(13);
  for (const int32_t k : {1, 2, 7, 8, 9, 16, 27, 33, 64}) {
    for (const int32_t rows : {1, 7, 8, 9, 16, 17, 24, 40}) {
      const int32_t row_stride = k + 3;
      const auto w = RandomS8(rng, static_cast<size_t>(rows * row_stride));
      std::vector<int16_t> packed(PackedRowsElements(rows, k));
      PackRowsForDot(w.data(), 8 * row_stride, row_stride, 8, rows, k, packed.data());
      const int32_t x_stride = k + 1;  // x[k] readable for odd k
      const auto x = RandomWidened(rng, static_cast<size_t>(kDotMaxPixels * x_stride));
      for (int32_t pixels = 1; pixels <= kDotMaxPixels; ++pixels) {
        std::vector<int32_t> out(static_cast<size_t>(pixels * (rows + 1)), -1);
        DotTilesPacked(packed.data(), rows, k, x.data(), x_stride, pixels, out.data(), rows + 1);
        for (int32_t p = 0; p < pixels; ++p) {
          for (int32_t r = 0; r < rows; ++r) {
            int32_t want = 0;
            for (int32_t i = 0; i < k; ++i) want += w[r * row_stride + i] * x[p * x_stride + i];
            ASSERT_EQ(out[p * (rows + 1) + r], want) << "k " << k << " rows " << rows;
          }
          ASSERT_EQ(out[p * (rows + 1) + rows], -1) << "wrote past the rows";
        }
      }
    }
  }
}

TEST(KernelInnerLoops, DepthwiseDotTapsMatchesScalar) {
  std::mt19937 rng(11);
  for (const int32_t channels : {1, 7, 8, 16, 24, 31, 32, 40, 57, 96}) {
    for (const int32_t taps : {0, 1, 4, 9}) {
      for (const int32_t offset : {-127, 0, 5, 128}) {
        std::vector<std::vector<int8_t>> xd, wd;
        std::vector<const int8_t*> xs, ws;
        for (int32_t t = 0; t < taps; ++t) {
          xd.push_back(RandomS8(rng, static_cast<size_t>(channels)));
          wd.push_back(RandomS8(rng, static_cast<size_t>(channels)));
        }
        for (int32_t t = 0; t < taps; ++t) {
          xs.push_back(xd[t].data());
          ws.push_back(wd[t].data());
        }
        std::vector<int32_t> acc(static_cast<size_t>(channels));
        DepthwiseDotTaps(xs.data(), ws.data(), taps, channels, offset, acc.data());
        for (int32_t c = 0; c < channels; ++c) {
          int32_t want = 0;
          for (int32_t t = 0; t < taps; ++t) want += wd[t][c] * (xd[t][c] + offset);
          ASSERT_EQ(acc[c], want) << "channel " << c << " of " << channels << ", taps " << taps;
        }
      }
    }
  }
}

TEST(KernelInnerLoops, RequantizeChannelsMatchesScalarOnExtremes) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> any(kInt32Min, kInt32Max);
  std::uniform_int_distribution<int32_t> small(-(1 << 20), 1 << 20);
  std::uniform_int_distribution<int32_t> mult_d(1 << 30, kInt32Max);
  std::uniform_int_distribution<int32_t> shift_d(-31, 8);
  const int32_t edges[] = {kInt32Min, kInt32Min + 1, -1, 0, 1, kInt32Max - 1, kInt32Max};
  for (int round = 0; round < 200; ++round) {
    const int32_t n = 1 + round % 45;
    std::vector<int32_t> acc(n), bias(n), mult(n), shift(n);
    for (int32_t c = 0; c < n; ++c) {
      const bool edge = (round + c) % 5 == 0;
      acc[c] = edge ? edges[(round + c) % 7] : (round % 2 != 0 ? any(rng) : small(rng));
      bias[c] = edge ? edges[(round * 3 + c) % 7] : small(rng);
      mult[c] = (round + c) % 17 == 0 ? 0 : mult_d(rng);
      shift[c] = (round + c) % 13 == 0 ? -31 : shift_d(rng);
    }
    if (round % 10 == 9) mult[n / 2] = -mult[n / 2];  // the scalar fallback
    const bool saturate = round % 3 != 0;
    OutputStage o;
    o.output_offset = round % 2 != 0 ? -128 : 17;
    o.act_min = round % 4 == 0 ? -128 : -20;
    o.act_max = round % 4 == 0 ? 127 : 90;
    std::vector<int8_t> y(n);
    requantize_channels_s8(acc.data(), round % 6 == 5 ? nullptr : bias.data(), mult.data(),
                           shift.data(), n, o, saturate, y.data());
    for (int32_t c = 0; c < n; ++c) {
      const int32_t b = round % 6 == 5 ? 0 : bias[c];
      int64_t sum = int64_t{acc[c]} + b;
      if (saturate) sum = sum < kInt32Min ? kInt32Min : (sum > kInt32Max ? kInt32Max : sum);
      const int32_t v = MultiplyByQuantizedMultiplier(
          static_cast<int32_t>(static_cast<uint32_t>(sum)), mult[c], shift[c]);
      const int64_t z = int64_t{v} + o.output_offset;
      const int8_t want = static_cast<int8_t>(z < o.act_min   ? o.act_min
                                              : z > o.act_max ? o.act_max
                                                              : z);
      ASSERT_EQ(y[c], want) << "round " << round << " channel " << c << " acc " << acc[c]
                            << " bias " << b << " mult " << mult[c] << " shift " << shift[c];
    }
  }
}

// DotRowsX4 reads four patches interleaved by (paired) quads.
TEST(KernelInnerLoops, DotRowsX4MatchesScalar) {
  std::mt19937 rng(13);
  for (const int32_t quads : {1, 2, 7, 16}) {
    for (const int32_t rows : {1, 3, 8}) {
      const int32_t k = 4 * quads;
      const auto w = RandomS8(rng, static_cast<size_t>(rows * k));
      const auto x = RandomWidened(rng, static_cast<size_t>(kDotX4Pixels * k));
      std::vector<int16_t> x4(x.size());
      for (int32_t p = 0; p < kDotX4Pixels; ++p) {
        std::vector<int16_t> row(x.begin() + p * k, x.begin() + (p + 1) * k);
        PairQuadsForDot(row.data(), k);
        for (int32_t q = 0; q < quads; ++q) {
          for (int32_t j = 0; j < 4; ++j) x4[(q * kDotX4Pixels + p) * 4 + j] = row[q * 4 + j];
        }
      }
      std::vector<int32_t> acc(static_cast<size_t>(rows * kDotX4Pixels));
      DotRowsX4(w.data(), x4.data(), quads, rows, acc.data());
      for (int32_t r = 0; r < rows; ++r) {
        for (int32_t p = 0; p < kDotX4Pixels; ++p) {
          int32_t want = 0;
          for (int32_t i = 0; i < k; ++i) want += w[r * k + i] * x[p * k + i];
          ASSERT_EQ(acc[r * kDotX4Pixels + p], want) << "quads " << quads << " row " << r;
        }
      }
    }
  }
}

// The Cortex-M depthwise path (SMLAD on pairs of horizontal taps, portable DSP emulation here)
// equals the reference loop: strides, padding on every side, odd and even kernel widths, batches,
// with and without bias, full and clamped activation ranges.
TEST(KernelInnerLoops, DepthwisePairedMatchesReference) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int32_t> mult_d(1 << 30, kInt32Max);
  std::uniform_int_distribution<int32_t> shift_d(-12, -1);
  std::uniform_int_distribution<int32_t> bias_d(-5000, 5000);
  struct Shape {
    int32_t h, w, c, kh, kw, stride, pad_top, pad_left;
  };
  const Shape shapes[] = {{5, 5, 4, 3, 3, 1, 1, 1},  {25, 5, 64, 3, 3, 1, 1, 1},
                          {9, 8, 8, 3, 3, 2, 0, 0},  {9, 8, 8, 3, 3, 2, 1, 1},
                          {6, 7, 12, 5, 5, 1, 2, 2}, {4, 6, 4, 2, 2, 1, 0, 0},
                          {7, 3, 8, 1, 3, 1, 0, 1},  {3, 3, 4, 3, 3, 1, 1, 1}};
  int round = 0;
  for (const Shape& s : shapes) {
    for (int variant = 0; variant < 4; ++variant, ++round) {
      const Dims4 in{variant == 3 ? 2 : 1, s.h, s.w, s.c};
      const Dims4 f{1, s.kh, s.kw, s.c};
      DepthwiseConvParams dp;
      ConvParams& p = dp.conv;
      p.stride_h = p.stride_w = s.stride;
      p.pad_top = s.pad_top;
      p.pad_left = s.pad_left;
      p.input_offset = variant == 1 ? -127 : (variant == 2 ? 128 : 5);
      p.out.output_offset = variant == 0 ? -128 : 9;
      p.out.act_min = variant % 2 == 0 ? -128 : -100;
      p.out.act_max = variant % 2 == 0 ? 127 : 90;
      const int32_t oh = (s.h + 2 * s.pad_top - s.kh) / s.stride + 1;
      const int32_t ow = (s.w + 2 * s.pad_left - s.kw) / s.stride + 1;
      const Dims4 out{in.n, oh, ow, s.c};
      const auto input = RandomS8(rng, static_cast<size_t>(in.Size()));
      const auto filter = RandomS8(rng, static_cast<size_t>(f.Size()));
      std::vector<int32_t> bias(s.c), mult(s.c), shift(s.c);
      for (int32_t c = 0; c < s.c; ++c) {
        bias[c] = bias_d(rng);
        mult[c] = mult_d(rng);
        // Channel 6 of every third round: a tiny scale, outside RightShiftRequant's range.
        shift[c] = c == 6 && round % 3 == 0 ? -28 : shift_d(rng) - 4;
      }
      const ChannelQuant q{mult.data(), shift.data(), variant == 2 ? 1 : s.c};
      const int32_t* b = variant == 1 ? nullptr : bias.data();
      std::vector<int8_t> want(static_cast<size_t>(out.Size())), got(want.size(), 7);
      std::vector<int32_t> acc(static_cast<size_t>(s.c));
      ASSERT_EQ(depthwise_conv2d_s8(dp, q, in, input.data(), f, filter.data(), b, out, want.data(),
                                    acc.data(), acc.size() * 4),
                Error::kOk);
      std::vector<uint64_t> scratch(1 << 16);
      ASSERT_EQ(DepthwiseConv2DPairedForTest(dp, q, in, input.data(), f, filter.data(), b, out,
                                             got.data(), scratch.data(), scratch.size() * 8),
                Error::kOk);
      ASSERT_EQ(got, want) << "shape " << s.h << "x" << s.w << "x" << s.c << " kernel " << s.kh
                           << "x" << s.kw << " variant " << variant;
    }
  }
}

// DotRowsX4Requant equals DotRowsX4, the bias and RightShiftRequant with int8 saturation.
TEST(KernelInnerLoops, DotRowsX4RequantMatchesUnfused) {
  std::mt19937 rng(19);
  std::uniform_int_distribution<int32_t> mult_d(1 << 30, kInt32Max);
  std::uniform_int_distribution<int32_t> shift_d(-12, -1);
  std::uniform_int_distribution<int32_t> bias_d(-20000, 20000);
  for (const int32_t quads : {1, 2, 16}) {
    const int32_t rows = 12, k = 4 * quads, y_stride = rows + 3;
    const auto w = RandomS8(rng, static_cast<size_t>(rows * k));
    const auto x4 = RandomWidened(rng, static_cast<size_t>(kDotX4Pixels * k));
    std::vector<X4RowRequant> table(rows);
    std::vector<RightShiftRequant> q(rows);
    for (int32_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(MakeRightShiftRequant(mult_d(rng), shift_d(rng), r * 20 - 128, &q[r]));
      table[r] = {bias_d(rng), q[r].multiplier, q[r].round_lo, q[r].round_hi, q[r].shift};
    }
    std::vector<int32_t> acc(static_cast<size_t>(rows * kDotX4Pixels));
    DotRowsX4(w.data(), x4.data(), quads, rows, acc.data());
    std::vector<int8_t> got(static_cast<size_t>(kDotX4Pixels * y_stride), 7), want = got;
    DotRowsX4Requant(w.data(), x4.data(), quads, rows, table.data(), got.data(), y_stride);
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t p = 0; p < kDotX4Pixels; ++p) {
        const int32_t a = acc[r * kDotX4Pixels + p] + table[r].bias;
        want[p * y_stride + r] = ClampToInt8(ApplyRightShiftRequant(a, q[r]), -128, 127);
      }
    }
    ASSERT_EQ(got, want) << "quads " << quads;
    // The late offset, with shifts down to -31 (tiny scales).
    for (int32_t r = 0; r < rows; ++r) {
      const int32_t shift = r % 3 == 0 ? -24 - r % 8 : shift_d(rng);
      ASSERT_TRUE(MakeRightShiftRequant(q[r].multiplier, shift, 0, &q[r], false));
      table[r] = {table[r].bias, q[r].multiplier, q[r].round_lo, q[r].round_hi, q[r].shift};
      for (int32_t p = 0; p < kDotX4Pixels; ++p) {
        const int32_t a = acc[r * kDotX4Pixels + p] + table[r].bias;
        want[p * y_stride + r] =
            ClampToInt8(MultiplyByQuantizedMultiplier(a, q[r].multiplier, shift) + 37, -128, 127);
      }
    }
    DotRowsX4Requant(w.data(), x4.data(), quads, rows, table.data(), got.data(), y_stride, true,
                     37);
    ASSERT_EQ(got, want) << "late offset, quads " << quads;
  }
}

// The folded constant of RightShiftRequant equals the reference's two roundings plus the offset
// for every accumulator, including ties of both roundings and the int32 extremes.
TEST(KernelInnerLoops, RightShiftRequantMatchesReference) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> any(kInt32Min, kInt32Max);
  std::uniform_int_distribution<int32_t> small(-(1 << 16), 1 << 16);
  std::uniform_int_distribution<int32_t> mult_d(0, kInt32Max);
  const int32_t edges[] = {kInt32Min, kInt32Min + 1, -1, 0, 1, kInt32Max - 1, kInt32Max};
  RightShiftRequant q;
  EXPECT_FALSE(MakeRightShiftRequant(1 << 30, 0, 0, &q));
  EXPECT_FALSE(MakeRightShiftRequant(1 << 30, -24, 0, &q));
  EXPECT_FALSE(MakeRightShiftRequant(-5, -3, 0, &q));
  for (int round = 0; round < 4000; ++round) {
    const int32_t shift = -1 - round % 23;
    const int32_t mult = round % 50 == 0 ? 0 : round % 7 == 0 ? 1 << 30 : mult_d(rng);
    const int32_t zp = round % 256 - 128;
    ASSERT_TRUE(MakeRightShiftRequant(mult, shift, zp, &q));
    for (int i = 0; i < 64; ++i) {
      int32_t acc = i < 7 ? edges[i] : (i % 2 != 0 ? any(rng) : small(rng));
      // Exact ties of the final shift: acc * mult / 2^31 lands on a half.
      if (i == 8 && mult == 1 << 30) acc = (2 * (round % 100) + 1) << -shift;
      if (i == 9 && mult == 1 << 30) acc = -((2 * (round % 100) + 1) << -shift);
      const int64_t want = int64_t{MultiplyByQuantizedMultiplier(acc, mult, shift)} + zp;
      ASSERT_EQ(ApplyRightShiftRequant(acc, q), want)
          << "acc " << acc << " mult " << mult << " shift " << shift << " zp " << zp;
    }
  }
}

// requantize_pixels_s8 equals requantize_channels_s8 per pixel (strided input and output).
TEST(KernelInnerLoops, RequantizePixelsMatchesPerPixelCalls) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> acc_d(-(1 << 22), 1 << 22);
  std::uniform_int_distribution<int32_t> mult_d(1 << 30, kInt32Max);
  std::uniform_int_distribution<int32_t> shift_d(-12, 2);
  for (const int32_t n : {1, 8, 13, 16, 35}) {
    for (const int32_t pixels : {1, 3, 4}) {
      const int32_t acc_stride = n + 5, y_stride = n + 2;
      std::vector<int32_t> acc(static_cast<size_t>(pixels * acc_stride)), bias(n), mult(n),
          shift(n);
      for (auto& a : acc) a = acc_d(rng);
      for (int32_t c = 0; c < n; ++c) {
        bias[c] = acc_d(rng);
        mult[c] = c == n / 2 && n > 8 ? -mult_d(rng) : mult_d(rng);  // one scalar fallback
        shift[c] = shift_d(rng);
      }
      OutputStage o;
      o.output_offset = -3;
      o.act_min = -100;
      o.act_max = 120;
      std::vector<int8_t> got(static_cast<size_t>(pixels * y_stride), 7), want = got;
      requantize_pixels_s8(acc.data(), acc_stride, bias.data(), mult.data(), shift.data(), n,
                           pixels, o, true, got.data(), y_stride);
      for (int32_t p = 0; p < pixels; ++p) {
        requantize_channels_s8(acc.data() + p * acc_stride, bias.data(), mult.data(), shift.data(),
                               n, o, true, want.data() + p * y_stride);
      }
      ASSERT_EQ(got, want) << "n " << n << " pixels " << pixels;
    }
  }
}

TEST(KernelInnerLoops, ElementwiseAddMatchesScalar) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int32_t> mult_d(1 << 30, kInt32Max);
  for (int round = 0; round < 40; ++round) {
    const int64_t n = 1 + round * 7;
    const auto a = RandomS8(rng, static_cast<size_t>(n));
    const auto b = RandomS8(rng, static_cast<size_t>(n));
    AddParams p;
    // In range as for real models: the scaled-up inputs and the sum fit int32.
    const bool wide = round % 5 == 0;
    p.input1_offset = wide ? 0 : (round % 3 == 0 ? 128 : -5);
    p.input2_offset = wide ? 0 : (round % 4 == 0 ? -127 : 17);
    p.left_shift = wide ? 24 : 20;
    p.input1_multiplier = mult_d(rng);
    p.input1_shift = -(round % 7) - 1;
    p.input2_multiplier = mult_d(rng);
    p.input2_shift = -(round % 5) - 1;
    p.output_multiplier = round % 9 == 8 ? -mult_d(rng) : mult_d(rng);  // the scalar fallback
    p.output_shift = round % 2 == 0 ? -19 : -21 + round % 3;
    p.out.output_offset = round % 2 == 0 ? -128 : 3;
    p.out.act_min = round % 3 == 0 ? -128 : -60;
    p.out.act_max = round % 3 == 0 ? 127 : 70;
    const bool subtract = round % 2 != 0;
    std::vector<int8_t> out(static_cast<size_t>(n));
    elementwise_add_s8(p, subtract, a.data(), b.data(), n, out.data());
    for (int64_t i = 0; i < n; ++i) {
      const int32_t sx = MultiplyByQuantizedMultiplier((a[i] + p.input1_offset) << p.left_shift,
                                                       p.input1_multiplier, p.input1_shift);
      const int32_t sy = MultiplyByQuantizedMultiplier((b[i] + p.input2_offset) << p.left_shift,
                                                       p.input2_multiplier, p.input2_shift);
      const int32_t r = MultiplyByQuantizedMultiplier(subtract ? sx - sy : sx + sy,
                                                      p.output_multiplier, p.output_shift);
      ASSERT_EQ(out[i], ClampToInt8(r + p.out.output_offset, p.out.act_min, p.out.act_max))
          << "round " << round << " element " << i;
    }
  }
}

}  // namespace
}  // namespace boardlab::runtime::kernels
