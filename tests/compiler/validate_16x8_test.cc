// The importer and the partitioner on 16x8 models (int16 activations, int8 weights, int64 bias):
// the ops boardlab runs in 16x8 import and stay on the CPU with a reason (the Neutron computes
// 8-bit activations only); every other int16 use is refused with the op's own reason, all of them
// in one message; the memory plan counts two bytes per int16 element.

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver.h"
#include "compiler/npu_constraints.h"
#include "compiler/validate_ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing::validate_test {
namespace {

const QuantParams kQ16 = PerTensor(0.0005f, 0);

// One 16x8 op on int16 graph inputs of `shape`, its output of `out_shape`.
struct Model16 {
  TfliteBuilder b;
  std::vector<int32_t> inputs;
  int In(std::vector<int32_t> shape, QuantParams q = kQ16, TflType type = TflType::kInt16) {
    const int t = b.AddTensor("in" + std::to_string(b.num_tensors()), shape, type, q);
    inputs.push_back(t);
    return t;
  }
  TfliteBuilder& Op(OpType type, std::vector<int32_t> in, std::vector<int32_t> out_shape,
                    BuilderOptions options = {}, QuantParams q = kQ16,
                    TflType out_type = TflType::kInt16) {
    const int out = b.AddTensor("out" + std::to_string(b.num_tensors()), out_shape, out_type, q);
    b.AddOperator(Code(type), in, {out}, std::move(options));
    b.SetInputs(inputs);
    b.SetOutputs({out});
    return b;
  }
};

// A 16x8 FULLY_CONNECTED [1, 4] x [3, 4] with a bias of `bias_type`.
TfliteBuilder FullyConnected16x8(TflType bias_type) {
  Model16 m;
  const int in = m.In({1, 4});
  const std::vector<int8_t> w(12, 3);
  const int weights = m.b.AddConstInt8("w", {3, 4}, w, PerTensor(0.01f, 0));
  const size_t size = bias_type == TflType::kInt64 ? 8 : 4;
  const int bias = m.b.AddTensor("bias", {3}, bias_type, {}, std::vector<uint8_t>(3 * size, 0));
  return m.Op(OpType::kFullyConnected, {in, weights, bias}, {1, 3}, FullyConnectedOpts{});
}

// Ops the NPU can run stay on the CPU for their int16 activations; the rest say why the NPU does
// not run them at all (their reason does not depend on the element type).
TEST(Validate16x8Test, EveryCaseCompilesOntoTheCpuWithTheNpuReason) {
  std::vector<OpCase> npu_ops, cpu_ops;
  for (const OpCase& c : Int16Cases()) {
    (compiler::NpuSupportsOpType(c.type) ? npu_ops : cpu_ops).push_back(c);
  }
  EXPECT_GE(npu_ops.size(), 30u);
  ExpectEveryCaseOnTheCpu(npu_ops, "Neutron computes 8-bit activations only");
  ExpectEveryCaseOnTheCpu(cpu_ops);
}

TEST(Validate16x8Test, EveryCaseOpRunsIn16x8) {
  for (const OpCase& c : Int16Cases()) {
    EXPECT_TRUE(compiler::Runs16x8(c.type) || compiler::MovesInt16Values(c.type)) << c.name;
  }
}

TEST(Validate16x8Test, NonZeroInt16ZeroPointIsUnsupported) {
  Model16 m;
  const int a = m.In({2, 3}, PerTensor(0.001f, 5));
  const int b = m.In({2, 3});
  ExpectUnsupported(m.Op(OpType::kAdd, {a, b}, {2, 3}, ElementwiseOpts{}),
                    {"ADD #0", "is int16 with zero point 5", "symmetric (zero point 0)"});
}

TEST(Validate16x8Test, MixedInt8AndInt16ActivationsAreUnsupported) {
  Model16 m;
  const int a = m.In({2, 3}, PerTensor(0.05f, 0), TflType::kInt8);
  const int b = m.In({2, 3});
  ExpectUnsupported(m.Op(OpType::kMul, {a, b}, {2, 3}, ElementwiseOpts{}),
                    {"MUL #0", "is int8", "takes int16 activations throughout"});
}

TEST(Validate16x8Test, FullyConnectedTakesAnInt64Bias) {
  Expect(FullyConnected16x8(TflType::kInt64), absl::StatusCode::kOk, {});
  ExpectUnsupported(FullyConnected16x8(TflType::kInt32),
                    {"FULLY_CONNECTED #0", "bias 'bias' is int32", "takes an int64 bias"});
}

TEST(Validate16x8Test, OpsWithoutA16x8KernelSayWhy) {
  Model16 m;
  const int in = m.In({2, 3});
  ExpectUnsupported(m.Op(OpType::kHardSwish, {in}, {2, 3}),
                    {"HARD_SWISH #0", "input 'in0' is int16",
                     "TFLite Micro has no 16x8 (int16 activation) kernel for HARD_SWISH"});
}

// The ops whose TFLite Micro reference kernels have no int16 form (checked against each
// kernel's Prepare and Eval type switch; docs/supported-ops.md lists the 16x8 ones). Every one
// of them refuses int16 activations with the same words, before its own operand checks.
const OpType kNo16x8Kernel[] = {OpType::kAddN,
                                OpType::kCircularBuffer,
                                OpType::kArgMax,
                                OpType::kArgMin,
                                OpType::kCumsum,
                                OpType::kDiv,
                                OpType::kElu,
                                OpType::kEqual,
                                OpType::kNotEqual,
                                OpType::kGreaterEqual,
                                OpType::kLess,
                                OpType::kLessEqual,
                                OpType::kExp,
                                OpType::kLog,
                                OpType::kSqrt,
                                OpType::kRsqrt,
                                OpType::kSquare,
                                OpType::kRound,
                                OpType::kFloor,
                                OpType::kCeil,
                                OpType::kSin,
                                OpType::kCos,
                                OpType::kFloorDiv,
                                OpType::kFloorMod,
                                OpType::kEmbeddingLookup,
                                OpType::kNeg,
                                OpType::kFill,
                                OpType::kZerosLike,
                                OpType::kHardSwish,
                                OpType::kL2Normalization,
                                OpType::kL2Pool2D,
                                OpType::kLogSoftmax,
                                OpType::kReduceMax,
                                OpType::kReduceMin,
                                OpType::kResizeBilinear,
                                OpType::kSvdf,
                                OpType::kDetectionPostprocess};

// SingleOpBuilder(type) with every int8 or float32 activation made int16 (scale 2^-10, zero
// point 0).
TfliteBuilder Int16Twin(OpType type) {
  TfliteBuilder b = SingleOpBuilder(type);
  for (int t = 0; t < b.num_tensors(); ++t) {
    TfliteBuilder::TensorSpec& spec = b.mutable_tensor(t);
    const bool activation = spec.buffer == 0;
    if (!activation || (spec.type != static_cast<int8_t>(TflType::kInt8) &&
                        spec.type != static_cast<int8_t>(TflType::kFloat32))) {
      continue;
    }
    spec.type = static_cast<int8_t>(TflType::kInt16);
    spec.quant = PerTensor(1.0f / 1024, 0);
  }
  return b;
}

TEST(Validate16x8Test, OpsWithoutATfliteMicro16x8KernelSaySo) {
  for (OpType type : kNo16x8Kernel) {
    SCOPED_TRACE(compiler::OpTypeName(type));
    EXPECT_FALSE(compiler::Runs16x8(type));
    EXPECT_FALSE(compiler::MovesInt16Values(type));
    ExpectUnsupported(Int16Twin(type),
                      {absl::StrCat(compiler::OpTypeName(type), " #0"), "is int16",
                       absl::StrCat("TFLite Micro has no 16x8 (int16 activation) kernel for ",
                                    compiler::OpTypeName(type))});
  }
}

// Every op type is accounted for: a 16x8 form, a type-generic copy, or no 16x8 kernel in TFLite
// Micro (so the list above and the 16x8 table cannot drift apart silently).
TEST(Validate16x8Test, EveryOpTypeHasAnInt16Answer) {
  for (int i = 0; i < compiler::kNumOpTypes; ++i) {
    const OpType type = static_cast<OpType>(i);
    const bool refused = std::find(std::begin(kNo16x8Kernel), std::end(kNo16x8Kernel), type) !=
                         std::end(kNo16x8Kernel);
    // bool only, or int32/int64 shapes only, in every TFLite: no activation to be int16.
    const bool no_activation = type == OpType::kLogicalAnd || type == OpType::kLogicalOr ||
                               type == OpType::kLogicalNot || type == OpType::kBroadcastArgs;
    // TFLite Micro's signal ops take plain int16 samples (no quantization), not 16x8 activations.
    const bool plain_int16 = compiler::IsSignalOp(type);
    EXPECT_EQ(compiler::Runs16x8(type) + compiler::MovesInt16Values(type) + refused +
                  no_activation + plain_int16,
              1)
        << compiler::OpTypeName(type);
  }
}

// TFLite Micro runs UNIDIRECTIONAL_SEQUENCE_LSTM in 16x8 (int16 activations, int64 biases), and
// so does boardlab: the 16x8 LSTM cases compile onto the CPU (tests/runtime/stateful_ops_test.cc
// runs them against TFLite Micro's arithmetic). The int8 model with its activations made int16
// keeps int32 biases, which the 16x8 form refuses with the reason.
TEST(Validate16x8Test, Lstm16x8CompilesOntoTheCpu) {
  EXPECT_TRUE(compiler::Runs16x8(OpType::kUnidirectionalSequenceLstm));
  std::vector<OpCase> lstm16;
  for (const OpCase& c : LstmCases()) {
    if (c.name.find("16x8") != std::string::npos) lstm16.push_back(c);
  }
  EXPECT_EQ(lstm16.size(), 5u);
  ExpectEveryCaseOnTheCpu(lstm16, "state persists between inferences");
  ExpectInvalid(Int16Twin(OpType::kUnidirectionalSequenceLstm),
                {"UNIDIRECTIONAL_SEQUENCE_LSTM #0", "is int32, expected int64"});
}

TEST(Validate16x8Test, PreluTakesAnInt8Alpha) {
  Model16 m;
  const int in = m.In({2, 3});
  const int alpha = m.In({3});
  ExpectUnsupported(m.Op(OpType::kPrelu, {in, alpha}, {2, 3}),
                    {"PRELU #0", "alpha 'in1' is int16", "16x8 PRELU takes an int8 alpha"});
}

TEST(Validate16x8Test, SumTakesInt16Throughout) {
  Model16 m;
  const int in = m.In({2, 3});
  const int axis = m.b.AddConstInt32("axis", {1}, std::vector<int32_t>{1});
  ExpectUnsupported(
      m.Op(OpType::kSum, {in, axis}, {2}, ReducerOpts{}, PerTensor(0.1f, 0), TflType::kInt8),
      {"SUM #0", "input 'in0' is int16",
       "the 16x8 form of SUM takes int16 activations throughout"});
}

// TFLite Micro's int64 requantization takes shifts up to 7 (multipliers below 2^7).
TEST(Validate16x8Test, BatchMatMulRefusesAMultiplierOf2To7OrMore) {
  Model16 m;
  const int lhs = m.In({1, 2, 3}, PerTensor(0.5f, 0));
  const int rhs = m.In({1, 3, 2}, PerTensor(0.5f, 0));
  ExpectUnsupported(
      m.Op(OpType::kBatchMatMul, {lhs, rhs}, {1, 2, 2}, BatchMatMulOpts{}, PerTensor(0.001f, 0)),
      {"BATCH_MATMUL #0", "below 2^7"});
}

// GREATER is the one comparison TFLite Micro runs on int16, with any zero point (its kernel
// subtracts them); ABS takes plain, unquantized int16 too.
TEST(Validate16x8Test, GreaterAndAbsTakeTheirInt16Forms) {
  Model16 g;
  const int a = g.In({2, 3}, PerTensor(0.001f, 17));
  const int b = g.In({3}, PerTensor(0.002f, -5));
  Expect(g.Op(OpType::kGreater, {a, b}, {2, 3}, {}, {}, TflType::kBool), absl::StatusCode::kOk, {});
  Model16 abs;
  const int x = abs.In({4}, {});
  Expect(abs.Op(OpType::kAbs, {x}, {4}, {}, {}), absl::StatusCode::kOk, {});
}

// Several int16 problems in one model: one message lists each with its operator.
TEST(Validate16x8Test, EveryInt16ProblemIsListedInOneMessage) {
  Model16 m;
  const int in = m.In({2, 3});
  const int mid = m.b.AddTensor("mid", {2, 3}, TflType::kInt16, kQ16);
  const int out = m.b.AddTensor("out", {2, 3}, TflType::kInt16, PerTensor(0.0005f, 7));
  m.b.AddOperator(Code(OpType::kHardSwish), {in}, {mid});
  m.b.AddOperator(Code(OpType::kLeakyRelu), {mid}, {out}, LeakyReluOpts{});
  m.b.SetInputs({in});
  m.b.SetOutputs({out});
  ExpectUnsupported(m.b, {"2 problems", "HARD_SWISH #0", "no 16x8",
                          "LEAKY_RELU #1: output 'out' is int16 with zero point 7"});
}

TEST(Validate16x8Test, LogisticNeedsTheOutputScale2ToTheMinus15) {
  Model16 m;
  const int in = m.In({4});
  ExpectUnsupported(m.Op(OpType::kLogistic, {in}, {4}, {}, PerTensor(1.0f / 256, 0)),
                    {"LOGISTIC #0", "is not 2^-15", "16x8 LOGISTIC"});
}

TEST(Validate16x8Test, TanhRefusesAnInputScaleItsTableCannotTake) {
  Model16 m;
  const int in = m.In({4}, PerTensor(3.0f, 0));
  ExpectUnsupported(m.Op(OpType::kTanh, {in}, {4}, {}, PerTensor(1.0f / 32768, 0)),
                    {"TANH #0", "input scale 3", "16x8 TANH"});
}

TEST(Validate16x8Test, SoftmaxNeedsTheOutputScale2ToTheMinus15) {
  Model16 m;
  const int in = m.In({2, 5});
  ExpectUnsupported(m.Op(OpType::kSoftmax, {in}, {2, 5}, SoftmaxOpts{}, PerTensor(1.0f / 256, 0)),
                    {"SOFTMAX #0", "16x8 SOFTMAX"});
}

TEST(Validate16x8Test, Padv2ValueHasTheInputsType) {
  Model16 m;
  const int in = m.In({2, 3});
  const int pads = m.b.AddConstInt32("pads", {2, 2}, std::vector<int32_t>{0, 1, 1, 0});
  const int value = m.b.AddConstInt8("value", {1}, std::vector<int8_t>{1}, kQ16);
  ExpectUnsupported(m.Op(OpType::kPadV2, {in, pads, value}, {3, 4}),
                    {"PADV2 #0", "pad value must be one constant int16"});
}

TEST(Validate16x8Test, QuantizeToAnUnsupportedTypeSaysWhichTypesItTakes) {
  Model16 m;
  const int in = m.In({3});
  ExpectUnsupported(m.Op(OpType::kQuantize, {in}, {3}, {}, PerTensor(1.0f, 0), TflType::kInt32),
                    {"QUANTIZE #0", "to int32", "int8 and int16"});
}

// The arena holds two bytes per int16 element: three live [1, 1000] int16 tensors need 6000
// bytes at least (16-byte alignment may add a little).
TEST(Validate16x8Test, MemoryPlanCountsTwoBytesPerElement) {
  Model16 m;
  const int a = m.In({1, 1000});
  const int b = m.In({1, 1000});
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(m.Op(OpType::kAdd, {a, b}, {1, 1000}, ElementwiseOpts{}).Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->compilation.memory.arena_bytes, 6000);
  EXPECT_LT(r->compilation.memory.arena_bytes, 6100);
}

}  // namespace
}  // namespace boardlab::testing::validate_test
