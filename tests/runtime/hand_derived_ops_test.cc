// The cases the TFLite interpreter cannot check (op_cases.h `no_oracle`) and the ops whose
// interpreter answers come from XNNPACK with known differences, against TFLite Micro's
// arithmetic as tflm_reference.h writes it out, end to end: compiled by boardlab's compiler and
// run by the runtime in this process.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/runtime/tflm_reference_arith.h"
#include "tests/runtime/tflm_reference_signal.h"
#include "tests/runtime/tflm_reference_stream.h"
#include "tests/support/op_cases.h"

namespace boardlab::tflm_reference {
namespace {

using testing::OpCase;

// The XNNPACK-run ops whose TFLite Micro results differ from XNNPACK's (see
// oracle_ops_test.cc XnnpackKnownDifferences), against TFLite Micro's arithmetic.
Bytes XnnpackRunReference(const OpCase& c, const CaseModel& m) {
  if (c.type == compiler::OpType::kRound) return RoundReference(m.inputs[0]);
  return EluReference(m.builder, m);
}

std::vector<int64_t> Int64s(const Bytes& bytes) {
  std::vector<int64_t> v(bytes.size() / sizeof(int64_t));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(int64_t));
  return v;
}

// BROADCAST_ARGS of int64 shapes (the first a constant, the second the model's input): sizes
// right-aligned, a missing or size-1 dimension takes the other's.
Bytes BroadcastArgsInt64(const testing::TfliteBuilder& b, const CaseModel& m) {
  const std::vector<int64_t> x = Int64s(b.buffer(b.tensor(b.operator_spec(0).inputs[0]).buffer));
  const std::vector<int64_t> y = Int64s(m.inputs[0]);
  const size_t n = std::max(x.size(), y.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t dx = i + x.size() >= n ? x[i + x.size() - n] : 1;
    const int64_t dy = i + y.size() >= n ? y[i + y.size() - n] : 1;
    out[i] = dx == 1 ? dy : dx;
  }
  Bytes bytes(n * sizeof(int64_t));
  std::memcpy(bytes.data(), out.data(), bytes.size());
  return bytes;
}

std::vector<Bytes> HandDerived(const OpCase& c, const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const int out = m.output_tensors[0];
  switch (c.type) {
    case compiler::OpType::kZerosLike:
      return {Bytes(m.inputs[0].size(), 0)};
    case compiler::OpType::kBroadcastTo:
      return {BroadcastTo(b, m, m.input_tensors[0], out)};
    case compiler::OpType::kBroadcastArgs:
      return {BroadcastArgsInt64(b, m)};
    case compiler::OpType::kReduceMax:
    case compiler::OpType::kReduceMin: {
      const std::vector<int8_t> in = Int8s(m.inputs[0]);
      const bool max = c.type == compiler::OpType::kReduceMax;
      return {Bytes{static_cast<uint8_t>(max ? *std::max_element(in.begin(), in.end())
                                             : *std::min_element(in.begin(), in.end()))}};
    }
    case compiler::OpType::kSum:
      return {SumReference(m)};
    case compiler::OpType::kRelu6:
      return {Relu6Reference(m)};
    case compiler::OpType::kBatchMatMul:
      return {BatchMatMulReference(m, /*float_product=*/true)};
    case compiler::OpType::kPrelu:
      return {Prelu16x8Reference(m)};
    case compiler::OpType::kSquaredDifference:
      return {SquaredDifference16x8Reference(m)};
    case compiler::OpType::kGreater:
      return {Greater16Reference(m)};
    case compiler::OpType::kSpaceToBatchNd:
      return {SpaceToBatchPaddedRow(m.inputs[0])};
    case compiler::OpType::kAddN:
      return {AddNReference(m)};
    case compiler::OpType::kSvdf:
      return SvdfInferences(m, {m.inputs[0]});
    case compiler::OpType::kUnidirectionalSequenceLstm:
      return LstmInferences(m, {m.inputs[0]});
    case compiler::OpType::kConv2D:
      return {Conv16x8Acc32Reference(m)};
    case compiler::OpType::kQuantize:
      return {Requantize8To16Reference(m)};
    case compiler::OpType::kMean:
      return {Mean16x8Reference(m)};
    case compiler::OpType::kLogistic:
    case compiler::OpType::kTanh:
      return {Sigmoid16PowerOfTwoReference(m, c.type == compiler::OpType::kTanh)};
    case compiler::OpType::kAdd:
    case compiler::OpType::kSub:
      // TFLite Micro divides SUB's scales in float and ADD's in double.
      return {AddSubReference(m, c.type == compiler::OpType::kSub,
                              /*float_ratios=*/c.type == compiler::OpType::kSub)};
    case compiler::OpType::kCumsum: {
      const auto& o = std::get<testing::CumsumOpts>(b.operator_spec(0).options);
      int32_t axis;
      std::memcpy(&axis, b.buffer(b.tensor(b.operator_spec(0).inputs[1]).buffer).data(), 4);
      return {CumsumReference(m, axis, o.exclusive, o.reverse)};
    }
    case compiler::OpType::kSignalWindow:
      return {WindowReference(m)};
    case compiler::OpType::kSignalFftAutoScale:
      return FftAutoScaleReference(m);
    case compiler::OpType::kSignalDelay:
      return {DelayFirstInferenceReference(m)};
    // The filter bank stage's cases are TFLite Micro's test vectors: its outputs are the
    // reference.
    case compiler::OpType::kSignalEnergy:
    case compiler::OpType::kSignalFilterBank:
    case compiler::OpType::kSignalFilterBankSquareRoot:
    case compiler::OpType::kSignalFilterBankLog:
    case compiler::OpType::kSignalPcan:
    case compiler::OpType::kSignalSpectralSubtraction:
      return testing::SignalFilterBankGolden(c.name);
    case compiler::OpType::kSignalRfft:
    case compiler::OpType::kSignalIrfft:
      return testing::SignalFftGolden(c.name);
    case compiler::OpType::kSignalFramer:
      return FramerFirstInferenceReference(m);
    case compiler::OpType::kSignalStacker:
      return StackerFirstInferenceReference(m);
    case compiler::OpType::kSignalOverlapAdd:
      return {OverlapAddFirstInferenceReference(m)};
    case compiler::OpType::kCircularBuffer:
      return {CircularBufferFirstInferenceReference(m)};
    default:
      ADD_FAILURE() << c.name << ": no hand-derived reference";
      return {};
  }
}

// Compiles and runs every case of `cases` that `select` takes and compares its outputs with
// `expected(c, m)`; `checked` counts the cases run.
template <typename Select, typename Expected>
void ExpectCasesFollow(const std::vector<OpCase>& cases, Select select, Expected expected,
                       int* checked) {
  for (const OpCase& c : cases) {
    if (!select(c)) continue;
    SCOPED_TRACE(c.no_oracle.empty() ? c.name : c.name + " (" + c.no_oracle + ")");
    const CaseModel m = testing::SingleCaseModel(c);
    std::string error;
    const runtime::testing::PteRun run =
        runtime::testing::CompileAndRunCase(m.model, m.inputs, &error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(run.outputs, expected(c, m));
    ++*checked;
  }
}

// TFLite Micro's float32 FFT vectors are decimal numbers ("0"), which say nothing of the sign
// of a zero (kissfft's float arithmetic gives -0 in places): those cases are compared as float
// values, where -0 equals 0; every other case byte for byte.
bool IsFloatFftCase(const OpCase& c) {
  return (c.type == compiler::OpType::kSignalRfft || c.type == compiler::OpType::kSignalIrfft) &&
         c.name.find("Float") != std::string::npos;
}

TEST(HandDerivedOpsTest, CasesTheInterpreterCannotCheckFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::AllOpCases(),
      [](const OpCase& c) { return !c.no_oracle.empty() && !IsFloatFftCase(c); }, HandDerived,
      &checked);
  EXPECT_GE(checked, 24);
}

// TFLite Micro's IrfftTestLength512Float samples are printed with 8 decimals (507 of 512; the
// other 5 carry 9 or 10), which below 0.125 is coarser than a float step. So a sample equals the
// float written either exactly or once boardlab's is rounded to 8 decimals too. That holds for
// all 512, and 24 samples (all below 0.124) need the rounding; a float step off anywhere else
// would change those counts.
void ExpectEqualAsPrintedTo8Decimals(const std::vector<float>& got,
                                     const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  int exact = 0;
  int rounded = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) {
      ++exact;
      continue;
    }
    const std::string printed = absl::StrFormat("%.8f", got[i]);
    EXPECT_EQ(std::strtof(printed.c_str(), nullptr), want[i])
        << "sample " << i << ": " << absl::StrFormat("%.9g", got[i]) << " against "
        << absl::StrFormat("%.9g", want[i]);
    ++rounded;
  }
  EXPECT_EQ(exact, 488);
  EXPECT_EQ(rounded, 24);
}

