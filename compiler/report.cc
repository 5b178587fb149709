#include "compiler/report.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace boardlab::compiler {
namespace {

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kNpu:
      return "NPU";
    case Unit::kCpu:
      return "CPU";
    case Unit::kRemoved:
      return "removed";
    case Unit::kUnassigned:
      break;
  }
  return "-";
}

std::string ShapeText(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// The shapes of an op's activation inputs (constants are weights, shown elsewhere).
std::string InputShapes(const Graph& g, const Op& op) {
  std::vector<std::string> shapes;
  for (int t : op.inputs) {
    if (t != kNoTensor && !g.tensors[t].is_constant)
      shapes.push_back(ShapeText(g.tensors[t].shape));
  }
  return absl::StrJoin(shapes, " ");
}

struct Totals {
  int npu_ops = 0, cpu_ops = 0;
  int64_t npu_macs = 0, total_macs = 0;
};

// Static counts: each op once, a loop body's too (its trip count is only known at run time).
Totals ComputeTotals(const Compilation& c) {
  Totals t;
  auto count = [&](const Op& op) {
    const int64_t macs = c.graph.Macs(op);
    t.total_macs += macs;
    if (op.unit == Unit::kNpu) {
      ++t.npu_ops;
      t.npu_macs += macs;
    } else {
      ++t.cpu_ops;
    }
  };
  for (const Op& op : c.graph.ops) count(op);
  for (const Subgraph& sub : c.graph.subgraphs) {
    if (sub.copy > 0) continue;  // the same TFLite ops as the subgraph it copies
    for (const Op& op : sub.ops) count(op);
  }
  return t;
}

OpCost CostOf(const std::vector<OpCost>& costs, size_t i) {
  return i < costs.size() ? costs[i] : OpCost{};
}

const std::vector<OpCost>& SubgraphCosts(const Compilation& c, size_t k) {
  static const std::vector<OpCost> kNone;
  return k < c.subgraph_op_costs.size() ? c.subgraph_op_costs[k] : kNone;
}

// report.json's row of one op; `subgraph` is 0 for the main graph, else graph.subgraph(k) that
// IF or WHILE calls, named by the TFLite subgraph its op indices count in (and which copy).
nlohmann::json OpJson(const Graph& g, const Op& op, const OpCost& cost, int subgraph) {
  nlohmann::json inputs = nlohmann::json::array();
  for (int t : op.inputs) {
    if (t != kNoTensor && !g.tensors[t].is_constant) inputs.push_back(g.tensors[t].shape);
  }
  nlohmann::json row = {
      {"index", op.source_index},
      {"type", OpTypeName(op.type)},
      {"name", op.outputs.empty() ? std::string() : g.output(op).name},
      {"inputs", inputs},
      {"output", op.outputs.empty() ? std::vector<int32_t>() : g.output(op).shape},
      {"unit", UnitName(op.unit)},
      {"reason", op.cpu_reason},
      {"partition", op.partition},
      {"fused", op.fused_sources},
      {"macs", g.Macs(op)},
      {"cycles", cost.cycles},
      {"us", cost.microseconds},
      {"npu_utilization", cost.utilization}};
  if (subgraph > 0) row["subgraph"] = g.SourceSubgraph(subgraph);
  if (subgraph > 0 && g.subgraph(subgraph).copy > 0) row["copy"] = g.subgraph(subgraph).copy;
  return row;
}

std::string OpLine(const Graph& g, const Op& op, const OpCost& cost, int subgraph) {
  std::string type(OpTypeName(op.type));
  if (!op.fused_sources.empty()) type += "+act";
  // "2:0" for op 0 of subgraph 2, "2/1:0" in its first copy.
  std::string index = absl::StrCat(op.source_index);
  if (subgraph > 0) {
    const int copy = g.subgraph(subgraph).copy;
    index = absl::StrCat(g.SourceSubgraph(subgraph), copy > 0 ? absl::StrCat("/", copy) : "", ":",
                         op.source_index);
  }
  return absl::StrFormat(
      "%-5s %-24s %-22s %-16s %-4s %4s %12d %10d %9.1f\n", index, type, InputShapes(g, op),
      op.outputs.empty() ? std::string("-") : ShapeText(g.output(op).shape), UnitName(op.unit),
      op.partition >= 0 ? absl::StrCat(op.partition) : std::string("-"), g.Macs(op), cost.cycles,
      cost.microseconds);
}

double Percent(int64_t part, int64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

std::string Bytes(int64_t bytes) {
  if (bytes >= 1 << 20) return absl::StrFormat("%d B (%.2f MiB)", bytes, bytes / 1048576.0);
  if (bytes >= 1 << 10) return absl::StrFormat("%d B (%.1f KiB)", bytes, bytes / 1024.0);
  return absl::StrFormat("%d B", bytes);
}

}  // namespace

std::string ReportJson(const CompileResult& result) {
  const Compilation& c = result.compilation;
  const Graph& g = c.graph;
  nlohmann::json ops = nlohmann::json::array();
  for (size_t i = 0; i < g.ops.size(); ++i)
    ops.push_back(OpJson(g, g.ops[i], CostOf(c.op_costs, i), 0));
  for (size_t k = 0; k < g.subgraphs.size(); ++k) {
    const std::vector<Op>& sub_ops = g.subgraphs[k].ops;
    for (size_t i = 0; i < sub_ops.size(); ++i) {
      ops.push_back(OpJson(g, sub_ops[i], CostOf(SubgraphCosts(c, k), i), static_cast<int>(k + 1)));
    }
  }
  const Totals t = ComputeTotals(c);
  const MemoryPlan& m = c.memory;
  nlohmann::json stages = nlohmann::json::object();
  for (const StageTiming& s : result.timings) stages[s.stage] = s.milliseconds;
  nlohmann::json report = {
      {"target", c.target.name},
      {"board", c.board.name},
      {"compiler_version", CompilerVersion()},
      {"ops", ops},
      {"totals",
       {{"ops", t.npu_ops + t.cpu_ops},
        {"npu_ops", t.npu_ops},
        {"cpu_ops", t.cpu_ops},
        {"npu_partitions", c.num_partitions},
        {"macs", t.total_macs},
        {"npu_macs", t.npu_macs},
        {"npu_macs_percent", Percent(t.npu_macs, t.total_macs)},
        {"estimated_latency_us", c.total_microseconds}}},
      {"memory",
       {{"arena_bytes", m.arena_bytes},
        {"arena_lower_bound_bytes", m.arena_lower_bound},
        {"state_bytes", m.state_bytes},
        {"weight_bytes", m.weight_bytes},
        {"weights_placement", m.weights_in_flash ? "flash" : "sram"},
        {"weight_scratch_bytes", m.weight_scratch_bytes},
        {"min_weight_scratch_bytes", m.min_weight_scratch_bytes},
        {"sram_budget_bytes", m.sram_budget_bytes},
        {"sram_used_bytes", m.sram_used_bytes}}},
      {"artifact_bytes", result.pte.size()},
      {"warnings", c.warnings},
      {"stages_ms", stages},
  };
  return report.dump(2) + "\n";
}

std::string ReportTable(const CompileResult& result) {
  const Compilation& c = result.compilation;
  const Graph& g = c.graph;
  std::string out = absl::StrFormat("%-5s %-24s %-22s %-16s %-4s %4s %12s %10s %9s\n", "op", "type",
                                    "input", "output", "unit", "part", "MACs", "cycles", "us");
  std::vector<std::string> reasons;
  auto add = [&](const Op& op, const OpCost& cost, int subgraph) {
    out += OpLine(g, op, cost, subgraph);
    if (op.unit == Unit::kCpu && !op.cpu_reason.empty()) reasons.push_back(op.cpu_reason);
  };
  for (size_t i = 0; i < g.ops.size(); ++i) add(g.ops[i], CostOf(c.op_costs, i), 0);
  for (size_t k = 0; k < g.subgraphs.size(); ++k) {
    const std::vector<Op>& sub_ops = g.subgraphs[k].ops;
    for (size_t i = 0; i < sub_ops.size(); ++i) {
      add(sub_ops[i], CostOf(SubgraphCosts(c, k), i), static_cast<int>(k + 1));
    }
  }
  if (!reasons.empty()) {
    out += "\nOn the CPU, and why:\n";
    for (const std::string& r : reasons) out += absl::StrCat("  ", r, "\n");
  }
  const Totals t = ComputeTotals(c);
  const MemoryPlan& m = c.memory;
  out += absl::StrFormat("\nops        %d on the NPU in %d partition(s), %d on the CPU\n",
                         t.npu_ops, c.num_partitions, t.cpu_ops);
  out += absl::StrFormat("MACs       %d, %.1f%% on the NPU\n", t.total_macs,
                         Percent(t.npu_macs, t.total_macs));
  out += absl::StrFormat("arena      %s (lower bound %s)\n", Bytes(m.arena_bytes),
                         Bytes(m.arena_lower_bound));
  if (m.state_bytes > 0) {
    out += absl::StrFormat("state      %s variable tensors, kept between inferences\n",
                           Bytes(m.state_bytes));
  }
  out += absl::StrFormat("weights    %s in %s\n", Bytes(m.weight_bytes),
                         m.weights_in_flash ? "external flash (prefetched)" : "SRAM");
  if (m.weights_in_flash) {
    out += absl::StrFormat("scratch    %s SRAM weight window (minimum %s)\n",
                           Bytes(m.weight_scratch_bytes), Bytes(m.min_weight_scratch_bytes));
  }
  out += absl::StrFormat("SRAM       %s of %s budget (%s)\n", Bytes(m.sram_used_bytes),
                         Bytes(m.sram_budget_bytes), c.board.name);
  out +=
      absl::StrFormat("latency    %.1f us estimated on %s\n", c.total_microseconds, c.target.name);
  if (!g.subgraphs.empty()) {
    out +=
        "           (the ops of called subgraphs, rows s:i above (s/c:i in copy c), are costed "
        "for one run each and "
        "left out: how often IF or WHILE runs them is known only at run time)\n";
  }
  for (const std::string& w : c.warnings) out += absl::StrCat("warning: ", w, "\n");
  return out;
}

std::string TimingTable(const CompileResult& result) {
  std::string out;
  double total = 0;
  for (const StageTiming& s : result.timings) {
    out += absl::StrFormat("%-14s %8.2f ms\n", s.stage, s.milliseconds);
    total += s.milliseconds;
  }
  out += absl::StrFormat("%-14s %8.2f ms\n", "total", total);
  return out;
}

}  // namespace boardlab::compiler
