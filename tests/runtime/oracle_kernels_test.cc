// Conformance of the int8 CPU kernels against the TFLite interpreter (tfjs-tflite under node).
//
// Each case builds a single-op .tflite model, runs it through the interpreter, and runs the same
// op through our registered kernel with the arguments the compiler writes (docs/
// artifact-format.md 2.1, multipliers from compiler/quantization.h). The interpreter requantizes
// in float (XNNPACK) while we follow TFLite Micro's integer double rounding
// (tflite-int8.md section 13), so a difference of exactly 1 LSB is accepted and counted;
// anything larger fails. Each op prints its share of exact elements. Cases whose reference
// differs for another named reason say so where they are declared.

#include <cmath>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/quantization.h"
#include "gtest/gtest.h"
#include "tests/runtime/kernel_test_util.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using runtime::Error;
using runtime::ScalarType;
using runtime::testing::KernelArgs;
using runtime::testing::RunKernel;
using testing::OracleCase;
using testing::PerTensor;
using testing::QuantParams;
using testing::TfliteBuilder;
using testing::TflType;

std::vector<int8_t> RandomActs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<int8_t> RandomWeights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed * 7919u + 17u);
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<uint8_t> Bytes(const std::vector<int8_t>& v) { return {v.begin(), v.end()}; }

int64_t Count(const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// One model run by both sides.
struct Case {
  std::string name;
  OracleCase oracle;
  std::vector<int8_t> ours;
  int max_diff = 1;  // 1: float vs integer requantization (section 13)
};

// Runs the oracle on all cases of one op and compares element by element.
void CompareWithOracle(const char* op, std::vector<Case>& cases) {
  std::vector<OracleCase> oracle;
  for (const Case& c : cases) oracle.push_back(c.oracle);
  std::vector<std::vector<uint8_t>> outputs;
  std::string error;
  ASSERT_TRUE(testing::RunTfliteOracle(oracle, &outputs, &error)) << op << ": " << error;
  int64_t total = 0, exact = 0, off_by_one = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    ASSERT_EQ(outputs[i].size(), c.ours.size()) << op << " " << c.name;
    int shown = 0;
    for (size_t k = 0; k < c.ours.size(); ++k) {
      const int ref = static_cast<int8_t>(outputs[i][k]);
      const int diff = std::abs(ref - c.ours[k]);
      ++total;
      if (diff == 0) ++exact;
      if (diff == 1) ++off_by_one;
      if (diff > c.max_diff && shown++ < 5) {
        ADD_FAILURE() << op << " " << c.name << ": element " << k << " ours " << int{c.ours[k]}
                      << " TFLite " << ref;
      }
    }
  }
  std::printf("[ oracle   ] %-24s %6.2f%% exact of %lld elements, %lld off by 1 LSB (%zu cases)\n",
              op, total ? 100.0 * exact / total : 0.0, static_cast<long long>(total),
              static_cast<long long>(off_by_one), cases.size());
}

class OracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  }
};

// ---------------------------------------------------------------------------------------------
// CONV_2D / DEPTHWISE_CONV_2D
// ---------------------------------------------------------------------------------------------

struct ConvCase {
  std::string name;
  bool depthwise = false;
  int32_t h = 8, w = 8, c = 3, oc = 4, kh = 3, kw = 3, multiplier = 1;
  compiler::Padding padding = compiler::Padding::kSame;
  int32_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  compiler::Activation act = compiler::Activation::kNone;
  bool per_channel = true, bias = true;
  float in_scale = 0.05f;
  int64_t in_zp = -3, out_zp = 5;
};

int32_t OutSize(compiler::Padding p, int32_t in, int32_t k, int32_t stride, int32_t dil) {
  const int32_t ef = (k - 1) * dil + 1;
  return p == compiler::Padding::kSame ? (in + stride - 1) / stride : (in + stride - ef) / stride;
}

int32_t PadBefore(compiler::Padding p, int32_t in, int32_t out, int32_t k, int32_t stride,
                  int32_t dil) {
  if (p != compiler::Padding::kSame) return 0;
  const int32_t ef = (k - 1) * dil + 1;
  return std::max(0, (out - 1) * stride + ef - in) / 2;
}

