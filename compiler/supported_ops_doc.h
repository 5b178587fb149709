#pragma once

// Generates docs/supported-ops.md from the NPU constraint tables (npu_constraints.h), the way
// Vela generates SUPPORTED_OPS.md: the document and the partitioner read the same data.
//
// Usage:
//   std::string markdown = GenerateSupportedOpsMarkdown(target.npu);

#include <string>

#include "compiler/target_spec.h"

namespace boardlab::compiler {

/// The operator support table as Markdown: the limits in force, the generic NPU constraints and,
/// per op type, its NPU constraints. Every op type is also supported on the Cortex-M33. The
/// output depends only on `limits` and the tables, so a test can compare it with the checked-in
/// docs/supported-ops.md.
std::string GenerateSupportedOpsMarkdown(const NpuLimits& limits);

}  // namespace boardlab::compiler
