// boardlab-compile: TFLite int8 model -> RT700 artifact (.pte) + report.
//
// Exit codes: 0 ok, 1 I/O error, 2 usage, 3 invalid model, 4 unsupported model (including "does
// not fit the board"). Errors go to stderr as one line that says what and where.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "compiler/driver.h"
#include "compiler/report.h"

namespace {

using boardlab::compiler::CompileOptions;
using boardlab::compiler::FormatConversion;
using boardlab::compiler::WeightsPlacement;

constexpr int kExitIo = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInvalidModel = 3;
constexpr int kExitUnsupported = 4;

struct Args {
  std::string model;
  std::string output;
  std::string report;
  std::string debug_map;
  std::string weights = "auto";
  std::string format_conversion = "npu";
  std::string no_npu;
  int64_t sram_budget = -1;
  bool quiet = false;
  bool timing = false;
  CompileOptions options;
};

int Fail(int code, const std::string& message) {
  std::cerr << "boardlab-compile: " << message << "\n";
  return code;
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return absl::StartsWith(status.message(), "invalid model") ? kExitInvalidModel : kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitUsage;
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
      return kExitUnsupported;
    default:
      return kExitIo;
  }
}

// Translates the option strings into CompileOptions; returns an error message or "".
std::string ResolveOptions(Args& args) {
  CompileOptions& o = args.options;
  if (args.weights == "auto") {
    o.weights = WeightsPlacement::kAuto;
  } else if (args.weights == "sram") {
    o.weights = WeightsPlacement::kSram;
  } else if (args.weights == "flash") {
    o.weights = WeightsPlacement::kFlash;
  } else {
    return "--weights must be auto, sram or flash, not '" + args.weights + "'";
  }
  if (args.format_conversion == "npu") {
    o.format_conversion = FormatConversion::kNpu;
  } else if (args.format_conversion == "cpu") {
    o.format_conversion = FormatConversion::kCpu;
  } else {
    return "--format-conversion must be npu or cpu, not '" + args.format_conversion + "'";
  }
  if (args.sram_budget == 0 || args.sram_budget < -1) {
    return "--sram-budget must be a positive number of bytes";
  }
  if (args.sram_budget > 0) o.sram_budget = args.sram_budget;
  for (absl::string_view piece : absl::StrSplit(args.no_npu, ',', absl::SkipEmpty())) {
    const std::string name(piece);
    auto type = boardlab::compiler::OpTypeFromName(name);
    if (!type) {
      return "--no-npu: unknown operator '" + std::string(name) +
             "' (supported: " + boardlab::compiler::SupportedOpNames() + ")";
    }
    o.no_npu.push_back(*type);
  }
  return "";
}

bool ReadFile(const std::string& path, std::vector<uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

void AddOptions(CLI::App& app, Args& args) {
  app.add_option("model", args.model, "int8 TFLite model")->required();
  app.add_option("-o,--output", args.output, "artifact to write (.pte)")->required();
  app.add_option("--target", args.options.target, "target spec name or .json file")
      ->default_val("imxrt700");
  app.add_option("--board", args.options.board, "board profile name or .json file");
  app.add_option("--report", args.report, "write the report as JSON to this file");
  app.add_option("--debug-map", args.debug_map, "write the debug map (JSON) to this file");
  app.add_option("--weights", args.weights, "weight placement: auto, sram or flash")
      ->default_val("auto");
  app.add_option("--sram-budget", args.sram_budget, "SRAM bytes for the model (board default)");
  app.add_option("--format-conversion", args.format_conversion,
                 "where NCHW<->NHWC transposes run: npu or cpu")
      ->default_val("npu");
  app.add_option("--no-npu", args.no_npu, "keep these operators on the CPU: OP[,OP]");
  app.add_flag("--cpu-only", args.options.cpu_only, "put every operator on the CPU");
  app.add_flag("-q,--quiet", args.quiet, "print nothing on success");
  app.add_flag("--timing", args.timing, "print the time each compiler stage took");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"boardlab-compile: compile an int8 TFLite model for the NXP i.MX RT700"};
  Args args;
  AddOptions(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (std::string error = ResolveOptions(args); !error.empty()) return Fail(kExitUsage, error);

  std::vector<uint8_t> model;
  if (!ReadFile(args.model, model)) {
    return Fail(kExitIo, "reading input file '" + args.model + "': cannot open it");
  }
  absl::StatusOr<boardlab::compiler::CompileResult> result =
      boardlab::compiler::Compile(model, args.options);
  if (!result.ok()) {
    return Fail(ExitCodeFor(result.status()),
                args.model + ": " + std::string(result.status().message()));
  }
  if (!WriteFile(args.output, result->pte.data(), result->pte.size())) {
    return Fail(kExitIo, "writing artifact '" + args.output + "' failed");
  }
  if (!args.report.empty() &&
      !WriteFile(args.report, result->report_json.data(), result->report_json.size())) {
    return Fail(kExitIo, "writing report '" + args.report + "' failed");
  }
  if (!args.debug_map.empty() &&
      !WriteFile(args.debug_map, result->debug_map_json.data(), result->debug_map_json.size())) {
    return Fail(kExitIo, "writing debug map '" + args.debug_map + "' failed");
  }
  if (!args.quiet) std::cout << boardlab::compiler::ReportTable(*result);
  if (args.timing) std::cout << "\n" << boardlab::compiler::TimingTable(*result);
  return 0;
}
