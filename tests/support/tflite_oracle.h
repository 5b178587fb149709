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
// Note: the interpreter requantizes in float (XNNPACK), TFLite Micro in integers; see
// shared/reference/tflite-int8.md section 13 for what differences to expect.

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

}  // namespace boardlab::testing
