// firmware_bench: QEMU guest instructions of the portable runtime's CPU kernels on a Cortex-M33
// (boardlab-firmware on QEMU mps2-an505, --cpu-only artifacts compiled in-process, -icount
// shift=0: the timer then counts guest instructions, identically on every run). Two tables:
//
// 1. Per MAC: for each shared model (../shared/models), instructions per inference, the compiled
//    graph's MACs (Graph::Macs summed over its ops) and instructions per MAC against the target.
//    Anchor (shared/reference/neutron-rt700.md 10.3): the best Cortex-M33 MLPerf Tiny submissions
//    need 1.3-1.9 cycles per MAC; the target is <= 2 instructions per MAC on the conv-heavy
//    models.
// 2. Per element: the element-wise, comparison, logical and row ops of issue 13 (with TFLite
//    Micro's signal ops SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE, SIGNAL_DELAY, the filter bank
//    stage SIGNAL_ENERGY, SIGNAL_FILTER_BANK, _SQUARE_ROOT, _LOG, SIGNAL_PCAN,
//    _SPECTRAL_SUBTRACTION, the real FFTs SIGNAL_RFFT and SIGNAL_IRFFT (64-point rows: per
//    sample) and the streaming SIGNAL_FRAMER, SIGNAL_STACKER, SIGNAL_OVERLAP_ADD and
//    CIRCULAR_BUFFER), one single-op model per op (tests/support PerElementCases) at two sizes.
//    (instructions(large) - instructions(small)) / (elements(large) - elements(small)) is the
//    kernel's cost per element without the fixed cost of an inference (dispatch, planning, op setup
//    such as ELU's table). The reference is int8 ADD, the established element-wise kernel, measured
//    in the same run: "vs ADD" is the op's per-element figure over ADD's. No target is set for this
//    table.
//
//   firmware_bench [--models | --ops] [FILTER...]
//
// --models runs only table 1, --ops only table 2. A FILTER keeps the models whose file stem and
// the op cases whose name ("DIV int8") contain it, case-insensitively. Instructions are not
// cycles (QEMU does not model M33 timing): the figures are a lower bound on cycles and a measure
// of how much work a kernel does per element, not a timing. The firmware ELF and runner come
// from the build, overridable with BOARDLAB_FIRMWARE_ELF / BOARDLAB_QEMU_RUNNER.

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/driver.h"
#include "tests/support/op_cases.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
namespace testing = boardlab::testing;

constexpr double kTargetInstructionsPerMac = 2.0;
// Conv-heavy models the target applies to (FC / element-wise graphs cost more per MAC).
constexpr std::string_view kConvHeavy[] = {"vww", "resnet8", "kws", "mobilenet_v2"};
// The two sizes of the per-element table (multiples of PerElementCases' row length, 64).
constexpr int32_t kSmallElements = 1024;
constexpr int32_t kLargeElements = 16384;

std::string FromEnvironmentOr(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : built_in;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Options {
  bool models = true, ops = true;
  std::vector<std::string> filters;  // lower case

  // True when no filter is given or `name` contains one.
  bool Wanted(std::string_view name) const {
    const std::string lower = Lower(name);
    if (filters.empty()) return true;
    return std::any_of(filters.begin(), filters.end(),
                       [&](const std::string& f) { return lower.find(f) != std::string::npos; });
  }
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--models") == 0) {
      o.ops = false;
    } else if (std::strcmp(argv[i], "--ops") == 0) {
      o.models = false;
    } else {
      o.filters.push_back(Lower(argv[i]));
    }
  }
  return o;
}

std::string Stem(std::string_view model) {
  const std::string file(model.substr(model.find('/') + 1));
  return file.substr(0, file.find('.'));
}

