// Conformance of the ops of issue 13 (batch 1: layout, data movement, comparison and selection;
// batch 2: arithmetic and math) against the TFLite interpreter (tfjs-tflite under node), end to
// end: each generated single-op model (tests/support/op_cases.h) is compiled by boardlab's
// compiler, run by the runtime in this process, and its outputs must equal the interpreter's
// byte for byte. Two kinds of case are checked against TFLite Micro's arithmetic, written out
// below, instead: where the interpreter cannot run the case or TFLite Micro itself differs from
// the interpreter (op_cases.h `no_oracle`), and the elements where the XNNPACK delegate, which
// the interpreter applies by default, is known to compute differently from TFLite's kernels.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using testing::CaseModel;
using testing::OpCase;
using testing::TflType;
using Bytes = std::vector<uint8_t>;

std::string OracleType(int8_t type) {
  switch (static_cast<TflType>(type)) {
    case TflType::kInt32:
      return "int32";
    case TflType::kInt64:
      return "int64";
    case TflType::kFloat32:
      return "float32";
    case TflType::kBool:
      return "bool";
    default:
      return "int8";
  }
}

// The interpreter build cannot hand int64 outputs to JavaScript: the oracle runs the model
// with those outputs as int32 (ARG_MAX / ARG_MIN / SHAPE write the same values either way), and
// `widened[k]` marks the outputs whose int32 answers are compared as int64.
struct OracleModel {
  testing::TypedOracleCase oracle;
  std::vector<bool> widened;
};

OracleModel OracleCaseOf(const CaseModel& m) {
  OracleModel out;
  testing::TfliteBuilder b = m.builder;
  for (int t : m.output_tensors) {
    const bool wide = b.tensor(t).type == static_cast<int8_t>(TflType::kInt64);
    out.widened.push_back(wide);
    if (wide) b.mutable_tensor(t).type = static_cast<int8_t>(TflType::kInt32);
  }
  for (int i = 0; i < b.num_operators(); ++i) {
    testing::BuilderOptions& o = b.mutable_operator(i).options;
    if (auto* arg = std::get_if<testing::ArgMinMaxOpts>(&o)) arg->output_type = TflType::kInt32;
    if (auto* shape = std::get_if<testing::ShapeOpts>(&o)) shape->out_type = TflType::kInt32;
  }
  testing::TypedOracleCase& c = out.oracle;
  c.model = b.Finish();
  c.inputs = m.inputs;
  for (int t : m.input_tensors) {
    c.input_types.push_back(OracleType(b.tensor(t).type));
    c.input_shapes.push_back(b.tensor(t).shape);
  }
  for (int t : m.output_tensors) c.output_types.push_back(OracleType(b.tensor(t).type));
  return out;
}

// int32 values as int64 bytes (little-endian, sign-extended).
std::vector<uint8_t> WidenToInt64(const std::vector<uint8_t>& int32_bytes) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 4 <= int32_bytes.size(); i += 4) {
    int32_t v;
    std::memcpy(&v, int32_bytes.data() + i, 4);
    const int64_t w = v;
    const auto* p = reinterpret_cast<const uint8_t*>(&w);
    out.insert(out.end(), p, p + 8);
  }
  return out;
}

// Compiles `m` with the default options (the NPU where the rules allow) and runs it.
runtime::testing::PteRun CompileAndRun(const CaseModel& m, std::string* error) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, {});
  if (!compiled.ok()) {
    *error = compiled.status().ToString();
    return {};
  }
  runtime::testing::PteRun run = runtime::testing::RunPte(compiled->pte, m.inputs);
  if (run.error != runtime::Error::kOk) *error = "runtime: " + run.message;
  return run;
}

class OracleOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  }
};

// Where the XNNPACK delegate ran a case (the package applies it by default), the interpreter's
// answer is XNNPACK's, which differs from TFLite's own kernels (and so from TFLite Micro) in two
// documented places; this sets `want` to `mine` there and returns how many elements it changed.
// Both ops are also checked exactly against TFLite Micro's arithmetic below (HandDerivedOpsTest).
// - ROUND: XNNPACK rounds with the sign of the input kept, so inputs in [-0.5, 0) give -0;
//   TFLite's RoundToNearest returns floor + 1 = +0.
// - ELU int8: XNNPACK rounds the table's exact float ties to even, TFLite rounds them away from
//   zero (TfLiteRound).
int XnnpackKnownDifferences(const OpCase& c, const CaseModel& m, const Bytes& mine, Bytes& want);

