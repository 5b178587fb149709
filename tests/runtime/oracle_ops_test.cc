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
#include "tests/runtime/tflm_reference.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using testing::CaseModel;
using testing::OpCase;
using testing::TflType;
using Bytes = std::vector<uint8_t>;
using tflm_reference::EluEntry;
using tflm_reference::FloatAt;
using tflm_reference::IsInt8Case;

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
    case TflType::kUint8:
      return "uint8";
    case TflType::kInt16:
      return "int16";
    default:
      return "int8";
  }
}

// The interpreter build cannot hand int64 outputs to JavaScript: the oracle runs the model
// with those outputs as int32 (ARG_MAX / ARG_MIN / SHAPE write the same values either way), and
// `widened[k]` marks the outputs whose int32 answers are compared as int64.
//
// The interpreter has no int8 DIV but runs uint8 DIV through the same arithmetic (TFLite's
// reference DivElementwise is one template for both types): an int8 DIV case runs as its uint8
// twin, every int8 tensor, zero point and value shifted by 128, and the answers are shifted back
// (`uint8_twin`).
struct OracleModel {
  testing::TypedOracleCase oracle;
  std::vector<bool> widened;
  bool uint8_twin = false;
};

Bytes FlipSignBits(Bytes bytes) {
  for (uint8_t& v : bytes) v ^= 0x80;
  return bytes;
}

bool NeedsUint8Twin(const OpCase& c, const CaseModel& m) {
  return c.type == compiler::OpType::kDiv &&
         m.builder.tensor(m.input_tensors[0]).type == static_cast<int8_t>(TflType::kInt8);
}

void MakeUint8Twin(testing::TfliteBuilder& b) {
  for (int t = 0; t < b.num_tensors(); ++t) {
    testing::TfliteBuilder::TensorSpec& spec = b.mutable_tensor(t);
    if (spec.type != static_cast<int8_t>(TflType::kInt8)) continue;
    spec.type = static_cast<int8_t>(TflType::kUint8);
    for (int64_t& zp : spec.quant.zero_points) zp += 128;
  }
}

// The interpreter's 16x8 DEPTHWISE_CONV_2D requires a bias, and its bias-less 16x8
// FULLY_CONNECTED and TRANSPOSE_CONV accumulate differently from TFLite Micro, which adds no bias
// to an int64 accumulator. The interpreter runs such a case with an all-zero int64 bias instead:
// the same sums, through its int64 path (`zero_bias_twin`).
bool NeedsZeroBiasTwin(const OpCase& c, const CaseModel& m) {
  const testing::TfliteBuilder::OperatorSpec& op = m.builder.operator_spec(0);
  const bool int16 = m.builder.tensor(op.outputs[0]).type == static_cast<int8_t>(TflType::kInt16);
  switch (c.type) {
    case compiler::OpType::kDepthwiseConv2D:
    case compiler::OpType::kFullyConnected:
      return int16 && op.inputs.size() == 3 && op.inputs[2] < 0;
    case compiler::OpType::kTransposeConv:
      return int16 && op.inputs.size() == 3;
    default:
      return false;
  }
}

// Gives the case's one operator an int64 bias of zeros, quantized as TFLite expects.
void AddZeroBias(testing::TfliteBuilder& b) {
  testing::TfliteBuilder::OperatorSpec& op = b.mutable_operator(0);
  const bool transposed = op.inputs.size() == 3 && op.inputs[2] >= 0;
  const int input = op.inputs[transposed ? 2 : 0];
  const testing::TfliteBuilder::TensorSpec& w = b.tensor(op.inputs[1]);
  const int32_t channels = w.shape[w.quant.axis];
  testing::QuantParams q;
  for (int32_t c = 0; c < channels; ++c) {
    q.scales.push_back(b.tensor(input).quant.scales[0] *
                       w.quant.scales[w.quant.scales.size() == 1 ? 0 : c]);
    q.zero_points.push_back(0);
  }
  const int bias = b.AddTensor("zero_bias", {channels}, TflType::kInt64, q,
                               std::vector<uint8_t>(static_cast<size_t>(channels) * 8, 0));
  testing::TfliteBuilder::OperatorSpec& same = b.mutable_operator(0);
  if (transposed) {
    same.inputs.push_back(bias);
  } else {
    same.inputs[2] = bias;
  }
}