TEST(HandDerivedOpsTest, FloatFftCasesEqualTfliteMicrosNumbers) {
  int checked = 0;
  for (const OpCase& c : testing::SignalFftCases()) {
    if (!IsFloatFftCase(c)) continue;
    SCOPED_TRACE(c.name);
    const CaseModel m = testing::SingleCaseModel(c);
    std::string error;
    const runtime::testing::PteRun run =
        runtime::testing::CompileAndRunCase(m.model, m.inputs, &error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(run.outputs.size(), 1u);
    const std::vector<float> got = ValuesOf<float>(run.outputs[0]);
    const std::vector<float> want = ValuesOf<float>(testing::SignalFftGolden(c.name).at(0));
    if (c.name.find("IrfftTestLength512Float") == std::string::npos) {
      EXPECT_EQ(got, want);
    } else {
      ExpectEqualAsPrintedTo8Decimals(got, want);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// The ops that XNNPACK runs in the interpreter with known differences from TFLite's kernels
// (XnnpackKnownDifferences) follow TFLite Micro's own arithmetic exactly.
TEST(HandDerivedOpsTest, OpsXnnpackComputesDifferentlyFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::AllOpCases(),
      [](const OpCase& c) {
        return c.type == compiler::OpType::kRound ||
               (c.type == compiler::OpType::kElu && c.name.find("int8") != std::string::npos);
      },
      [](const OpCase& c, const CaseModel& m) {
        return std::vector<Bytes>{XnnpackRunReference(c, m)};
      },
      &checked);
  EXPECT_GE(checked, 4);
}

// RESIZE_BILINEAR (XNNPACK in the interpreter) and L2_POOL_2D (the interpreter's optimized
// kernel) differ from TFLite Micro's reference kernels in a few elements; every element of every
// case follows TFLite Micro's arithmetic exactly.
TEST(HandDerivedOpsTest, ResizeBilinearAndL2PoolFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::NormalizationCases(),
      [](const OpCase& c) {
        return c.type == compiler::OpType::kResizeBilinear || c.type == compiler::OpType::kL2Pool2D;
      },
      [](const OpCase&, const CaseModel& m) {
        const testing::BuilderOptions& o = m.builder.operator_spec(0).options;
        if (const auto* resize = std::get_if<testing::ResizeNearestNeighborOpts>(&o)) {
          return std::vector<Bytes>{
              ResizeBilinearReference(m, resize->align_corners, resize->half_pixel_centers)};
        }
        return std::vector<Bytes>{L2PoolReference(m, std::get<testing::Pool2DOpts>(o))};
      },
      &checked);
  EXPECT_EQ(checked, 14);
}

// The resize reference on the kernel test's worked numbers (width 2 -> 3: 0, 66.7, 100).
TEST(HandDerivedOpsTest, ResizeBilinearReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(0.1f, 0);
  m.input_tensors = {m.builder.AddTensor("in", {1, 1, 2, 1}, TflType::kInt8, q)};
  m.output_tensors = {m.builder.AddTensor("out", {1, 1, 3, 1}, TflType::kInt8, q)};
  m.inputs = {FromInt8s({0, 100})};
  EXPECT_EQ(Int8s(ResizeBilinearReference(m, false, false)), (std::vector<int8_t>{0, 67, 100}));
}

// The reference functions on worked numbers: 2.5 and -0.5 are ties (to 2 and +0), -0.375 rounds
// to +0; an ELU entry whose product 0.1 * 25 is exactly 2.5 rounds away from zero to 3.
TEST(HandDerivedOpsTest, RoundAndEluReferencesOnWorkedNumbers) {
  EXPECT_EQ(TfliteRoundToNearest(2.5f), 2.0f);
  EXPECT_EQ(TfliteRoundToNearest(3.5f), 4.0f);
  EXPECT_FALSE(std::signbit(TfliteRoundToNearest(-0.5f)));
  EXPECT_FALSE(std::signbit(TfliteRoundToNearest(-0.375f)));
  EXPECT_EQ(TfliteRoundToNearest(-1.5f), -2.0f);
  const testing::QuantParams in = testing::PerTensor(0.05f, -3),
                             out = testing::PerTensor(0.04f, 20);
  EXPECT_EQ(EluEntry(-1, in, out, false), 23);    // 0.1 / 0.04 = 2.5 -> 3, + 20
  EXPECT_EQ(EluEntry(-1, in, out, true), 22);     // XNNPACK: 2.5 -> 2
  EXPECT_EQ(EluEntry(-128, in, out, false), -5);  // exp(-6.25) - 1 = -0.998 -> -25 + 20
}

// A SUM over the last axis of `values` ([1, n]), scale 1 and zero point `zp` in and out.
CaseModel SumModel(const std::vector<int8_t>& values, int64_t zp) {
  CaseModel m;
  const testing::QuantParams q = testing::PerTensor(1.0f, zp);
  const int32_t n = static_cast<int32_t>(values.size());
  const int in = m.builder.AddTensor("in", {1, n}, TflType::kInt8, q);
  const int axis = m.builder.AddConstInt32("axis", {1}, std::vector<int32_t>{1});
  const int out = m.builder.AddTensor("out", {1}, TflType::kInt8, q);
  m.builder.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kSum), {in, axis}, {out},
                        testing::ReducerOpts{});
  m.input_tensors = {in};
  m.output_tensors = {out};
  m.inputs = {FromInt8s(values)};
  return m;
}