TEST_F(OracleOpsTest, EveryCaseEqualsTheInterpreterExactly) {
  std::vector<OpCase> cases;
  for (const OpCase& c : testing::AllOpCases()) {
    if (c.no_oracle.empty()) cases.push_back(c);
  }
  std::vector<CaseModel> models;
  std::vector<OracleModel> oracle_models;
  std::vector<testing::TypedOracleCase> oracle;
  for (const OpCase& c : cases) {
    models.push_back(testing::SingleCaseModel(c));
    oracle_models.push_back(OracleCaseOf(models.back()));
    oracle.push_back(oracle_models.back().oracle);
  }
  std::vector<std::vector<std::vector<uint8_t>>> expected;
  std::vector<std::vector<std::string>> nodes;
  std::string error;
  ASSERT_TRUE(testing::RunTfliteOracleTyped(oracle, &expected, &error, &nodes)) << error;
  struct Stats {
    int cases = 0, xnnpack = 0, bytes = 0, xnnpack_differences = 0;
  };
  std::map<std::string, Stats> per_op;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    std::string run_error;
    const runtime::testing::PteRun run = CompileAndRun(models[i], &run_error);
    ASSERT_TRUE(run_error.empty()) << run_error;
    ASSERT_EQ(run.outputs.size(), expected[i].size());
    const bool xnnpack = nodes[i] == std::vector<std::string>{testing::kXnnpackNode};
    Stats& stats = per_op[compiler::OpTypeName(cases[i].type)];
    ++stats.cases;
    stats.xnnpack += xnnpack ? 1 : 0;
    for (size_t k = 0; k < run.outputs.size(); ++k) {
      Bytes want = oracle_models[i].widened[k] ? WidenToInt64(expected[i][k]) : expected[i][k];
      if (xnnpack) {
        stats.xnnpack_differences +=
            XnnpackKnownDifferences(cases[i], models[i], run.outputs[k], want);
      }
      EXPECT_EQ(run.outputs[k], want) << "output " << k;
      stats.bytes += static_cast<int>(run.outputs[k].size());
    }
  }
  for (const auto& [op, s] : per_op) {
    std::printf("[ oracle   ] %-20s %d cases (%d by XNNPACK), %d output bytes compared", op.c_str(),
                s.cases, s.xnnpack, s.bytes);
    if (s.xnnpack_differences > 0) {
      std::printf(", %d elements where XNNPACK is known to differ", s.xnnpack_differences);
    }
    std::printf("\n");
  }
}

// The firmware test runs every case in one model with the inputs baked in as constants; here
// that model gives, case by case, the outputs of the single-op models checked above.
TEST(OracleOpsModels, ConstantInputsGiveTheSameOutputs) {
  const std::vector<OpCase>& cases = testing::AllOpCases();
  std::string error;
  const runtime::testing::PteRun all = CompileAndRun(testing::ConstantInputsModel(cases), &error);
  ASSERT_TRUE(error.empty()) << error;
  size_t next = 0;
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.name);
    const runtime::testing::PteRun one = CompileAndRun(testing::SingleCaseModel(c), &error);
    ASSERT_TRUE(error.empty()) << error;
    for (const std::vector<uint8_t>& out : one.outputs) {
      ASSERT_LT(next, all.outputs.size());
      EXPECT_EQ(all.outputs[next++], out);
    }
  }
  EXPECT_EQ(next, all.outputs.size());
}