Case MakeConvCase(const ConvCase& p, uint32_t seed) {
  const int32_t oc = p.depthwise ? p.c * p.multiplier : p.oc;
  const int32_t oh = OutSize(p.padding, p.h, p.kh, p.stride_h, p.dil_h);
  const int32_t ow = OutSize(p.padding, p.w, p.kw, p.stride_w, p.dil_w);
  const int32_t depth = p.depthwise ? 1 : p.c;
  std::vector<float> w_scales;
  for (int32_t i = 0; i < (p.per_channel ? oc : 1); ++i)
    w_scales.push_back(0.004f * (1 + 0.15f * i));
  // Output scale keeps typical outputs inside int8 without saturating most of them.
  const float out_scale =
      p.in_scale * w_scales[0] * 135.0f * std::sqrt(static_cast<float>(p.kh * p.kw * depth));
  const std::vector<int32_t> w_shape = p.depthwise ? std::vector<int32_t>{1, p.kh, p.kw, oc}
                                                   : std::vector<int32_t>{oc, p.kh, p.kw, p.c};
  const std::vector<int8_t> weights = RandomWeights(Count(w_shape), seed);
  std::vector<int32_t> bias(oc);
  std::mt19937 rng(seed);
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  const std::vector<int8_t> input = RandomActs(static_cast<size_t>(p.h) * p.w * p.c, seed + 100);

  TfliteBuilder b;
  const int in =
      b.AddTensor("in", {1, p.h, p.w, p.c}, TflType::kInt8, PerTensor(p.in_scale, p.in_zp));
  QuantParams wq{w_scales, std::vector<int64_t>(w_scales.size(), 0), p.depthwise ? 3 : 0};
  const int wt = b.AddConstInt8("w", w_shape, weights, wq);
  std::vector<float> b_scales;
  for (float s : w_scales) b_scales.push_back(s * p.in_scale);
  // The interpreter rejects an absent conv bias ("Tensor at index 2 was optional but was
  // expected"), so a no-bias case gives it zeros while our kernel gets Null.
  if (!p.bias) std::fill(bias.begin(), bias.end(), 0);
  const int bt =
      b.AddConstInt32("b", {oc}, bias, {b_scales, std::vector<int64_t>(b_scales.size(), 0), 0});
  const int out =
      b.AddTensor("out", {1, oh, ow, oc}, TflType::kInt8, PerTensor(out_scale, p.out_zp));
  if (p.depthwise) {
    b.AddOperator(4, {in, wt, bt}, {out},
                  testing::DepthwiseConv2DOpts{p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h,
                                               p.multiplier, p.act});
  } else {
    b.AddOperator(3, {in, wt, bt}, {out},
                  testing::Conv2DOpts{p.padding, p.stride_w, p.stride_h, p.dil_w, p.dil_h, p.act});
  }
  b.SetInputs({in});
  b.SetOutputs({out});

  // Our side, argument for argument as the PTE writer emits them.
  std::vector<int32_t> mults, shifts;
  for (float s : w_scales) {
    const compiler::QuantizedMultiplier qm = compiler::QuantizeMultiplier(
        static_cast<double>(p.in_scale) * static_cast<double>(s) / static_cast<double>(out_scale));
    mults.push_back(qm.multiplier);
    shifts.push_back(qm.shift);
  }
  const compiler::ActivationRange r = compiler::ComputeActivationRange(p.act, out_scale, p.out_zp);
  const int32_t top = PadBefore(p.padding, p.h, oh, p.kh, p.stride_h, p.dil_h);
  const int32_t left = PadBefore(p.padding, p.w, ow, p.kw, p.stride_w, p.dil_w);
  std::vector<int8_t> ours(static_cast<size_t>(oh) * ow * oc);
  std::vector<int8_t> in_copy = input, w_copy = weights;
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {1, p.h, p.w, p.c}, in_copy.data());
  a.Tensor(ScalarType::kChar, w_shape, w_copy.data());
  if (p.bias) {
    a.Tensor(ScalarType::kInt, {oc}, bias.data());
  } else {
    a.Null();
  }
  a.IntList({p.stride_h, p.stride_w});
  a.IntList({top, left, 0, 0});
  a.IntList({p.dil_h, p.dil_w});
  if (p.depthwise) a.Int(p.multiplier);
  a.Int(p.in_zp);
  a.Int(p.out_zp);
  a.Tensor(ScalarType::kInt, {static_cast<int32_t>(mults.size())}, mults.data());
  a.Tensor(ScalarType::kInt, {static_cast<int32_t>(shifts.size())}, shifts.data());
  a.Int(r.min);
  a.Int(r.max);
  a.Tensor(ScalarType::kChar, {1, oh, ow, oc}, ours.data());
  const Error e =
      RunKernel(p.depthwise ? "boardlab::depthwise_conv_2d.out" : "boardlab::conv_2d.out", a);
  EXPECT_EQ(e, Error::kOk) << p.name << ": " << runtime::LastErrorMessage();
  return Case{p.name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(input)}}, ours};
}

TEST_F(OracleTest, Conv2D) {
  using compiler::Activation;
  using compiler::Padding;
  std::vector<ConvCase> configs = {
      {.name = "per-channel SAME s1"},
      {.name = "per-tensor VALID s2 odd",
       .h = 9,
       .w = 7,
       .c = 5,
       .oc = 6,
       .padding = Padding::kValid,
       .stride_h = 2,
       .stride_w = 2,
       .per_channel = false},
      {.name = "SAME s2 dilation2 RELU6",
       .h = 11,
       .w = 10,
       .c = 4,
       .oc = 3,
       .stride_h = 2,
       .stride_w = 1,
       .dil_h = 2,
       .dil_w = 2,
       .act = Activation::kRelu6},
      {.name = "1x5 kernel RELU no bias",
       .h = 6,
       .w = 12,
       .c = 8,
       .oc = 7,
       .kh = 1,
       .kw = 5,
       .act = Activation::kRelu,
       .bias = false},
      {.name = "1x1 input zp -128",
       .h = 5,
       .w = 5,
       .c = 16,
       .oc = 8,
       .kh = 1,
       .kw = 1,
       .in_scale = 0.02f,
       .in_zp = -128,
       .out_zp = -20},
  };
  std::vector<Case> cases;
  for (const ConvCase& c : configs) {
    for (uint32_t seed : {1u, 2u, 3u}) cases.push_back(MakeConvCase(c, seed));
  }
  CompareWithOracle("CONV_2D", cases);
}

TEST_F(OracleTest, DepthwiseConv2D) {
  using compiler::Activation;
  using compiler::Padding;
  std::vector<ConvCase> configs = {
      {.name = "m1 SAME s1", .depthwise = true, .c = 8},
      {.name = "m2 VALID s2 odd",
       .depthwise = true,
       .h = 9,
       .w = 7,
       .c = 3,
       .multiplier = 2,
       .padding = Padding::kValid,
       .stride_h = 2,
       .stride_w = 2},
      {.name = "m1 SAME s2 dilation2 RELU",
       .depthwise = true,
       .h = 12,
       .w = 12,
       .c = 5,
       .stride_h = 2,
       .stride_w = 2,
       .dil_h = 2,
       .dil_w = 2,
       .act = Activation::kRelu},
      {.name = "m3 5x5 RELU6 no bias",
       .depthwise = true,
       .h = 7,
       .w = 9,
       .c = 2,
       .kh = 5,
       .kw = 5,
       .multiplier = 3,
       .act = Activation::kRelu6,
       .bias = false},
  };
  std::vector<Case> cases;
  for (const ConvCase& c : configs) {
    for (uint32_t seed : {4u, 5u, 6u}) cases.push_back(MakeConvCase(c, seed));
  }
  CompareWithOracle("DEPTHWISE_CONV_2D", cases);
}