OracleModel OracleCaseOf(const OpCase& op_case, const CaseModel& m) {
  OracleModel out;
  testing::TfliteBuilder b = m.builder;
  out.uint8_twin = NeedsUint8Twin(op_case, m);
  if (out.uint8_twin) MakeUint8Twin(b);
  if (NeedsZeroBiasTwin(op_case, m)) AddZeroBias(b);
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
  if (out.uint8_twin) {
    for (Bytes& in : c.inputs) in = FlipSignBits(in);
  }
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

runtime::testing::PteRun CompileAndRun(const CaseModel& m, std::string* error) {
  return runtime::testing::CompileAndRunCase(m.model, m.inputs, error);
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
// - RESIZE_BILINEAR int8: XNNPACK interpolates with its own fixed-point weights, one step off
//   TFLite's 1/1024 grid now and then; only elements one step apart, where ours equal
//   TFLite Micro's arithmetic (tflm_reference.h), are taken.
int XnnpackKnownDifferences(const OpCase& c, const CaseModel& m, const Bytes& mine, Bytes& want);

// L2_POOL_2D float32 is not XNNPACK's, but the interpreter's optimized L2Pool sums and divides in
// another order than the reference kernel TFLite Micro runs: elements one float ULP apart where
// ours equal the reference's arithmetic are taken; returns how many.
int OptimizedL2PoolDifferences(const CaseModel& m, const Bytes& mine, Bytes& want);

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
    oracle_models.push_back(OracleCaseOf(c, models.back()));
    oracle.push_back(oracle_models.back().oracle);
  }
  std::vector<std::vector<std::vector<uint8_t>>> expected;
  std::vector<std::vector<std::string>> nodes;
  std::string error;
  ASSERT_TRUE(testing::RunTfliteOracleTyped(oracle, &expected, &error, &nodes)) << error;
  struct Stats {
    int cases = 0, xnnpack = 0, bytes = 0, xnnpack_differences = 0, optimized_differences = 0;
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
      if (oracle_models[i].uint8_twin) want = FlipSignBits(want);
      if (xnnpack) {
        stats.xnnpack_differences +=
            XnnpackKnownDifferences(cases[i], models[i], run.outputs[k], want);
      } else if (cases[i].type == compiler::OpType::kL2Pool2D) {
        stats.optimized_differences += OptimizedL2PoolDifferences(models[i], run.outputs[k], want);
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
    if (s.optimized_differences > 0) {
      std::printf(", %d elements one ULP off in the interpreter's optimized kernel",
                  s.optimized_differences);
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
  } else if (c.type == compiler::OpType::kResizeBilinear) {
    const auto& o =
        std::get<testing::ResizeNearestNeighborOpts>(m.builder.operator_spec(0).options);
    const Bytes reference =
        tflm_reference::ResizeBilinearReference(m, o.align_corners, o.half_pixel_centers);
    for (size_t i = 0; i < mine.size() && i < want.size(); ++i) {
      const int step = static_cast<int8_t>(want[i]) - static_cast<int8_t>(mine[i]);
      if ((step == 1 || step == -1) && mine[i] == reference[i]) {
        want[i] = mine[i];
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

int OptimizedL2PoolDifferences(const CaseModel& m, const Bytes& mine, Bytes& want) {
  const auto& o = std::get<testing::Pool2DOpts>(m.builder.operator_spec(0).options);
  const Bytes reference = tflm_reference::L2PoolReference(m, o);
  int changed = 0;
  for (size_t i = 0; i + 4 <= mine.size() && i + 4 <= want.size(); i += 4) {
    int32_t a, b;
    std::memcpy(&a, mine.data() + i, 4);
    std::memcpy(&b, want.data() + i, 4);
    const bool one_ulp = a - b == 1 || b - a == 1;
    if (one_ulp && std::equal(mine.begin() + i, mine.begin() + i + 4, reference.begin() + i)) {
      std::copy(mine.begin() + i, mine.begin() + i + 4, want.begin() + i);
      ++changed;
    }
  }
  return changed;
}

}  // namespace
}  // namespace boardlab