// The hand-derived arithmetic itself, on numbers worked out by hand: with zero point -3 the raw
// sum 21 gains 3 per element (39), then the output zero point brings it to 36; a sum beyond
// int8 clamps (TFLite Micro clamps; the float path of older TFLite wrapped 200 to -56).
TEST(HandDerivedOpsTest, SumReferenceOnWorkedNumbers) {
  EXPECT_EQ(Int8s(SumReference(SumModel({1, 2, 3, 4, 5, 6}, -3))), (std::vector<int8_t>{36}));
  EXPECT_EQ(Int8s(SumReference(SumModel({100, 100}, 0))), (std::vector<int8_t>{127}));
}

// The RELU6 reference clamps raw values whatever the output quantization: input scale 0.05, zero
// point -3 puts 6 at round(120) - 3 = 117.
TEST(HandDerivedOpsTest, Relu6ReferenceOnWorkedNumbers) {
  CaseModel m;
  const int in = m.builder.AddTensor("in", {4}, TflType::kInt8, testing::PerTensor(0.05f, -3));
  const int out = m.builder.AddTensor("out", {4}, TflType::kInt8, testing::PerTensor(0.5f, 9));
  m.builder.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kRelu6), {in}, {out});
  m.input_tensors = {in};
  m.output_tensors = {out};
  m.inputs = {FromInt8s({-100, -3, 50, 127})};
  EXPECT_EQ(Int8s(Relu6Reference(m)), (std::vector<int8_t>{-3, -3, 50, 117}));
}