// ---------------------------------------------------------------------------------------------
// FULLY_CONNECTED
// ---------------------------------------------------------------------------------------------

Case MakeFcCase(const std::string& name, std::vector<int32_t> in_shape, int32_t units,
                compiler::Activation act, bool keep_num_dims, uint32_t seed) {
  const int32_t depth = in_shape.back();
  const int64_t batches = Count(in_shape) / depth;
  const float in_scale = 0.04f, w_scale = 0.005f;
  const int64_t in_zp = 7, out_zp = -9;
  const float out_scale = in_scale * w_scale * 135.0f * std::sqrt(static_cast<float>(depth));
  const std::vector<int8_t> weights = RandomWeights(static_cast<size_t>(units) * depth, seed);
  std::vector<int32_t> bias(units);
  std::mt19937 rng(seed);
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 4001) - 2000;
  const std::vector<int8_t> input = RandomActs(Count(in_shape), seed + 50);
  std::vector<int32_t> out_shape;
  if (keep_num_dims) {
    out_shape = in_shape;
    out_shape.back() = units;
  } else {
    out_shape = {static_cast<int32_t>(batches), units};
  }
  TfliteBuilder b;
  const int in = b.AddTensor("in", in_shape, TflType::kInt8, PerTensor(in_scale, in_zp));
  const int wt = b.AddConstInt8("w", {units, depth}, weights, PerTensor(w_scale, 0));
  const int bt = b.AddConstInt32("b", {units}, bias, PerTensor(in_scale * w_scale, 0));
  const int out = b.AddTensor("out", out_shape, TflType::kInt8, PerTensor(out_scale, out_zp));
  b.AddOperator(9, {in, wt, bt}, {out}, testing::FullyConnectedOpts{act, keep_num_dims});
  b.SetInputs({in});
  b.SetOutputs({out});

  const compiler::QuantizedMultiplier qm =
      compiler::QuantizeMultiplier(static_cast<double>(in_scale) * static_cast<double>(w_scale) /
                                   static_cast<double>(out_scale));
  int32_t mult = qm.multiplier, shift = qm.shift;
  const compiler::ActivationRange r = compiler::ComputeActivationRange(act, out_scale, out_zp);
  std::vector<int8_t> ours(static_cast<size_t>(batches) * units);
  std::vector<int8_t> in_copy = input, w_copy = weights;
  KernelArgs a;
  a.Tensor(ScalarType::kChar, in_shape, in_copy.data());
  a.Tensor(ScalarType::kChar, {units, depth}, w_copy.data());
  a.Tensor(ScalarType::kInt, {units}, bias.data());
  a.Int(in_zp);
  a.Int(out_zp);
  a.Tensor(ScalarType::kInt, {1}, &mult);
  a.Tensor(ScalarType::kInt, {1}, &shift);
  a.Int(r.min);
  a.Int(r.max);
  a.Bool(keep_num_dims);
  a.Tensor(ScalarType::kChar, out_shape, ours.data());
  EXPECT_EQ(RunKernel("boardlab::fully_connected.out", a), Error::kOk)
      << runtime::LastErrorMessage();
  return Case{name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(input)}}, ours};
}

TEST_F(OracleTest, FullyConnected) {
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u, 3u}) {
    cases.push_back(
        MakeFcCase("[1,16]->10", {1, 16}, 10, compiler::Activation::kNone, false, seed));
    cases.push_back(
        MakeFcCase("[3,33]->7 RELU", {3, 33}, 7, compiler::Activation::kRelu, false, seed));
    cases.push_back(MakeFcCase("[1,3,24]->5 keep_num_dims", {1, 3, 24}, 5,
                               compiler::Activation::kNone, true, seed));
  }
  CompareWithOracle("FULLY_CONNECTED", cases);
}

// ---------------------------------------------------------------------------------------------
// ADD / SUB / MUL / MAXIMUM / MINIMUM
// ---------------------------------------------------------------------------------------------

struct Quant {
  float scale;
  int64_t zp;
};