// EXPAND_DIMS is a reshape for the Neutron (neutron-rt700.md section 4: unsqueeze -> view_copy):
// between two NPU ops it joins their partition, and the NPU gives the CPU's bytes.
TEST(OracleOpsModels, ExpandDimsBetweenNpuOpsStaysOnTheNpu) {
  testing::TfliteBuilder b;
  const testing::QuantParams q = testing::PerTensor(0.05f, -3);
  const int x = b.AddTensor("x", {1, 4, 8}, TflType::kInt8, q);
  const int y = b.AddTensor("y", {1, 4, 8}, TflType::kInt8, q);
  const int z = b.AddTensor("z", {1, 1, 4, 8}, TflType::kInt8, q);
  const int sum = b.AddTensor("sum", {1, 4, 8}, TflType::kInt8, q);
  const int wide = b.AddTensor("wide", {1, 1, 4, 8}, TflType::kInt8, q);
  const int out = b.AddTensor("out", {1, 1, 4, 8}, TflType::kInt8, q);
  const int axis = b.AddConstInt32("axis", {1}, std::vector<int32_t>{1});
  b.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kAdd), {x, y}, {sum});
  b.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kExpandDims), {sum, axis}, {wide});
  b.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kAdd), {wide, z}, {out});
  b.SetInputs({x, y, z});
  b.SetOutputs({out});
  const std::vector<uint8_t> model = b.Finish();
  absl::StatusOr<compiler::CompileResult> npu = compiler::Compile(model, {});
  ASSERT_TRUE(npu.ok()) << npu.status();
  for (const compiler::Op& op : npu->compilation.graph.ops) {
    EXPECT_EQ(op.unit, compiler::Unit::kNpu)
        << npu->compilation.graph.Describe(op) << ": " << op.cpu_reason;
  }
  EXPECT_EQ(npu->compilation.num_partitions, 1);
  compiler::CompileOptions cpu_only;
  cpu_only.cpu_only = true;
  absl::StatusOr<compiler::CompileResult> cpu = compiler::Compile(model, cpu_only);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::vector<std::vector<uint8_t>> inputs;
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<uint8_t> bytes(32);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + seed * 11);
    inputs.push_back(bytes);
  }
  const runtime::testing::PteRun on_npu = runtime::testing::RunPte(npu->pte, inputs);
  const runtime::testing::PteRun on_cpu = runtime::testing::RunPte(cpu->pte, inputs);
  ASSERT_EQ(on_npu.error, runtime::Error::kOk) << on_npu.message;
  ASSERT_EQ(on_cpu.error, runtime::Error::kOk) << on_cpu.message;
  EXPECT_EQ(on_npu.outputs, on_cpu.outputs);
}

// ---------------------------------------------------------------------------------------------
// Cases the interpreter cannot check (op_cases.h `no_oracle`): expected outputs derived here from
// TFLite Micro's reference kernels, written independently of the runtime's code.

std::vector<int8_t> Int8s(const Bytes& b) { return {b.begin(), b.end()}; }
Bytes FromInt8s(const std::vector<int8_t>& v) { return {v.begin(), v.end()}; }

// BROADCAST_TO: output element (i_0..i_r) reads input element (j_k = 1 ? 0 : i_k), right-aligned.
Bytes BroadcastTo(const testing::TfliteBuilder& b, const CaseModel& m, int in, int out) {
  const std::vector<int32_t>& is = b.tensor(in).shape;
  const std::vector<int32_t>& os = b.tensor(out).shape;
  const int size = testing::TflTypeSize(b.tensor(in).type);
  int64_t total = 1;
  for (int32_t d : os) total *= d;
  Bytes result;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (int d = static_cast<int>(os.size()) - 1; d >= 0; --d) {
      const int64_t index = rest % os[d];
      rest /= os[d];
      const int id = d - static_cast<int>(os.size() - is.size());
      if (id < 0) continue;
      src += (is[id] == 1 ? 0 : index) * stride;
      stride *= is[id];
    }
    result.insert(result.end(), m.inputs[0].begin() + src * size,
                  m.inputs[0].begin() + (src + 1) * size);
  }
  return result;
}

// TFLite Micro's QuantizedMeanOrSum (compute_sum), rows of `n` values, one quantization `q`:
// round(float(sum) * 1 + float(-zp) * 1 * float(n)) + zp, kept to its low byte.
Bytes SumSameQuantization(const Bytes& input, int n, int zp) {
  std::vector<int8_t> in = Int8s(input), out;
  for (size_t r = 0; r * n < in.size(); ++r) {
    int32_t sum = 0;
    for (int k = 0; k < n; ++k) sum += in[r * n + k];
    const float bias = static_cast<float>(-zp) * 1.0f * static_cast<float>(n);
    const int32_t value = static_cast<int32_t>(std::round(static_cast<float>(sum) + bias)) + zp;
    out.push_back(static_cast<int8_t>(value & 0xFF));
  }
  return FromInt8s(out);
}

