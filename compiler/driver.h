#pragma once

// The compiler pipeline (STYLE.md rule 14): import, canonicalize, tensor format, partition,
// plan memory, lower NPU partitions, place weights, estimate cost, serialize. Each stage verifies
// the graph when it is done; stage times are recorded for `--timing`.
//
// Usage:
//   absl::StatusOr<CompileResult> result = Compile(model_bytes, options);
//   WriteFile("model.pte", result->pte);

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

struct StageTiming {
  std::string stage;
  double milliseconds = 0;
};

struct CompileResult {
  Compilation compilation;
  std::vector<uint8_t> pte;    // the artifact
  std::string report_json;     // report.json
  std::string debug_map_json;  // NPU kernel / CPU instruction -> source ops
  std::vector<StageTiming> timings;
};

/// Compiles a TFLite model. Errors: InvalidArgument (malformed model or options), Unimplemented
/// (the model uses something boardlab does not support), NotFound (unknown target or board),
/// FailedPrecondition (the model does not fit the board).
absl::StatusOr<CompileResult> Compile(std::span<const uint8_t> model,
                                      const CompileOptions& options);

/// The compiler's version string; part of the server's compile-cache key.
std::string CompilerVersion();

}  // namespace boardlab::compiler