Case MakeBinaryCase(compiler::OpType type, const std::string& name, std::vector<int32_t> as,
                    std::vector<int32_t> bs, std::vector<int32_t> os, Quant qa, Quant qb, Quant qo,
                    compiler::Activation act, uint32_t seed) {
  const std::vector<int8_t> a = RandomActs(Count(as), seed);
  const std::vector<int8_t> bv = RandomActs(Count(bs), seed + 1000);
  TfliteBuilder b;
  const int ta = b.AddTensor("a", as, TflType::kInt8, PerTensor(qa.scale, qa.zp));
  const int tb = b.AddTensor("b", bs, TflType::kInt8, PerTensor(qb.scale, qb.zp));
  const int to = b.AddTensor("out", os, TflType::kInt8, PerTensor(qo.scale, qo.zp));
  b.AddOperator(compiler::OpTypeTfliteCode(type), {ta, tb}, {to},
                type == compiler::OpType::kMaximum || type == compiler::OpType::kMinimum
                    ? testing::BuilderOptions{}
                    : testing::BuilderOptions{testing::ElementwiseOpts{act}});
  b.SetInputs({ta, tb});
  b.SetOutputs({to});

  std::vector<int8_t> ours(Count(os));
  std::vector<int8_t> a_copy = a, b_copy = bv;
  KernelArgs k;
  k.Tensor(ScalarType::kChar, as, a_copy.data());
  k.Tensor(ScalarType::kChar, bs, b_copy.data());
  const compiler::ActivationRange r = compiler::ComputeActivationRange(act, qo.scale, qo.zp);
  const char* kernel = nullptr;
  if (type == compiler::OpType::kMul) {
    const compiler::MulParams p =
        compiler::ComputeMulParams(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp);
    for (int64_t v :
         {int64_t{p.input1_offset}, int64_t{p.input2_offset}, int64_t{p.output_offset},
          int64_t{p.output.multiplier}, int64_t{p.output.shift}, int64_t{r.min}, int64_t{r.max}}) {
      k.Int(v);
    }
    kernel = "boardlab::mul.out";
  } else if (type == compiler::OpType::kAdd || type == compiler::OpType::kSub) {
    const compiler::AddSubParams p =
        type == compiler::OpType::kSub
            ? compiler::ComputeSubParams(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp)
            : compiler::ComputeAddSubParams(qa.scale, qa.zp, qb.scale, qb.zp, qo.scale, qo.zp);
    for (int64_t v : {p.input1_offset, p.input2_offset, p.output_offset, p.left_shift,
                      p.input1.multiplier, p.input1.shift, p.input2.multiplier, p.input2.shift,
                      p.output.multiplier, p.output.shift, r.min, r.max}) {
      k.Int(v);
    }
    kernel = type == compiler::OpType::kAdd ? "boardlab::add.out" : "boardlab::sub.out";
  } else {
    k.IntList({qa.zp, qb.zp, qo.zp});
    k.DoubleList({qa.scale, qb.scale, qo.scale});
    kernel = type == compiler::OpType::kMaximum ? "boardlab::maximum.out" : "boardlab::minimum.out";
  }
  k.Tensor(ScalarType::kChar, os, ours.data());
  EXPECT_EQ(RunKernel(kernel, k), Error::kOk) << name << ": " << runtime::LastErrorMessage();
  return Case{name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(a), Bytes(bv)}}, ours};
}

void BinaryOpTest(compiler::OpType type, const char* label) {
  using compiler::Activation;
  std::vector<Case> cases;
  const Quant q1{0.05f, -3}, q2{0.03f, 10}, qo{0.07f, 2};
  for (uint32_t seed : {1u, 2u, 3u}) {
    cases.push_back(MakeBinaryCase(type, "same shape", {1, 4, 4, 8}, {1, 4, 4, 8}, {1, 4, 4, 8}, q1,
                                   q2, qo, Activation::kNone, seed));
    cases.push_back(MakeBinaryCase(type, "broadcast channel RELU", {1, 4, 5, 8}, {1, 1, 1, 8},
                                   {1, 4, 5, 8}, q1, q2, qo, Activation::kRelu, seed));
    cases.push_back(MakeBinaryCase(type, "4-D two-sided broadcast RELU6", {2, 3, 1, 5},
                                   {1, 1, 4, 1}, {2, 3, 4, 5}, q2, q1, qo, Activation::kRelu6,
                                   seed));
    cases.push_back(MakeBinaryCase(type, "rank 2 vs 1", {6, 7}, {7}, {6, 7}, q1, q1, q2,
                                   Activation::kNone, seed));
  }
  CompareWithOracle(label, cases);
}

TEST_F(OracleTest, Add) { BinaryOpTest(compiler::OpType::kAdd, "ADD"); }
TEST_F(OracleTest, Sub) { BinaryOpTest(compiler::OpType::kSub, "SUB"); }
TEST_F(OracleTest, Mul) { BinaryOpTest(compiler::OpType::kMul, "MUL"); }

TEST_F(OracleTest, MaximumMinimum) {
  for (compiler::OpType type : {compiler::OpType::kMaximum, compiler::OpType::kMinimum}) {
    std::vector<Case> cases;
    const Quant q{0.05f, -3};
    for (uint32_t seed : {1u, 2u}) {
      cases.push_back(MakeBinaryCase(type, "broadcast", {2, 3, 1, 5}, {1, 1, 4, 1}, {2, 3, 4, 5}, q,
                                     q, q, compiler::Activation::kNone, seed));
    }
    CompareWithOracle(compiler::OpTypeName(type), cases);
  }
}

// ---------------------------------------------------------------------------------------------
// Pooling
// ---------------------------------------------------------------------------------------------

Case MakePoolCase(bool average, const std::string& name, int32_t h, int32_t w, int32_t c,
                  int32_t fh, int32_t fw, int32_t sh, int32_t sw, compiler::Padding pad,
                  compiler::Activation act, uint32_t seed) {
  const Quant q{0.05f, -3};
  const int32_t oh = OutSize(pad, h, fh, sh, 1), ow = OutSize(pad, w, fw, sw, 1);
  const std::vector<int8_t> input = RandomActs(static_cast<size_t>(h) * w * c, seed);
  TfliteBuilder b;
  const int in = b.AddTensor("in", {1, h, w, c}, TflType::kInt8, PerTensor(q.scale, q.zp));
  const int out = b.AddTensor("out", {1, oh, ow, c}, TflType::kInt8, PerTensor(q.scale, q.zp));
  b.AddOperator(average ? 1 : 17, {in}, {out}, testing::Pool2DOpts{pad, sw, sh, fw, fh, act});
  b.SetInputs({in});
  b.SetOutputs({out});
  const compiler::ActivationRange r = compiler::ComputeActivationRange(act, q.scale, q.zp);
  std::vector<int8_t> ours(static_cast<size_t>(oh) * ow * c), in_copy = input;
  KernelArgs k;
  k.Tensor(ScalarType::kChar, {1, h, w, c}, in_copy.data());
  k.IntList({sh, sw});
  k.IntList({PadBefore(pad, h, oh, fh, sh, 1), PadBefore(pad, w, ow, fw, sw, 1), 0, 0});
  k.IntList({fh, fw});
  k.Int(r.min);
  k.Int(r.max);
  k.Tensor(ScalarType::kChar, {1, oh, ow, c}, ours.data());
  EXPECT_EQ(RunKernel(average ? "boardlab::average_pool_2d.out" : "boardlab::max_pool_2d.out", k),
            Error::kOk)
      << runtime::LastErrorMessage();
  return Case{name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(input)}}, ours};
}

