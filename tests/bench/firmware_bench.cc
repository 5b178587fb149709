// firmware_bench: instructions per MAC of the portable runtime's CPU kernels on a Cortex-M33.
//
// For each shared model (../shared/models) it compiles a --cpu-only artifact in-process, runs it
// on boardlab-firmware under QEMU mps2-an505 with -icount shift=0 (the timer then counts guest
// instructions, identically on every run), and prints instructions per inference, the compiled
// graph's MACs (Graph::Macs summed over its ops) and instructions per MAC against the target.
//
//   firmware_bench [MODEL_SUBSTRING...]
//
// Anchor (shared/reference/neutron-rt700.md 10.3): the best Cortex-M33 MLPerf Tiny submissions
// need 1.3-1.9 cycles per MAC; the target is <= 2 instructions per MAC on the conv-heavy models.
// Instructions are not cycles (QEMU does not model M33 timing), so this is a lower bound on the
// cycle figure. The firmware ELF and runner come from the build, overridable with
// BOARDLAB_FIRMWARE_ELF / BOARDLAB_QEMU_RUNNER.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/driver.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
namespace testing = boardlab::testing;

constexpr double kTargetInstructionsPerMac = 2.0;
// Conv-heavy models the target applies to (FC / element-wise graphs cost more per MAC).
constexpr std::string_view kConvHeavy[] = {"vww", "resnet8", "kws", "mobilenet_v2"};

std::string FromEnvironmentOr(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : built_in;
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

}  // namespace

int main(int argc, char** argv) {
  const std::string elf = FromEnvironmentOr("BOARDLAB_FIRMWARE_ELF", BOARDLAB_FIRMWARE_ELF_PATH);
  const std::string runner = FromEnvironmentOr("BOARDLAB_QEMU_RUNNER", BOARDLAB_QEMU_RUNNER_PATH);
  if (elf.empty() || !fs::exists(elf)) {
    std::printf(
        "firmware_bench: no firmware ELF (needs arm-none-eabi-gcc; or set "
        "BOARDLAB_FIRMWARE_ELF); skipped\n");
    return 0;
  }
  if (!fs::exists(testing::SharedModelsDir())) {
    std::printf("firmware_bench: shared models folder absent (%s); skipped\n",
                testing::SharedModelsDir().c_str());
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / ("firmware_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);

  std::printf(
      "firmware_bench: --cpu-only artifacts on boardlab-firmware, QEMU mps2-an505 "
      "(Cortex-M33), -icount shift=0\n");
  std::printf(
      "anchor: best Cortex-M33 MLPerf Tiny submissions need 1.3-1.9 cycles per MAC "
      "(neutron-rt700.md 10.3); target <= %.1f instructions per MAC on the conv-heavy "
      "models (vww, resnet8, kws, mobilenet_v2)\n\n",
      kTargetInstructionsPerMac);
  std::printf("%-32s %14s %16s %10s %10s %6s %s\n", "model", "MACs", "instructions", "instr/MAC",
              "vs target", "", "check");
  int failures = 0;
  for (std::string_view relative : testing::kRealModels) {
    const std::string stem = Stem(relative);
    if (argc > 1) {
      bool wanted = false;
      for (int i = 1; i < argc; ++i) wanted = wanted || stem.find(argv[i]) != std::string::npos;
      if (!wanted) continue;
    }
    const std::optional<std::string> model = testing::SharedModelPath(relative);
    if (!model) {
      std::printf("%-32s absent\n", stem.c_str());
      continue;
    }
    boardlab::compiler::CompileOptions options;
    options.cpu_only = true;
    absl::StatusOr<boardlab::compiler::CompileResult> compiled =
        boardlab::compiler::Compile(testing::ReadFile(*model), options);
    if (!compiled.ok()) {
      std::printf("%-32s compile failed: %s\n", stem.c_str(),
                  std::string(compiled.status().message()).c_str());
      ++failures;
      continue;
    }
    const boardlab::compiler::Graph& graph = compiled->compilation.graph;
    int64_t macs = 0;
    for (const boardlab::compiler::Op& op : graph.ops) {
      if (!op.dead) macs += graph.Macs(op);
    }
    const std::string pte = (dir / (stem + ".pte")).string();
    testing::WriteFile(pte, compiled->pte);

    // The golden input and output when the shared folder has them (the run is then verified),
    // else random:1.
    const std::string golden = testing::SharedModelsDir() + "/../golden/" + stem + "/seed1";
    std::string args = pte;
    if (fs::exists(golden + ".input.bin") && fs::exists(golden + ".output.bin")) {
      args += " --input " + golden + ".input.bin --expected " + golden + ".output.bin --atol 0";
    } else {
      args += " --input random:1";
    }
    const testing::CommandResult run =
        testing::RunCommand(runner + " --elf " + elf + " --icount 0 --timeout 900 -- " + args);
    const std::optional<unsigned long long> instructions = NumberAfter(run.output, "instructions ");
    if (run.exit_code != 0 || !instructions) {
      std::printf("%-32s firmware run failed (exit %d):\n%s\n", stem.c_str(), run.exit_code,
                  run.output.c_str());
      ++failures;
      continue;
    }
    const double per_mac = macs > 0 ? static_cast<double>(*instructions) / macs : 0;
    const bool verified = run.output.find("result: PASS") != std::string::npos;
    if (ConvHeavy(stem)) {
      const double ratio = per_mac / kTargetInstructionsPerMac;
      std::printf("%-32s %14lld %16llu %10.2f %9.1fx %6s %s\n", stem.c_str(),
                  static_cast<long long>(macs), *instructions, per_mac, ratio,
                  ratio <= 1.0 ? "ok" : "over", verified ? "golden PASS" : "unverified");
    } else {
      std::printf("%-32s %14lld %16llu %10.2f %10s %6s %s\n", stem.c_str(),
                  static_cast<long long>(macs), *instructions, per_mac, "-", "-",
                  verified ? "golden PASS" : "unverified");
    }
    std::fflush(stdout);
  }
  fs::remove_all(dir);
  std::printf(
      "\ninstructions are QEMU guest instructions, not M33 cycles; vs target = "
      "(instr/MAC) / %.1f\n",
      kTargetInstructionsPerMac);
  return failures == 0 ? 0 : 1;
}
