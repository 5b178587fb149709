#pragma once

// Helpers of the importer's operand-check tests: one-op models built with TfliteBuilder, and
// expectations on the import status (its code and the phrases its message must hold).

#include <string>
#include <vector>

#include "compiler/driver.h"
#include "compiler/import_tflite.h"
#include "gtest/gtest.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing::validate_test {

using compiler::ImportTflite;
using compiler::OpType;

inline int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

inline const QuantParams kQ = PerTensor(0.05f, -3);

inline void Expect(const TfliteBuilder& b, absl::StatusCode code,
                   const std::vector<std::string>& phrases,
                   std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> local;
  absl::StatusOr<compiler::Graph> g = ImportTflite(b.Finish(), warnings ? warnings : &local);
  if (code == absl::StatusCode::kOk) {
    EXPECT_TRUE(g.ok()) << g.status();
    return;
  }
  ASSERT_FALSE(g.ok()) << "imported a bad model";
  EXPECT_EQ(g.status().code(), code) << g.status();
  for (const std::string& p : phrases) {
    EXPECT_NE(g.status().message().find(p), std::string_view::npos)
        << "missing \"" << p << "\" in: " << g.status().message();
  }
}

inline void ExpectInvalid(const TfliteBuilder& b, const std::vector<std::string>& phrases) {
  Expect(b, absl::StatusCode::kInvalidArgument, phrases);
}
inline void ExpectUnsupported(const TfliteBuilder& b, const std::vector<std::string>& phrases) {
  Expect(b, absl::StatusCode::kUnimplemented, phrases);
}

// One op with the given inputs and one output; the activation inputs are graph inputs.
struct OneOp {
  TfliteBuilder b;
  std::vector<int32_t> graph_inputs;
  int Act(std::vector<int32_t> shape, TflType type = TflType::kInt8, QuantParams q = kQ) {
    if (type != TflType::kInt8) q = {};
    const int t = b.AddTensor("a" + std::to_string(b.num_tensors()), shape, type, q);
    graph_inputs.push_back(t);
    return t;
  }
  int Out(std::vector<int32_t> shape, TflType type = TflType::kInt8, QuantParams q = kQ) {
    if (type != TflType::kInt8) q = {};
    return b.AddTensor("out" + std::to_string(b.num_tensors()), shape, type, q);
  }
  TfliteBuilder& Op(OpType type, std::vector<int32_t> in, std::vector<int32_t> out,
                    BuilderOptions options = {}) {
    b.AddOperator(Code(type), in, out, std::move(options));
    b.SetInputs(graph_inputs);
    b.SetOutputs(out);
    return b;
  }
};

/// Every case compiles, each op onto the CPU with a reason that holds `reason` (any where empty).
inline void ExpectEveryCaseOnTheCpu(const std::vector<OpCase>& cases,
                                    const std::string& reason = "") {
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<compiler::CompileResult> r = compiler::Compile(SingleCaseModel(c).model, {});
    ASSERT_TRUE(r.ok()) << r.status();
    for (const compiler::Op& op : r->compilation.graph.ops) {
      EXPECT_EQ(op.unit, compiler::Unit::kCpu);
      EXPECT_FALSE(op.cpu_reason.empty());
      EXPECT_NE(op.cpu_reason.find(reason), std::string::npos) << op.cpu_reason;
    }
  }
}

}  // namespace boardlab::testing::validate_test