// Each case meant to tell TFLite Micro's float arithmetic from its double look-alike does: the
// look-alike gives other bytes (so the case can fail when the kernel computes it).
TEST(HandDerivedOpsTest, ExactnessCasesTellFloatFromDoubleArithmetic) {
  int checked = 0;
  for (const OpCase& c : testing::AllOpCases()) {
    const bool float_ratios = c.name.find("float scale ratios") != std::string::npos;
    const bool float_product = c.name.find("float scale product") != std::string::npos;
    if (!float_ratios && !float_product) continue;
    SCOPED_TRACE(c.name);
    const CaseModel m = testing::SingleCaseModel(c);
    if (float_ratios) {
      EXPECT_NE(AddSubReference(m, true, true), AddSubReference(m, true, false));
    } else {
      EXPECT_NE(BatchMatMulReference(m, true), BatchMatMulReference(m, false));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

const OpCase& CaseNamed(const std::string& name) {
  for (const OpCase& c : testing::AllOpCases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no case " << name;
  return testing::AllOpCases().front();
}

// The live ops of `c`'s model as compiled with `options`, and its outputs as run.
struct CompiledCase {
  int live_ops = 0;
  int npu_ops = 0;
  std::vector<Bytes> outputs;
};

CompiledCase CompileAndRun(const OpCase& c, const compiler::CompileOptions& options = {}) {
  CompiledCase r;
  const CaseModel m = testing::SingleCaseModel(c);
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return r;
  for (const compiler::Op& op : compiled->compilation.graph.ops) {
    if (op.dead) continue;
    ++r.live_ops;
    r.npu_ops += op.unit == compiler::Unit::kNpu ? 1 : 0;
  }
  const runtime::testing::PteRun run = runtime::testing::RunPte(compiled->pte, m.inputs);
  EXPECT_EQ(run.error, runtime::Error::kOk) << run.message;
  r.outputs = run.outputs;
  return r;
}

// RELU6 fused into its producer computes TFLite Micro's separate RELU6 exactly: its clamp is
// the fused activation's range (quantized in float, like RELU6's six), the tensors share one
// quantization. The FULLY_CONNECTED cases feed RELU6 the same values; fused (one op left) and
// unfused (the FULLY_CONNECTED output is also a model output) give the same bytes, which reach
// the float six 32761 (the double quotient would clamp at 32760).
TEST(HandDerivedOpsTest, Relu6FusedIntoItsProducerGivesTheSeparateOpsBytes) {
  const CompiledCase fused = CompileAndRun(CaseNamed("RELU6 16x8 fused into FULLY_CONNECTED"));
  const CompiledCase apart = CompileAndRun(CaseNamed("RELU6 16x8 after FULLY_CONNECTED unfused"));
  EXPECT_EQ(fused.live_ops, 1);
  EXPECT_EQ(apart.live_ops, 2);
  ASSERT_EQ(fused.outputs.size(), 1u);
  ASSERT_EQ(apart.outputs.size(), 2u);
  EXPECT_EQ(fused.outputs[0], apart.outputs[1]);
  std::vector<int16_t> clamped(fused.outputs[0].size() / 2);
  std::memcpy(clamped.data(), fused.outputs[0].data(), fused.outputs[0].size());
  EXPECT_EQ(*std::max_element(clamped.begin(), clamped.end()), 32761);
  EXPECT_EQ(*std::min_element(clamped.begin(), clamped.end()), 0);
  // int8: RELU6 after ADD fuses too (and its oracle case checks the float bound).
  EXPECT_EQ(CompileAndRun(CaseNamed("RELU6 int8 after ADD at a float rounding tie")).live_ops, 1);
}

// A RELU6 whose output is quantized differently runs on the Neutron as the same raw clamp (an
// identity rescale onto the input's zero point), so NPU and CPU both give TFLite Micro's bytes.
TEST(HandDerivedOpsTest, Relu6OnTheNpuClampsTheRawInputToo) {
  const OpCase& c = CaseNamed("RELU6 int8 requantized output");
  compiler::CompileOptions cpu_only;
  cpu_only.cpu_only = true;
  const CompiledCase npu = CompileAndRun(c);
  const CompiledCase cpu = CompileAndRun(c, cpu_only);
  EXPECT_EQ(npu.npu_ops, 1);
  EXPECT_EQ(cpu.npu_ops, 0);
  const std::vector<Bytes> expected = {Relu6Reference(testing::SingleCaseModel(c))};
  EXPECT_EQ(npu.outputs, expected);
  EXPECT_EQ(cpu.outputs, expected);
}

// ADD_N's starting offset on worked numbers: zero point -3, scale 1 in and out, inputs 1 and 2.
// Each value (q + 3) << 20 halves to (q + 3) << 19; the sum starts at 3 << 19, so it holds
// (3 + 4 + 5) << 19 = 12 << 19; the output multiplier 2 / 2^20 gives 12, minus 3 = 9 (plain
// addition would give (1 + 3) + (2 + 3) - 3 = 6).
TEST(HandDerivedOpsTest, AddNReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(1.0f, -3);
  const int a = m.builder.AddTensor("a", {1}, TflType::kInt8, q);
  const int b = m.builder.AddTensor("b", {1}, TflType::kInt8, q);
  const int out = m.builder.AddTensor("out", {1}, TflType::kInt8, q);
  m.input_tensors = {a, b};
  m.output_tensors = {out};
  m.inputs = {{1}, {2}};
  EXPECT_EQ(AddNReference(m), Bytes{9});
}

// CUMSUM's running sum starts from the same offset: zero point -3, scale 1 in and out, inputs 1
// and 2 are (4, 5) << 19 on top of 3 << 19. Inclusive: 7 - 3 = 4, then 12 - 3 = 9; exclusive:
// 3 - 3 = 0, then 4; reversed: 8 - 3 = 5 for the last element, then 9 for the first.
TEST(HandDerivedOpsTest, CumsumReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(1.0f, -3);
  m.input_tensors = {m.builder.AddTensor("in", {2}, TflType::kInt8, q)};
  m.output_tensors = {m.builder.AddTensor("out", {2}, TflType::kInt8, q)};
  m.inputs = {{1, 2}};
  EXPECT_EQ(CumsumReference(m, 0, false, false), (Bytes{4, 9}));
  EXPECT_EQ(CumsumReference(m, 0, true, false), (Bytes{0, 4}));
  EXPECT_EQ(CumsumReference(m, -1, false, true), (Bytes{9, 5}));
}

}  // namespace
}  // namespace boardlab::tflm_reference
