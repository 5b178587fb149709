// uint32 and uint64 tensors (TFLite TensorType UINT32 15 and UINT64 12): imported, sized and
// named, written to the .pte as ExecuTorch's UINT32 28 and UINT64 29 and read back by the
// runtime; refused, with the importer's one listing of every problem, by each op that takes
// neither (only TFLite Micro's signal library ops do).

#include <string>

#include "compiler/import_tflite.h"
#include "compiler/ir.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"

namespace boardlab::testing {
namespace {

using compiler::DataType;
using validate_test::ExpectUnsupported;
using validate_test::OneOp;

TEST(UnsignedTypes, SizesAndNames) {
  EXPECT_EQ(compiler::DataTypeSize(DataType::kUint32), 4);
  EXPECT_EQ(compiler::DataTypeSize(DataType::kUint64), 8);
  EXPECT_STREQ(compiler::DataTypeName(DataType::kUint32), "uint32");
  EXPECT_STREQ(compiler::DataTypeName(DataType::kUint64), "uint64");
}

// A graph input that no op reads keeps its type: the importer maps the TFLite codes.
TEST(UnsignedTypes, ImportedFromTheirTfliteCodes) {
  TfliteBuilder b;
  const int u32 = b.AddTensor("u32", {3}, TflType::kUint32);
  const int u64 = b.AddTensor("u64", {2, 2}, TflType::kUint64);
  const int a = b.AddTensor("a", {4}, TflType::kInt8, validate_test::kQ);
  const int c = b.AddTensor("c", {4}, TflType::kInt8, validate_test::kQ);
  b.AddOperator(compiler::OpTypeTfliteCode(compiler::OpType::kRelu), {a}, {c});
  b.SetInputs({a, u32, u64});
  b.SetOutputs({c});
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(b.Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensors[static_cast<size_t>(u32)].type, DataType::kUint32);
  EXPECT_EQ(g->tensors[static_cast<size_t>(u32)].SizeBytes(), 12);
  EXPECT_EQ(g->tensors[static_cast<size_t>(u64)].type, DataType::kUint64);
  EXPECT_EQ(g->tensors[static_cast<size_t>(u64)].SizeBytes(), 32);
}

// ADD on uint32 and MUL on uint64 are each refused, both in the one message.
TEST(UnsignedTypes, OpsWithoutAnUnsignedKernelRefuseThem) {
  OneOp m;
  const int a = m.Act({4}, TflType::kUint32);
  const int b = m.Act({4}, TflType::kUint32);
  const int sum = m.Out({4}, TflType::kUint32);
  m.b.AddOperator(validate_test::Code(compiler::OpType::kAdd), {a, b}, {sum});
  const int c = m.Act({4}, TflType::kUint64);
  const int product = m.Out({4}, TflType::kUint64);
  m.Op(compiler::OpType::kMul, {c, c}, {product});
  m.b.SetOutputs({sum, product});
  ExpectUnsupported(m.b, {"2 problems", "ADD #0", "uint32", "MUL #1", "uint64"});
}

}  // namespace
}  // namespace boardlab::testing