TEST_F(OracleTest, Pooling) {
  using compiler::Activation;
  using compiler::Padding;
  for (bool average : {true, false}) {
    std::vector<Case> cases;
    for (uint32_t seed : {1u, 2u, 3u}) {
      cases.push_back(MakePoolCase(average, "3x3 s2 SAME", 9, 8, 5, 3, 3, 2, 2, Padding::kSame,
                                   Activation::kNone, seed));
      cases.push_back(MakePoolCase(average, "2x2 s2 VALID RELU", 8, 8, 4, 2, 2, 2, 2,
                                   Padding::kValid, Activation::kRelu, seed));
      cases.push_back(MakePoolCase(average, "global 7x7", 7, 7, 16, 7, 7, 1, 1, Padding::kValid,
                                   Activation::kNone, seed));
      cases.push_back(MakePoolCase(average, "3x2 s1 SAME RELU6", 5, 6, 3, 3, 2, 1, 1,
                                   Padding::kSame, Activation::kRelu6, seed));
    }
    CompareWithOracle(average ? "AVERAGE_POOL_2D" : "MAX_POOL_2D", cases);
  }
}

// ---------------------------------------------------------------------------------------------
// Generic unary ops (quantization lists layout)
// ---------------------------------------------------------------------------------------------

// Builds a one-input op model and runs our kernel with the "every other op" layout: options are
// appended by `options`, then zero points and scales of input and output.
template <typename Options>
Case MakeUnaryCase(int32_t code, const char* kernel, const std::string& name,
                   std::vector<int32_t> shape, Quant qi, Quant qo,
                   testing::BuilderOptions builder_options, Options&& options, uint32_t seed,
                   int max_diff = 1) {
  const std::vector<int8_t> input = RandomActs(Count(shape), seed);
  TfliteBuilder b;
  const int in = b.AddTensor("in", shape, TflType::kInt8, PerTensor(qi.scale, qi.zp));
  const int out = b.AddTensor("out", shape, TflType::kInt8, PerTensor(qo.scale, qo.zp));
  b.AddOperator(code, {in}, {out}, builder_options);
  b.SetInputs({in});
  b.SetOutputs({out});
  std::vector<int8_t> ours(input.size()), in_copy = input;
  KernelArgs k;
  k.Tensor(ScalarType::kChar, shape, in_copy.data());
  options(k);
  k.IntList({qi.zp, qo.zp});
  k.DoubleList({qi.scale, qo.scale});
  k.Tensor(ScalarType::kChar, shape, ours.data());
  EXPECT_EQ(RunKernel(kernel, k), Error::kOk) << name << ": " << runtime::LastErrorMessage();
  return Case{name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(input)}}, ours, max_diff};
}

TEST_F(OracleTest, ReluRelu6) {
  for (bool six : {false, true}) {
    std::vector<Case> cases;
    for (uint32_t seed : {1u, 2u}) {
      for (auto [qi, qo, label] : {std::tuple{Quant{0.05f, -3}, Quant{0.05f, -3}, "same quant"},
                                   std::tuple{Quant{0.05f, -3}, Quant{0.03f, -128}, "rescale"}}) {
        if (six && std::string(label) == "rescale") {
          // TFLite Micro's RELU6 clamps raw input values and ignores the output quantization;
          // we requantize like RELU. Only shared quantization is compared for RELU6.
          continue;
        }
        const compiler::ActivationRange r = compiler::ComputeActivationRange(
            six ? compiler::Activation::kRelu6 : compiler::Activation::kRelu, qo.scale, qo.zp);
        cases.push_back(MakeUnaryCase(
            six ? 21 : 19, six ? "boardlab::relu6.out" : "boardlab::relu.out", label, {1, 6, 6, 8},
            qi, qo, {},
            [&](KernelArgs& k) {
              k.Int(r.min);
              k.Int(r.max);
            },
            seed));
      }
    }
    CompareWithOracle(six ? "RELU6" : "RELU", cases);
  }
}

TEST_F(OracleTest, LeakyRelu) {
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (float alpha : {0.2f, 0.01f}) {
      cases.push_back(MakeUnaryCase(
          98, "boardlab::leaky_relu.out", "alpha " + std::to_string(alpha), {2, 5, 7},
          Quant{0.05f, -3}, Quant{0.04f, 10}, testing::LeakyReluOpts{alpha},
          [&](KernelArgs& k) { k.Double(alpha); }, seed));
    }
  }
  CompareWithOracle("LEAKY_RELU", cases);
}

TEST_F(OracleTest, HardSwish) {
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u, 3u}) {
    cases.push_back(MakeUnaryCase(
        117, "boardlab::hard_swish.out", "scale 0.05 -> 0.03", {1, 8, 8, 4}, Quant{0.05f, -3},
        Quant{0.03f, -50}, {}, [](KernelArgs&) {}, seed));
    cases.push_back(MakeUnaryCase(
        117, "boardlab::hard_swish.out", "scale 0.1 -> 0.05", {64}, Quant{0.1f, 20},
        Quant{0.05f, -100}, {}, [](KernelArgs&) {}, seed));
  }
  CompareWithOracle("HARD_SWISH", cases);
}

