#pragma once

// The compile report: one table for people (terminal) and its machine-readable twin
// (report.json), built from the same rows.

#include <string>

#include "compiler/driver.h"

namespace boardlab::compiler {

/// report.json: {"model", "target", "board", "compiler_version", "ops": [{"index", "type",
/// "inputs", "output", "unit", "reason", "partition", "macs", "cycles", "us", "fused"}], "totals":
/// {...}, "memory": {...}, "warnings": [...], "stages_ms": {...}}.
std::string ReportJson(const CompileResult& result);

/// The terminal table: per op index, type, shapes, NPU/CPU, MACs, estimated cycles and µs, the
/// reason for every CPU op, then totals (NPU share of ops and MACs, arena, weights and their
/// placement, minimum SRAM scratch, estimated latency).
std::string ReportTable(const CompileResult& result);

/// Per-stage compile times, for `--timing`.
std::string TimingTable(const CompileResult& result);

}  // namespace boardlab::compiler