bool ConvHeavy(const std::string& stem) {
  for (std::string_view prefix : kConvHeavy) {
    if (stem.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The number after `key` in `text`, if any.
std::optional<unsigned long long> NumberAfter(const std::string& text, const std::string& key) {
  const size_t at = text.rfind(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtoull(text.c_str() + at + key.size(), nullptr, 10);
}

// Runs boardlab-firmware under QEMU with -icount shift=0.
class Firmware {
 public:
  Firmware(std::string runner, std::string elf)
      : runner_(std::move(runner)), elf_(std::move(elf)) {}

  struct Run {
    testing::CommandResult result;
    std::optional<unsigned long long> instructions;  // per inference; empty on failure
  };
  // `args` are the firmware's: the artifact, then --input / --expected ...
  Run Execute(const std::string& args) const {
    Run run;
    run.result =
        testing::RunCommand(runner_ + " --elf " + elf_ + " --icount 0 --timeout 900 -- " + args);
    if (run.result.exit_code == 0)
      run.instructions = NumberAfter(run.result.output, "instructions ");
    return run;
  }

 private:
  std::string runner_, elf_;
};

// Compiles `model` for the CPU alone and writes the artifact to `pte`.
absl::Status CompileCpuOnly(const std::vector<uint8_t>& model, const std::string& pte,
                            int64_t* macs) {
  boardlab::compiler::CompileOptions options;
  options.cpu_only = true;
  absl::StatusOr<boardlab::compiler::CompileResult> compiled =
      boardlab::compiler::Compile(model, options);
  if (!compiled.ok()) return compiled.status();
  if (macs != nullptr) {
    const boardlab::compiler::Graph& graph = compiled->compilation.graph;
    *macs = 0;
    for (const boardlab::compiler::Op& op : graph.ops) {
      if (!op.dead) *macs += graph.Macs(op);
    }
  }
  if (!testing::WriteFile(pte, compiled->pte)) {
    return absl::InternalError("cannot write " + pte);
  }
  return absl::OkStatus();
}

// Table 1; returns the number of models that failed.
int PerMacTable(const Options& o, const Firmware& firmware, const fs::path& dir) {
  if (!fs::exists(testing::SharedModelsDir())) {
    std::printf("per-MAC table: shared models folder absent (%s); skipped\n\n",
                testing::SharedModelsDir().c_str());
    return 0;
  }
  std::printf(
      "Per MAC. anchor: best Cortex-M33 MLPerf Tiny submissions need 1.3-1.9 cycles per MAC "
      "(neutron-rt700.md 10.3); target <= %.1f instructions per MAC on the conv-heavy "
      "models (vww, resnet8, kws, mobilenet_v2)\n\n",
      kTargetInstructionsPerMac);
  std::printf("%-32s %14s %16s %10s %10s %6s %s\n", "model", "MACs", "instructions", "instr/MAC",
              "vs target", "", "check");
  int failures = 0;
  for (std::string_view relative : testing::kRealModels) {
    const std::string stem = Stem(relative);
    if (!o.Wanted(stem)) continue;
    const std::optional<std::string> model = testing::SharedModelPath(relative);
    if (!model) {
      std::printf("%-32s absent\n", stem.c_str());
      continue;
    }
    const std::string pte = (dir / (stem + ".pte")).string();
    int64_t macs = 0;
    const absl::Status compiled = CompileCpuOnly(testing::ReadFile(*model), pte, &macs);
    if (!compiled.ok()) {
      std::printf("%-32s compile failed: %s\n", stem.c_str(),
                  std::string(compiled.message()).c_str());
      ++failures;
      continue;
    }
    // The golden input and output when the shared folder has them (the run is then verified),
    // else random:1.
    const std::string golden = testing::SharedModelsDir() + "/../golden/" + stem + "/seed1";
    std::string args = pte;
    if (fs::exists(golden + ".input.bin") && fs::exists(golden + ".output.bin")) {
      args += " --input " + golden + ".input.bin --expected " + golden + ".output.bin --atol 0";
    } else {
      args += " --input random:1";
    }
    const Firmware::Run run = firmware.Execute(args);
    if (!run.instructions) {
      std::printf("%-32s firmware run failed (exit %d):\n%s\n", stem.c_str(), run.result.exit_code,
                  run.result.output.c_str());
      ++failures;
      continue;
    }
    const unsigned long long instructions = *run.instructions;
    const double per_mac = macs > 0 ? static_cast<double>(instructions) / macs : 0;
    const char* check =
        run.result.output.find("result: PASS") != std::string::npos ? "golden PASS" : "unverified";
    if (ConvHeavy(stem)) {
      const double ratio = per_mac / kTargetInstructionsPerMac;
      std::printf("%-32s %14lld %16llu %10.2f %9.1fx %6s %s\n", stem.c_str(),
                  static_cast<long long>(macs), instructions, per_mac, ratio,
                  ratio <= 1.0 ? "ok" : "over", check);
    } else {
      std::printf("%-32s %14lld %16llu %10.2f %10s %6s %s\n", stem.c_str(),
                  static_cast<long long>(macs), instructions, per_mac, "-", "-", check);
    }
    std::fflush(stdout);
  }
  std::printf("\nvs target = (instr/MAC) / %.1f\n\n", kTargetInstructionsPerMac);
  return failures;
}

// Instructions per inference of one single-op case model, or empty (after printing why).
std::optional<unsigned long long> RunCase(const testing::OpCase& c, const Firmware& firmware,
                                          const fs::path& dir, const std::string& base) {
  const testing::CaseModel m = testing::SingleCaseModel(c);
  const std::string pte = (dir / (base + ".pte")).string();
  const absl::Status compiled = CompileCpuOnly(m.model, pte, nullptr);
  if (!compiled.ok()) {
    std::printf("%-28s compile failed: %s\n", c.name.c_str(),
                std::string(compiled.message()).c_str());
    return std::nullopt;
  }
  std::string args = pte;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string file = (dir / (base + ".in" + std::to_string(i))).string();
    if (!testing::WriteFile(file, m.inputs[i])) {
      std::printf("%-28s cannot write %s\n", c.name.c_str(), file.c_str());
      return std::nullopt;
    }
    args += " --input " + file;
  }
  const Firmware::Run run = firmware.Execute(args);
  if (!run.instructions) {
    std::printf("%-28s firmware run failed (exit %d):\n%s\n", c.name.c_str(), run.result.exit_code,
                run.result.output.c_str());
  }
  return run.instructions;
}

struct ElementCost {
  unsigned long long small = 0, large = 0;  // instructions per inference at the two sizes
  double PerElement() const {
    return (static_cast<double>(large) - static_cast<double>(small)) /
           (kLargeElements - kSmallElements);
  }
};

// The case at `index` of the two per-element lists (the same op at the two sizes).
std::optional<ElementCost> MeasureCase(size_t index,
                                       const std::vector<testing::OpCase>& small_cases,
                                       const std::vector<testing::OpCase>& large_cases,
                                       const Firmware& firmware, const fs::path& dir) {
  const std::string base = "case" + std::to_string(index);
  const std::optional<unsigned long long> small =
      RunCase(small_cases[index], firmware, dir, base + "_small");
  if (!small) return std::nullopt;
  const std::optional<unsigned long long> large =
      RunCase(large_cases[index], firmware, dir, base + "_large");
  if (!large) return std::nullopt;
  return ElementCost{*small, *large};
}

// Table 2; returns the number of cases that failed.
int PerElementTable(const Options& o, const Firmware& firmware, const fs::path& dir) {
  const std::vector<testing::OpCase> cases = testing::PerElementCases(kSmallElements);
  const std::vector<testing::OpCase> large_cases = testing::PerElementCases(kLargeElements);
  std::printf(
      "Per element: single-op models at %d and %d elements; instr/element = (instructions at "
      "%d - instructions at %d) / %d; vs ADD = instr/element over int8 ADD's (the reference, "
      "measured in this run)\n\n",
      kSmallElements, kLargeElements, kLargeElements, kSmallElements,
      kLargeElements - kSmallElements);
  // The reference (case 0) is measured whatever the filter says.
  const std::optional<ElementCost> reference = MeasureCase(0, cases, large_cases, firmware, dir);
  if (!reference) return 1;
  const std::string small_head = "instr @" + std::to_string(kSmallElements);
  const std::string large_head = "instr @" + std::to_string(kLargeElements);
  // The op column fits the longest case name (SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION's are 40+).
  int name_width = 28;
  for (const testing::OpCase& c : cases) {
    name_width = std::max(name_width, static_cast<int>(c.name.size()));
  }
  std::printf("%-*s %16s %16s %12s %8s\n", name_width, "op", small_head.c_str(), large_head.c_str(),
              "instr/elem", "vs ADD");
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i != 0 && !o.Wanted(cases[i].name)) continue;
    const std::optional<ElementCost> cost =
        i == 0 ? reference : MeasureCase(i, cases, large_cases, firmware, dir);
    if (!cost) {
      ++failures;
      continue;
    }
    std::printf("%-*s %16llu %16llu %12.2f %7.2fx\n", name_width, cases[i].name.c_str(),
                cost->small, cost->large, cost->PerElement(),
                cost->PerElement() / reference->PerElement());
    std::fflush(stdout);
  }
  std::printf("\n");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  const std::string elf = FromEnvironmentOr("BOARDLAB_FIRMWARE_ELF", BOARDLAB_FIRMWARE_ELF_PATH);
  const std::string runner = FromEnvironmentOr("BOARDLAB_QEMU_RUNNER", BOARDLAB_QEMU_RUNNER_PATH);
  if (elf.empty() || !fs::exists(elf)) {
    std::printf(
        "firmware_bench: no firmware ELF (needs arm-none-eabi-gcc; or set "
        "BOARDLAB_FIRMWARE_ELF); skipped\n");
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / ("firmware_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Firmware firmware(runner, elf);

  std::printf(
      "firmware_bench: --cpu-only artifacts on boardlab-firmware, QEMU mps2-an505 "
      "(Cortex-M33), -icount shift=0\n"
      "instructions are QEMU guest instructions, not M33 cycles (QEMU does not model timing)\n\n");
  int failures = 0;
  if (options.models) failures += PerMacTable(options, firmware, dir);
  if (options.ops) failures += PerElementTable(options, firmware, dir);
  fs::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
