// runtime_bench: host inferences per second of boardlab's runtime per model, next to ArmNN's
// CpuRef backend (Debian's libarmnn) and the TFLite WASM interpreter, measured in the same run.
//
// Usage: runtime_bench [--seconds S] [MODEL.tflite ...]
// Without models it runs the six real models of ../shared/models (kRealModels). Each model runs
// in a child process of its own: it is compiled in-process twice (default options, whose NPU
// partitions run on the emulated NPU engine = the simulated board, and --cpu-only), each
// artifact is loaded and run for >= S seconds (default 1) on ../shared/golden/<model>/seed1,
// then the peers run the .tflite on the same input.
//
// Targets (issue): boardlab faster than both peers on every model, NPU artifact included; peak
// memory = the planned arena + the model + less than 16 MB. Memory is the growth of the child's
// resident set while one artifact is loaded and run (the peak is reset through
// /proc/self/clear_refs first); "model" is the artifact the runtime holds.

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "runtime/cli/aligned_buffer.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/platform/platform.h"
#include "runtime/timing/timing_model.h"
#include "tests/support/shared_data.h"
#ifdef BOARDLAB_BENCH_HAVE_ARMNN
#include "tests/bench/peers/armnn_peer.h"
#endif

namespace {

namespace rt = boardlab::runtime;

constexpr double kOverheadLimitMiB = 16.0;

using Buffer = boardlab::run::AlignedBuffer;

// A /proc/self/status field in KiB (VmRSS, VmHWM); -1 when absent.
long StatusKiB(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long value = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      value = std::strtol(line + n + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return value;
}

// Makes VmHWM restart from the current RSS (Linux >= 4.0). False when not permitted.
bool ResetPeakRss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

struct BoardlabRun {
  bool ok = false;
  std::string error;
  double inferences_per_second = 0;
  bool outputs_agree = false;
  size_t arena_bytes = 0;  // every planned buffer (arena + NPU weight scratch)
  size_t model_bytes = 0;  // the artifact
  double rss_growth_mib = -1;
};

double MiB(double bytes) { return bytes / 1048576.0; }

// Loads `pte` and runs it for >= min_seconds; compares output 0 of the first run with `golden`.
// Measures the RSS growth of all of it.
BoardlabRun RunBoardlab(const std::vector<uint8_t>& pte, const std::vector<uint8_t>& input,
                        const std::vector<uint8_t>& golden, double min_seconds) {
  BoardlabRun r;
  malloc_trim(0);
  const bool peak_reset = ResetPeakRss();
  const long rss_before = StatusKiB("VmRSS");
  {
    Buffer artifact(pte.size());
    std::copy(pte.begin(), pte.end(), artifact.data());
    r.model_bytes = pte.size();
    rt::Result<rt::Program> program = rt::Program::Load({artifact.data(), artifact.size()});
    if (!program.ok()) {
      r.error = std::string("Program::Load: ") + rt::ToString(program.error());
      return r;
    }
    const rt::timing::TimingParams params;
    rt::npu::NpuBackend npu(params);
    rt::BackendRegistry backends;
    if (backends.Register(&npu) != rt::Error::kOk) {
      r.error = "cannot register the NPU backend";
      return r;
    }
    rt::Result<size_t> num_planned = program->NumPlannedBuffers("forward");
    if (!num_planned.ok()) {
      r.error = "NumPlannedBuffers failed";
      return r;
    }
    std::vector<std::unique_ptr<Buffer>> planned_storage;
    std::vector<rt::Span<uint8_t>> planned;
    for (size_t i = 0; i < *num_planned; ++i) {
      rt::Result<size_t> size = program->PlannedBufferSize("forward", i);
      if (!size.ok()) {
        r.error = "PlannedBufferSize failed";
        return r;
      }
      planned_storage.push_back(std::make_unique<Buffer>(*size));
      planned.emplace_back(planned_storage.back()->data(), *size);
      r.arena_bytes += *size;
    }
    // The runtime touches only what it uses of these pools; RSS counts touched pages.
    Buffer persistent_pool(16u << 20);
    Buffer temp_pool(4u << 20);
    rt::MemoryAllocator persistent(persistent_pool.data(), persistent_pool.size());
    rt::MemoryAllocator temp(temp_pool.data(), temp_pool.size());
    rt::MemoryManager memory(&persistent, {planned.data(), planned.size()}, &temp);
    rt::Result<rt::Method> method = program->LoadMethod("forward", memory, backends, nullptr);
    if (!method.ok()) {
      r.error = std::string("LoadMethod: ") + rt::ToString(method.error());
      return r;
    }
    if (method->SetInput(0, input.data(), input.size()) != rt::Error::kOk) {
      r.error = "SetInput failed (input is " + std::to_string(input.size()) + " bytes)";
      return r;
    }
    if (method->Execute() != rt::Error::kOk) {
      r.error = "Execute failed";
      return r;
    }
    const rt::TensorView& out = *method->GetOutput(0);
    const auto* data = static_cast<const uint8_t*>(out.data);
    r.outputs_agree = static_cast<size_t>(out.NumBytes()) == golden.size() &&
                      std::equal(golden.begin(), golden.end(), data);
    int iterations = 0;
    double elapsed = 0;
    const auto start = std::chrono::steady_clock::now();
    do {
      // Inputs are set every time: the plan may reuse their bytes (and the peers copy theirs).
      if (method->SetInput(0, input.data(), input.size()) != rt::Error::kOk ||
          method->Execute() != rt::Error::kOk) {
        r.error = "Execute failed";
        return r;
      }
      ++iterations;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < min_seconds);
    r.inferences_per_second = iterations / elapsed;
    const long peak = peak_reset ? StatusKiB("VmHWM") : StatusKiB("VmRSS");
    if (rss_before >= 0 && peak >= 0) r.rss_growth_mib = (peak - rss_before) / 1024.0;
  }
  r.ok = true;
  return r;
}

struct WasmRun {
  bool ok = false;
  std::string error;
  double inferences_per_second = 0;
};

// Runs tests/bench/peers/tflite_wasm_bench.js through node and parses its one-line JSON.
WasmRun RunTfliteWasm(const std::string& model, const std::string& input, double min_seconds) {
  WasmRun r;
  const std::string repo = BOARDLAB_REPO_DIR;
  const std::string modules = repo + "/build-deps/node/node_modules";
  const std::string command = "node " + repo + "/tests/bench/peers/tflite_wasm_bench.js '" +
                              modules + "' '" + model + "' '" + input + "' " +
                              std::to_string(min_seconds) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    r.error = "popen failed";
    return r;
  }
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  const size_t key = output.find("\"inferences_per_second\":");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || key == std::string::npos) {
    r.error = output.substr(0, 200);
    return r;
  }
  r.inferences_per_second = std::strtod(output.c_str() + key + 24, nullptr);
  r.ok = true;
  return r;
}