// SPACE_TO_BATCH_ND [1,3,2,1] with block (2, 1) and one row of padding on top: output batch
// b, row y, column x reads input row 2y + b - 1; the padded row is raw 0 in TFLite Micro.
Bytes SpaceToBatchPaddedRow(const Bytes& input) {
  std::vector<int8_t> in = Int8s(input), out;
  for (int b = 0; b < 2; ++b) {
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 2; ++x) {
        const int row = 2 * y + b - 1;
        out.push_back(row < 0 ? int8_t{0} : in[row * 2 + x]);
      }
    }
  }
  return FromInt8s(out);
}

float FloatAt(const Bytes& b, size_t i) {
  float v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

// TFLite's reference_ops::Round (RoundToNearest): ties to even, a negative input that rounds to
// zero gives floor + 1 = +0.
float TfliteRoundToNearest(float v) {
  const float floor_v = std::floor(v);
  const float diff = v - floor_v;
  if (diff < 0.5f || (diff == 0.5f && static_cast<int>(floor_v) % 2 == 0)) return floor_v;
  return floor_v + 1.0f;
}

Bytes RoundReference(const Bytes& in) {
  Bytes out(in.size());
  for (size_t i = 0; i < in.size() / 4; ++i) {
    const float r = TfliteRoundToNearest(FloatAt(in, i));
    std::memcpy(out.data() + 4 * i, &r, 4);
  }
  return out;
}

// TFLite Micro's ELU table entry for input q (elu.cc PopulateLookupTable): dequantize, x < 0 ?
// exp(x) - 1 : x, times 1 / out_scale, TfLiteRound (half away from zero), + zero point, all in
// float. `ties_to_even` rounds exact ties to even instead, as XNNPACK does.
int8_t EluEntry(int8_t q, const testing::QuantParams& in, const testing::QuantParams& out,
                bool ties_to_even) {
  const float x = in.scales[0] * static_cast<float>(q - in.zero_points[0]);
  const float y = x < 0.0f ? std::exp(x) - 1.0f : x;
  const float t = y * (1 / out.scales[0]);
  const float rounded = ties_to_even ? std::nearbyint(t) : std::round(t);
  const int32_t v = static_cast<int32_t>(rounded + static_cast<float>(out.zero_points[0]));
  return static_cast<int8_t>(std::clamp(v, -128, 127));
}

Bytes EluReference(const testing::TfliteBuilder& b, const CaseModel& m) {
  const testing::QuantParams& in = b.tensor(m.input_tensors[0]).quant;
  const testing::QuantParams& out = b.tensor(m.output_tensors[0]).quant;
  std::vector<int8_t> values;
  for (int8_t q : Int8s(m.inputs[0])) values.push_back(EluEntry(q, in, out, false));
  return FromInt8s(values);
}

bool IsInt8Case(const CaseModel& m) {
  return m.builder.tensor(m.input_tensors[0]).type == static_cast<int8_t>(TflType::kInt8);
}

// The XNNPACK-run ops whose TFLite Micro results differ from XNNPACK's (see
// XnnpackKnownDifferences), against TFLite Micro's arithmetic.
Bytes XnnpackRunReference(const OpCase& c, const CaseModel& m) {
  if (c.type == compiler::OpType::kRound) return RoundReference(m.inputs[0]);
  return EluReference(m.builder, m);
}

int XnnpackKnownDifferences(const OpCase& c, const CaseModel& m, const Bytes& mine, Bytes& want) {
  int changed = 0;
  if (c.type == compiler::OpType::kRound) {
    for (size_t i = 0; i < mine.size() / 4; ++i) {
      const float x = FloatAt(m.inputs[0], i);
      const bool negative_zero = FloatAt(want, i) == 0.0f && std::signbit(FloatAt(want, i));
      if (x >= -0.5f && x < 0.0f && negative_zero && FloatAt(mine, i) == 0.0f) {
        std::memcpy(want.data() + 4 * i, mine.data() + 4 * i, 4);
        ++changed;
      }
    }
  } else if (c.type == compiler::OpType::kElu && IsInt8Case(m)) {
    const testing::QuantParams& in = m.builder.tensor(m.input_tensors[0]).quant;
    const testing::QuantParams& out = m.builder.tensor(m.output_tensors[0]).quant;
    for (size_t i = 0; i < mine.size(); ++i) {
      const int8_t q = static_cast<int8_t>(m.inputs[0][i]);
      const int8_t away = EluEntry(q, in, out, false), even = EluEntry(q, in, out, true);
      if (away != even && static_cast<int8_t>(mine[i]) == away &&
          static_cast<int8_t>(want[i]) == even) {
        want[i] = mine[i];
        ++changed;
      }
    }
  }
  return changed;
}

std::vector<Bytes> HandDerived(const OpCase& c, const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const int out = m.output_tensors[0];
  switch (c.type) {
    case compiler::OpType::kZerosLike:
      return {Bytes(m.inputs[0].size(), 0)};
    case compiler::OpType::kBroadcastTo:
      return {BroadcastTo(b, m, m.input_tensors[0], out)};
    case compiler::OpType::kReduceMax:
    case compiler::OpType::kReduceMin: {
      const std::vector<int8_t> in = Int8s(m.inputs[0]);
      const bool max = c.type == compiler::OpType::kReduceMax;
      return {Bytes{static_cast<uint8_t>(max ? *std::max_element(in.begin(), in.end())
                                             : *std::min_element(in.begin(), in.end()))}};
    }
    case compiler::OpType::kSum:
      return {SumSameQuantization(m.inputs[0], b.tensor(m.input_tensors[0]).shape.back(),
                                  static_cast<int>(b.tensor(out).quant.zero_points[0]))};
    case compiler::OpType::kSpaceToBatchNd:
      return {SpaceToBatchPaddedRow(m.inputs[0])};
    default:
      ADD_FAILURE() << c.name << ": no hand-derived reference";
      return {};
  }
}

TEST(HandDerivedOpsTest, CasesTheInterpreterCannotCheckFollowTfliteMicro) {
  int checked = 0;
  for (const OpCase& c : testing::AllOpCases()) {
    if (c.no_oracle.empty()) continue;
    SCOPED_TRACE(c.name + " (" + c.no_oracle + ")");
    const CaseModel m = testing::SingleCaseModel(c);
    std::string error;
    const runtime::testing::PteRun run = CompileAndRun(m, &error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(run.outputs, HandDerived(c, m));
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

// The ops that XNNPACK runs in the interpreter with known differences from TFLite's kernels
// (XnnpackKnownDifferences) follow TFLite Micro's own arithmetic exactly.
TEST(HandDerivedOpsTest, OpsXnnpackComputesDifferentlyFollowTfliteMicro) {
  int checked = 0;
  for (const OpCase& c : testing::AllOpCases()) {
    const bool elu_int8 =
        c.type == compiler::OpType::kElu && c.name.find("int8") != std::string::npos;
    if (c.type != compiler::OpType::kRound && !elu_int8) continue;
    SCOPED_TRACE(c.name);
    const CaseModel m = testing::SingleCaseModel(c);
    std::string error;
    const runtime::testing::PteRun run = CompileAndRun(m, &error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_EQ(run.outputs.size(), 1u);
    EXPECT_EQ(run.outputs[0], XnnpackRunReference(c, m));
    ++checked;
  }
  EXPECT_GE(checked, 4);
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

// The hand-derived arithmetic itself, on numbers worked out by hand: a zero point of -3 adds
// 3 * 6 = 18 before it is subtracted again (15 in all), and the byte wraps.
TEST(HandDerivedOpsTest, SumReferenceOnWorkedNumbers) {
  EXPECT_EQ(Int8s(SumSameQuantization(FromInt8s({1, 2, 3, 4, 5, 6}), 6, -3)),
            (std::vector<int8_t>{36}));
  EXPECT_EQ(Int8s(SumSameQuantization(FromInt8s({100, 100}), 2, 0)), (std::vector<int8_t>{-56}));
}

}  // namespace
}  // namespace boardlab
