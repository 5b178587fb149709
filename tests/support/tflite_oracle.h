#pragma once

// The TFLite interpreter as a conformance oracle for single-op models: runs .tflite models
// through @tensorflow/tfjs-tflite (TFLite's C++ kernels compiled to WebAssembly) under node, via
// tests/oracle/run_tflite.js. deploy/install-node-deps.sh installs the package into
// <repo>/build-deps/node.
//
// Usage:
//   if (auto why = TfliteOracleUnavailable()) GTEST_SKIP() << *why;
//   std::vector<OracleCase> cases = {{model_bytes, {input_bytes}}};
//   std::vector<std::vector<uint8_t>> outputs;
//   std::string error;
//   ASSERT_TRUE(RunTfliteOracle(cases, &outputs, &error)) << error;
//
// Note: the package applies the XNNPACK delegate by default; the ops it takes over are computed
// by XNNPACK (float requantization, its own tables and rounding), not by TFLite's kernels. See
// shared/reference/tflite-int8.md section 13 for what differences to expect, and
// RunTfliteOracleTyped's `node_types` to learn which ops it took.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace boardlab::testing {

struct OracleCase {
  std::vector<uint8_t> model;                // .tflite bytes
  std::vector<std::vector<uint8_t>> inputs;  // raw bytes per model input (int8 or float32)
};

/// The repository root (BOARDLAB_REPO, else derived from the shared folder location).
std::string RepoRoot();

/// Why the oracle cannot run (node missing, package not installed), or nullopt when it can.
std::optional<std::string> TfliteOracleUnavailable();

/// Runs every case in one node process; `outputs` receives output 0's raw bytes per case.
/// False with `error` set when node fails or an output is missing.
bool RunTfliteOracle(const std::vector<OracleCase>& cases,
                     std::vector<std::vector<uint8_t>>* outputs, std::string* error);

/// A case whose tensors are described by TFLite type name ("int8", "uint8", "int16", "int32",
/// "int64", "float32", "bool"): for models with non-int8 tensors or several outputs.
struct TypedOracleCase {
  std::vector<uint8_t> model;
  std::vector<std::string> input_types;
  std::vector<std::vector<int32_t>> input_shapes;  // the interpreter reports scalars as [0]
  std::vector<std::vector<uint8_t>> inputs;        // raw little-endian bytes per model input
  std::vector<std::string> output_types;           // one per model output
  /// The inputs of further inferences of the same interpreter (variable tensors keep their
  /// state from one to the next), each like `inputs`.
  std::vector<std::vector<std::vector<uint8_t>>> later_inputs;
};

/// Runs every case in one node process; `outputs[case][k]` receives output k's bytes in its type
/// (with later_inputs, the outputs of every inference in turn: inference i's output k at
/// i * output_types.size() + k).
/// With `node_types`, each case is profiled and `(*node_types)[case]` lists the type of every node
/// the interpreter ran ("TfLiteXNNPackDelegate" where XNNPACK took the op over).
bool RunTfliteOracleTyped(const std::vector<TypedOracleCase>& cases,
                          std::vector<std::vector<std::vector<uint8_t>>>* outputs,
                          std::string* error,
                          std::vector<std::vector<std::string>>* node_types = nullptr);

/// One model over several inferences of one interpreter (`inferences[i]`: the bytes of every
/// input of inference i): `outputs` receives inference i's output k at i * output_types.size() +
/// k. False with `error` set as RunTfliteOracleTyped.
bool RunTfliteOracleInferences(const std::vector<uint8_t>& model,
                               const std::vector<std::string>& input_types,
                               const std::vector<std::vector<int32_t>>& input_shapes,
                               const std::vector<std::string>& output_types,
                               const std::vector<std::vector<std::vector<uint8_t>>>& inferences,
                               std::vector<std::vector<uint8_t>>* outputs, std::string* error);

/// The node type the interpreter reports for ops the XNNPACK delegate ran.
inline constexpr const char* kXnnpackNode = "TfLiteXNNPackDelegate";

}  // namespace boardlab::testing