TEST_F(OracleTest, QuantizeRequantize) {
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u, 3u}) {
    cases.push_back(MakeUnaryCase(
        114, "boardlab::quantize.out", "0.05,-3 -> 0.02,7", {3, 40}, Quant{0.05f, -3},
        Quant{0.02f, 7}, {}, [](KernelArgs&) {}, seed));
    cases.push_back(MakeUnaryCase(
        114, "boardlab::quantize.out", "0.03,10 -> 0.07,-20", {3, 40}, Quant{0.03f, 10},
        Quant{0.07f, -20}, {}, [](KernelArgs&) {}, seed));
  }
  CompareWithOracle("QUANTIZE (int8->int8)", cases);
}

// LOGISTIC and TANH: fixed output quantization; arguments are the compiler's SigmoidParams.
TEST_F(OracleTest, LogisticTanh) {
  for (bool tanh : {false, true}) {
    std::vector<Case> cases;
    for (uint32_t seed : {1u, 2u, 3u}) {
      for (Quant qi : {Quant{0.05f, -3}, Quant{0.1f, 0}, Quant{0.02f, 20}}) {
        const Quant qo = tanh ? Quant{1.0f / 128, 0} : Quant{1.0f / 256, -128};
        const std::vector<int32_t> shape = {4, 64};
        const std::vector<int8_t> input = RandomActs(Count(shape), seed);
        TfliteBuilder b;
        const int in = b.AddTensor("in", shape, TflType::kInt8, PerTensor(qi.scale, qi.zp));
        const int out = b.AddTensor("out", shape, TflType::kInt8, PerTensor(qo.scale, qo.zp));
        b.AddOperator(tanh ? 28 : 14, {in}, {out});
        b.SetInputs({in});
        b.SetOutputs({out});
        const compiler::SigmoidParams p = compiler::ComputeSigmoidParams(qi.scale, qi.zp);
        std::vector<int8_t> ours(input.size()), in_copy = input;
        KernelArgs k;
        k.Tensor(ScalarType::kChar, shape, in_copy.data());
        for (int64_t v :
             {p.input_zero_point, p.input_multiplier, p.input_left_shift, p.input_range_radius}) {
          k.Int(v);
        }
        k.Tensor(ScalarType::kChar, shape, ours.data());
        EXPECT_EQ(RunKernel(tanh ? "boardlab::tanh.out" : "boardlab::logistic.out", k), Error::kOk);
        // TFLite's int8 LOGISTIC/TANH use a lookup table built in float; TFLite Micro uses the
        // gemmlowp fixed-point functions. Both round the same real value, so they differ by at
        // most 1 LSB near rounding ties.
        cases.push_back(Case{"scale " + std::to_string(qi.scale) + " seed " + std::to_string(seed),
                             {b.Finish(), {Bytes(input)}},
                             ours});
      }
    }
    CompareWithOracle(tanh ? "TANH" : "LOGISTIC", cases);
  }
}

TEST_F(OracleTest, Softmax) {
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (auto [scale, n, beta] : {std::tuple{0.1f, 10, 1.0f}, std::tuple{0.05f, 32, 1.0f},
                                  std::tuple{0.2f, 5, 0.5f}, std::tuple{0.0625f, 1000, 1.0f}}) {
      const std::vector<int32_t> shape = {2, n};
      const std::vector<int8_t> input = RandomActs(Count(shape), seed);
      TfliteBuilder b;
      const int in = b.AddTensor("in", shape, TflType::kInt8, PerTensor(scale, 5));
      const int out = b.AddTensor("out", shape, TflType::kInt8, PerTensor(1.0f / 256, -128));
      b.AddOperator(25, {in}, {out}, testing::SoftmaxOpts{beta});
      b.SetInputs({in});
      b.SetOutputs({out});
      const compiler::SoftmaxParams p = compiler::ComputeSoftmaxParams(beta, scale);
      std::vector<int8_t> ours(input.size()), in_copy = input;
      KernelArgs k;
      k.Tensor(ScalarType::kChar, shape, in_copy.data());
      k.Double(beta);
      k.Int(p.input_multiplier);
      k.Int(p.input_left_shift);
      k.Int(p.diff_min);
      k.Tensor(ScalarType::kChar, shape, ours.data());
      EXPECT_EQ(RunKernel("boardlab::softmax.out", k), Error::kOk) << runtime::LastErrorMessage();
      // TFLite evaluates int8 softmax with a float exp table; TFLite Micro in gemmlowp fixed
      // point: up to 1 LSB apart (the MLPerf ResNet-8 31-LSB gap is a near tie upstream of it).
      cases.push_back(Case{"n " + std::to_string(n) + " seed " + std::to_string(seed),
                           {b.Finish(), {Bytes(input)}},
                           ours});
    }
  }
  CompareWithOracle("SOFTMAX", cases);
}

