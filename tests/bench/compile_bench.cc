// compile_bench: compile time and peak memory of boardlab-compile's pipeline per model.
//
// Usage: compile_bench [--iterations N] [MODEL.tflite ...]
// Without models it runs every model of ../shared/models. Each model is compiled in a child
// process of its own so that its peak RSS (getrusage of the child) is its own.
//
// Targets (issue #2): each MLPerf Tiny model < 20 ms, the 4 MB MobileNetV2 < 100 ms; peak RSS
// < 3 x model size + 64 MiB.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "tests/support/shared_data.h"

namespace {

using boardlab::compiler::Compile;
using boardlab::compiler::CompileOptions;

struct Figures {
  double median_ms = 0;
  double min_ms = 0;
  int64_t artifact_bytes = 0;
  bool ok = false;
};

Figures TimeCompiles(const std::vector<uint8_t>& model, int iterations) {
  Figures f;
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto result = Compile(model, CompileOptions{});
    const auto end = std::chrono::steady_clock::now();
    if (!result.ok()) {
      std::fprintf(stderr, "compile failed: %s\n", std::string(result.status().message()).c_str());
      return f;
    }
    f.artifact_bytes = static_cast<int64_t>(result->pte.size());
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  f.median_ms = times[times.size() / 2];
  f.min_ms = times.front();
  f.ok = true;
  return f;
}

double TimeTargetMs(const std::string& path, int64_t model_bytes) {
  if (path.find("mlperf-tiny") != std::string::npos) return 20.0;
  return model_bytes > (1 << 20) ? 100.0 : 20.0;
}

// Runs in the child: compiles and prints one row; exit status 0 when within targets.
int BenchOne(const std::string& path, int iterations) {
  const std::vector<uint8_t> model = boardlab::testing::ReadFile(path);
  if (model.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 2;
  }
  const Figures f = TimeCompiles(model, iterations);
  if (!f.ok) return 2;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double rss_mib = usage.ru_maxrss / 1024.0;
  const double model_mib = model.size() / 1048576.0;
  const double rss_limit_mib = 3 * model_mib + 64;
  const double time_limit = TimeTargetMs(path, static_cast<int64_t>(model.size()));
  const bool time_ok = f.median_ms < time_limit;
  const bool rss_ok = rss_mib < rss_limit_mib;
  std::string name = path.substr(path.find_last_of('/') + 1);
  std::printf("%-40s %9.2f %9.2f %8.0f %5.2f %s %8.1f %8.1f %5.2f %s %10lld\n", name.c_str(),
              f.median_ms, f.min_ms, time_limit, f.median_ms / time_limit,
              time_ok ? "ok  " : "SLOW", rss_mib, rss_limit_mib, rss_mib / rss_limit_mib,
              rss_ok ? "ok  " : "BIG ", static_cast<long long>(f.artifact_bytes));
  std::fflush(stdout);
  return time_ok && rss_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      models.push_back(argv[i]);
    }
  }
  models = boardlab::testing::ModelsOrSharedDefaults(std::move(models));
  if (models.empty()) {
    std::fprintf(stderr, "compile_bench: no models given and ../shared/models is absent\n");
    return 2;
  }
  std::printf("%-40s %9s %9s %8s %5s %4s %8s %8s %5s %4s %10s\n", "model", "median_ms", "min_ms",
              "target", "ratio", "", "rss_MiB", "limit", "ratio", "", "pte_bytes");
  int failures = 0;
  for (const std::string& path : models) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(BenchOne(path, iterations));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  std::printf("%d of %zu models outside the targets\n", failures, models.size());
  return failures == 0 ? 0 : 1;
}