std::string Stem(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  return file.substr(0, file.find('.'));
}

std::optional<std::vector<uint8_t>> CompileModel(const std::vector<uint8_t>& model, bool cpu_only) {
  boardlab::compiler::CompileOptions options;
  options.cpu_only = cpu_only;
  auto result = boardlab::compiler::Compile(model, options);
  if (!result.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", std::string(result.status().message()).c_str());
    return std::nullopt;
  }
  return std::move(result->pte);
}

std::string Rate(double v) {
  char s[32];
  std::snprintf(s, sizeof(s), "%.1f", v);
  return s;
}

std::string Ratio(double a, double b) {
  if (b <= 0) return "-";
  char s[32];
  std::snprintf(s, sizeof(s), "%.2f", a / b);
  return s;
}

// Runs in the child: prints one row; exit status 0 when within the targets.
int BenchOne(const std::string& path, double seconds) {
  const std::vector<uint8_t> model = boardlab::testing::ReadFile(path);
  const std::string golden_dir =
      boardlab::testing::SharedModelsDir() + "/../golden/" + Stem(path) + "/seed1";
  const std::vector<uint8_t> input = boardlab::testing::ReadFile(golden_dir + ".input.bin");
  const std::vector<uint8_t> golden = boardlab::testing::ReadFile(golden_dir + ".output.bin");
  if (model.empty() || input.empty()) {
    std::fprintf(stderr, "%s: cannot read the model or %s.input.bin\n", path.c_str(),
                 golden_dir.c_str());
    return 2;
  }
  std::optional<std::vector<uint8_t>> npu_pte = CompileModel(model, false);
  std::optional<std::vector<uint8_t>> cpu_pte = CompileModel(model, true);
  if (!npu_pte || !cpu_pte) return 2;

  const BoardlabRun npu = RunBoardlab(*npu_pte, input, golden, seconds);
  const BoardlabRun cpu = RunBoardlab(*cpu_pte, input, golden, seconds);
  for (const BoardlabRun* b : {&npu, &cpu}) {
    if (!b->ok) std::fprintf(stderr, "%s: boardlab: %s\n", path.c_str(), b->error.c_str());
  }

  double armnn = 0;
  std::string armnn_text = "n/a";
#ifdef BOARDLAB_BENCH_HAVE_ARMNN
  const boardlab::bench::PeerRun peer = boardlab::bench::RunArmnnCpuRef(path, input, seconds);
  if (peer.ok) {
    armnn = peer.inferences_per_second;
    armnn_text = Rate(armnn);
  } else {
    armnn_text = "failed";
    std::fprintf(stderr, "%s: ArmNN: %s\n", path.c_str(), peer.error.c_str());
  }
#endif
  const WasmRun wasm = RunTfliteWasm(path, golden_dir + ".input.bin", seconds);
  std::string wasm_text = "failed";
  if (wasm.ok) {
    wasm_text = Rate(wasm.inferences_per_second);
  } else {
    std::fprintf(stderr, "%s: TFLite WASM: %s\n", path.c_str(), wasm.error.c_str());
  }

  // The slower of the two boardlab artifacts is the one that must beat the peers.
  const double slowest = std::min(npu.inferences_per_second, cpu.inferences_per_second);
  const double arena = MiB(static_cast<double>(npu.arena_bytes));
  const double pte = MiB(static_cast<double>(npu.model_bytes));
  const double worst_growth = std::max(npu.rss_growth_mib, cpu.rss_growth_mib);
  const double overhead = npu.rss_growth_mib - arena - pte;
  const double cpu_overhead =
      cpu.rss_growth_mib - MiB(static_cast<double>(cpu.arena_bytes + cpu.model_bytes));
  const bool fast = npu.ok && cpu.ok && (armnn <= 0 || slowest > armnn) &&
                    (!wasm.ok || slowest > wasm.inferences_per_second);
  const bool agree = npu.outputs_agree && cpu.outputs_agree;
  const bool small = worst_growth >= 0 && std::max(overhead, cpu_overhead) < kOverheadLimitMiB;
  std::printf("%-30s %9s %9s %9s %9s %7s %7s %-7s %6.2f+%6.2f+%6.2f/%5.1f %s\n", Stem(path).c_str(),
              Rate(npu.inferences_per_second).c_str(), Rate(cpu.inferences_per_second).c_str(),
              armnn_text.c_str(), wasm_text.c_str(), Ratio(slowest, armnn).c_str(),
              Ratio(slowest, wasm.ok ? wasm.inferences_per_second : 0).c_str(),
              agree ? "yes" : (npu.outputs_agree ? "npu" : (cpu.outputs_agree ? "cpu" : "NO")),
              arena, pte, std::max(overhead, cpu_overhead), kOverheadLimitMiB,
              fast && small ? "ok" : (fast ? "BIG" : "SLOW"));
  std::fflush(stdout);
  return fast && agree && small ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  rt_pal_init();
  double seconds = 1.0;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::max(0.01, std::atof(argv[++i]));
    } else {
      models.push_back(argv[i]);
    }
  }
  models = boardlab::testing::ModelsOrSharedDefaults(std::move(models));
  if (models.empty()) {
    std::fprintf(stderr, "runtime_bench: no models given and ../shared/models is absent\n");
    return 2;
  }
#ifndef BOARDLAB_BENCH_HAVE_ARMNN
  std::printf("ArmNN: not installed\n");
#endif
  std::printf(
      "inferences/s (>= %.1f s each); ratios use the slower boardlab artifact; memory MiB"
      " = arena + model + overhead / overhead allowance (worse artifact)\n",
      seconds);
  std::printf("%-30s %9s %9s %9s %9s %7s %7s %-7s %s\n", "model", "npu-pte", "cpu-only", "ArmNN",
              "WASM", "x-ArmNN", "x-WASM", "agree", "memory");
  int failures = 0;
  for (const std::string& path : models) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(BenchOne(path, seconds));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  std::printf("%d of %zu models outside the targets\n", failures, models.size());
  return failures == 0 ? 0 : 1;
}