// MEAN: TFLite Micro folds 1/count into the integer multiplier (a slightly smaller multiplier than
// 1/count exactly) while the TFLite interpreter divides in float; elements where the two round
// differently are allowed 1 LSB.
TEST_F(OracleTest, Mean) {
  std::vector<Case> cases;
  struct MeanCfg {
    std::string name;
    std::vector<int32_t> shape, axes, out_shape;
    bool keep;
    Quant qo;
  };
  const Quant qi{0.05f, -3};
  const std::vector<MeanCfg> cfgs = {
      {"HW keep_dims same quant", {1, 7, 7, 16}, {1, 2}, {1, 1, 1, 16}, true, qi},
      {"HW keep_dims requantized", {1, 7, 7, 16}, {1, 2}, {1, 1, 1, 16}, true, {0.02f, 5}},
      {"HW no keep_dims requantized", {1, 5, 6, 8}, {1, 2}, {1, 8}, false, {0.03f, -10}},
      {"last axis requantized", {2, 3, 10}, {-1}, {2, 3}, false, {0.04f, 1}},
  };
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (const MeanCfg& c : cfgs) {
      const std::vector<int8_t> input = RandomActs(Count(c.shape), seed);
      TfliteBuilder b;
      const int in = b.AddTensor("in", c.shape, TflType::kInt8, PerTensor(qi.scale, qi.zp));
      const int ax = b.AddConstInt32("axes", {static_cast<int32_t>(c.axes.size())}, c.axes);
      const int out =
          b.AddTensor("out", c.out_shape, TflType::kInt8, PerTensor(c.qo.scale, c.qo.zp));
      b.AddOperator(40, {in, ax}, {out}, testing::ReducerOpts{c.keep});
      b.SetInputs({in});
      b.SetOutputs({out});
      std::vector<int8_t> ours(Count(c.out_shape)), in_copy = input;
      std::vector<int32_t> axes = c.axes;
      KernelArgs k;
      k.Tensor(ScalarType::kChar, c.shape, in_copy.data());
      k.Tensor(ScalarType::kInt, {static_cast<int32_t>(axes.size())}, axes.data());
      k.Bool(c.keep);
      k.IntList({qi.zp, 0, c.qo.zp});
      k.DoubleList({qi.scale, 0.0, c.qo.scale});
      k.Tensor(ScalarType::kChar, c.out_shape, ours.data());
      EXPECT_EQ(RunKernel("boardlab::mean.out", k), Error::kOk) << runtime::LastErrorMessage();
      cases.push_back(
          Case{c.name + " seed " + std::to_string(seed), {b.Finish(), {Bytes(input)}}, ours});
    }
  }
  CompareWithOracle("MEAN", cases);
}

// ---------------------------------------------------------------------------------------------
// Layout ops: exact (max_diff 0).
// ---------------------------------------------------------------------------------------------

TEST_F(OracleTest, LayoutOps) {
  const Quant q{0.05f, -3};
  auto run = [&](const char* label, const char* kernel, int32_t code, std::vector<int32_t> in_shape,
                 std::vector<int32_t> out_shape,
                 std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> consts,
                 testing::BuilderOptions opts, auto&& options) {
    std::vector<Case> cases;
    for (uint32_t seed : {1u, 2u}) {
      const std::vector<int8_t> input = RandomActs(Count(in_shape), seed);
      TfliteBuilder b;
      const int in = b.AddTensor("in", in_shape, TflType::kInt8, PerTensor(q.scale, q.zp));
      std::vector<int32_t> ins = {in};
      for (auto& [shape, values] : consts) ins.push_back(b.AddConstInt32("c", shape, values));
      const int out = b.AddTensor("out", out_shape, TflType::kInt8, PerTensor(q.scale, q.zp));
      b.AddOperator(code, ins, {out}, opts);
      b.SetInputs({in});
      b.SetOutputs({out});
      std::vector<int8_t> ours(Count(out_shape)), in_copy = input;
      std::deque<std::vector<int32_t>> const_copies;
      KernelArgs k;
      k.Tensor(ScalarType::kChar, in_shape, in_copy.data());
      std::vector<int64_t> zps = {q.zp};
      std::vector<double> scales = {q.scale};
      for (auto& [shape, values] : consts) {
        k.Tensor(ScalarType::kInt, shape, const_copies.emplace_back(values).data());
        zps.push_back(0);
        scales.push_back(0.0);
      }
      options(k);
      zps.push_back(q.zp);
      scales.push_back(q.scale);
      k.IntList(zps);
      k.DoubleList(scales);
      k.Tensor(ScalarType::kChar, out_shape, ours.data());
      EXPECT_EQ(RunKernel(kernel, k), Error::kOk) << label << ": " << runtime::LastErrorMessage();
      cases.push_back(Case{std::string(label) + " seed " + std::to_string(seed),
                           {b.Finish(), {Bytes(input)}},
                           ours,
                           0});
    }
    CompareWithOracle(label, cases);
  };
  auto none = [](KernelArgs&) {};
  run("TRANSPOSE", "boardlab::transpose.out", 39, {2, 3, 4, 5}, {4, 2, 5, 3}, {{{4}, {2, 0, 3, 1}}},
      {}, none);
  run("PAD", "boardlab::pad.out", 34, {1, 3, 4, 2}, {1, 6, 5, 2},
      {{{4, 2}, {0, 0, 1, 2, 0, 1, 0, 0}}}, {}, none);
  run("SLICE", "boardlab::slice.out", 65, {2, 5, 6, 3}, {1, 3, 4, 3},
      {{{4}, {1, 1, 2, 0}}, {{4}, {1, 3, -1, 3}}}, {}, none);
  run("STRIDED_SLICE", "boardlab::strided_slice.out", 45, {2, 7, 8, 3}, {2, 3, 3, 3},
      {{{4}, {0, 1, -1, 0}}, {{4}, {2, 7, 0, 3}}, {{4}, {1, 2, -3, 1}}},
      testing::StridedSliceOpts{.begin_mask = 1}, [](KernelArgs& k) {
        for (int v : {1, 0, 0, 0, 0}) k.Int(v);
        k.Bool(false);
      });
  run("STRIDED_SLICE shrink", "boardlab::strided_slice.out", 45, {2, 7, 8, 3}, {7, 3},
      {{{4}, {1, 0, 2, 0}}, {{4}, {2, 7, 3, 3}}, {{4}, {1, 1, 1, 1}}},
      testing::StridedSliceOpts{.end_mask = 2, .shrink_axis_mask = 5}, [](KernelArgs& k) {
        for (int v : {0, 2, 0, 0, 5}) k.Int(v);
        k.Bool(false);
      });
  for (auto [align_corners, half_pixel] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    // Copies: clang 14 cannot capture structured bindings in a lambda.
    const bool align = align_corners, half = half_pixel;
    run(align ? "RESIZE_NEAREST align" : (half ? "RESIZE_NEAREST half" : "RESIZE_NEAREST"),
        "boardlab::resize_nearest_neighbor.out", 97, {1, 3, 5, 2}, {1, 7, 8, 2}, {{{2}, {7, 8}}},
        testing::ResizeNearestNeighborOpts{align, half}, [align, half](KernelArgs& k) {
          k.Bool(align);
          k.Bool(half);
        });
  }
}

