#pragma once

// ArmNN's CpuRef backend (Debian's libarmnn) as a peer for tests/bench/runtime_bench: it runs
// the same .tflite on the same input so the benchmark can print inferences per second of both
// in one process.

#include <cstdint>
#include <string>
#include <vector>

namespace boardlab::bench {

struct PeerRun {
  bool ok = false;
  std::string error;               // why the peer could not run the model
  double inferences_per_second = 0;
  int iterations = 0;
  std::vector<int8_t> output;      // output 0 of the last inference
};

/// Loads `model_path` into ArmNN CpuRef, then runs inferences on `input` (the raw bytes of input
/// 0) until `min_seconds` have passed (at least one). Never throws.
PeerRun RunArmnnCpuRef(const std::string& model_path, const std::vector<uint8_t>& input,
                       double min_seconds);

}  // namespace boardlab::bench