TEST_F(OracleTest, Concatenation) {
  const Quant q{0.05f, -3};
  std::vector<Case> cases;
  for (uint32_t seed : {1u, 2u}) {
    for (int32_t axis : {3, 1, -1}) {
      std::vector<std::vector<int32_t>> shapes = {{1, 3, 4, 2}, {1, 3, 4, 5}};
      if (axis == 1) shapes = {{1, 3, 4, 2}, {1, 2, 4, 2}};
      std::vector<int32_t> out_shape = shapes[0];
      const int32_t ax = axis < 0 ? axis + 4 : axis;
      out_shape[ax] += shapes[1][ax];
      TfliteBuilder b;
      std::vector<std::vector<int8_t>> inputs;
      std::vector<int32_t> ins;
      for (size_t i = 0; i < shapes.size(); ++i) {
        inputs.push_back(RandomActs(Count(shapes[i]), seed + 10 * i));
        ins.push_back(b.AddTensor("in" + std::to_string(i), shapes[i], TflType::kInt8,
                                  PerTensor(q.scale, q.zp)));
      }
      const int out = b.AddTensor("out", out_shape, TflType::kInt8, PerTensor(q.scale, q.zp));
      b.AddOperator(2, ins, {out}, testing::ConcatenationOpts{axis});
      b.SetInputs(ins);
      b.SetOutputs({out});
      std::vector<int8_t> ours(Count(out_shape));
      KernelArgs k;
      for (size_t i = 0; i < shapes.size(); ++i) {
        k.Tensor(ScalarType::kChar, shapes[i], inputs[i].data());
      }
      k.TensorListOfLast(shapes.size());
      k.Int(axis);
      k.Int(-128);
      k.Int(127);
      k.Tensor(ScalarType::kChar, out_shape, ours.data());
      EXPECT_EQ(RunKernel("boardlab::concatenation.out", k), Error::kOk)
          << runtime::LastErrorMessage();
      cases.push_back(Case{"axis " + std::to_string(axis) + " seed " + std::to_string(seed),
                           {b.Finish(), {Bytes(inputs[0]), Bytes(inputs[1])}},
                           ours,
                           0});
    }
  }
  CompareWithOracle("CONCATENATION", cases);
}

TEST_F(OracleTest, BatchMatMul) {
  std::vector<Case> cases;
  const Quant ql{0.05f, -3}, qr{0.04f, 6}, qo{0.5f, 2};
  for (uint32_t seed : {1u, 2u}) {
    for (auto [adj_x, adj_y] :
         {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
      const int32_t rows = 3, depth = 8, cols = 5;
      std::vector<int32_t> ls =
          adj_x ? std::vector<int32_t>{2, depth, rows} : std::vector<int32_t>{2, rows, depth};
      std::vector<int32_t> rs =
          adj_y ? std::vector<int32_t>{2, cols, depth} : std::vector<int32_t>{2, depth, cols};
      const std::vector<int32_t> os = {2, rows, cols};
      const std::vector<int8_t> lhs = RandomActs(Count(ls), seed),
                                rhs = RandomActs(Count(rs), seed + 9);
      TfliteBuilder b;
      const int tl = b.AddTensor("lhs", ls, TflType::kInt8, PerTensor(ql.scale, ql.zp));
      const int tr = b.AddTensor("rhs", rs, TflType::kInt8, PerTensor(qr.scale, qr.zp));
      const int to = b.AddTensor("out", os, TflType::kInt8, PerTensor(qo.scale, qo.zp));
      b.AddOperator(126, {tl, tr}, {to}, testing::BatchMatMulOpts{adj_x, adj_y});
      b.SetInputs({tl, tr});
      b.SetOutputs({to});
      std::vector<int8_t> ours(Count(os)), l_copy = lhs, r_copy = rhs;
      KernelArgs k;
      k.Tensor(ScalarType::kChar, ls, l_copy.data());
      k.Tensor(ScalarType::kChar, rs, r_copy.data());
      k.Bool(adj_x);
      k.Bool(adj_y);
      k.IntList({ql.zp, qr.zp, qo.zp});
      k.DoubleList({ql.scale, qr.scale, qo.scale});
      k.Tensor(ScalarType::kChar, os, ours.data());
      EXPECT_EQ(RunKernel("boardlab::batch_matmul.out", k), Error::kOk)
          << runtime::LastErrorMessage();
      cases.push_back(Case{
          "adj " + std::to_string(adj_x) + std::to_string(adj_y) + " seed " + std::to_string(seed),
          {b.Finish(), {Bytes(lhs), Bytes(rhs)}},
          ours});
    }
  }
  CompareWithOracle("BATCH_MATMUL", cases);
}

}  // namespace
}  // namespace boardlab
