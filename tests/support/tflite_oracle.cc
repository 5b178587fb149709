#include "tests/support/tflite_oracle.h"

#include "tests/support/test_paths.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/shared_data.h"

namespace boardlab::testing {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string NodeModules() { return RepoRoot() + "/build-deps/node/node_modules"; }

}  // namespace

std::string RepoRoot() { return RepoDir(); }

std::optional<std::string> TfliteOracleUnavailable() {
  if (std::system("node --version >/dev/null 2>&1") != 0) {
    return std::string(
        "TFLite oracle skipped: `node` is not on PATH (install Node.js 20, then "
        "run deploy/install-node-deps.sh)");
  }
  const std::string pkg =
      NodeModules() + "/@tensorflow/tfjs-tflite/wasm/tflite_web_api_cc_simd.wasm";
  if (!Exists(pkg)) {
    return "TFLite oracle skipped: @tensorflow/tfjs-tflite is not installed under " +
           NodeModules() + " (run deploy/install-node-deps.sh)";
  }
  if (!Exists(RepoRoot() + "/tests/oracle/run_tflite.js")) {
    return "TFLite oracle skipped: tests/oracle/run_tflite.js not found under " + RepoRoot();
  }
  return std::nullopt;
}

bool RunTfliteOracle(const std::vector<OracleCase>& cases,
                     std::vector<std::vector<uint8_t>>* outputs, std::string* error) {
  char dir_template[] = "/tmp/boardlab_oracle_XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    *error = "cannot create a temporary directory";
    return false;
  }
  const std::string dir = dir_template;
  std::ostringstream manifest;
  manifest << "{\"cases\": [";
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string base = dir + "/case" + std::to_string(i);
    if (!WriteFile(base + ".tflite", cases[i].model)) {
      *error = "cannot write " + base + ".tflite";
      return false;
    }
    manifest << (i ? ", " : "") << "{\"model\": \"" << base << ".tflite\", \"inputs\": [";
    for (size_t k = 0; k < cases[i].inputs.size(); ++k) {
      const std::string in = base + ".in" + std::to_string(k);
      if (!WriteFile(in, cases[i].inputs[k])) {
        *error = "cannot write " + in;
        return false;
      }
      manifest << (k ? ", " : "") << "\"" << in << "\"";
    }
    manifest << "], \"output\": \"" << base << ".out\"}";
  }
  manifest << "]}";
  const std::string manifest_path = dir + "/manifest.json";
  std::ofstream(manifest_path) << manifest.str();
  const std::string log = dir + "/node.log";
  const std::string command = "node " + RepoRoot() + "/tests/oracle/run_tflite.js " +
                              NodeModules() + " " + manifest_path + " >" + log + " 2>&1";
  const int rc = std::system(command.c_str());
  outputs->clear();
  bool ok = rc == 0;
  for (size_t i = 0; i < cases.size() && ok; ++i) {
    outputs->push_back(ReadFile(dir + "/case" + std::to_string(i) + ".out"));
  }
  if (!ok) {
    const std::vector<uint8_t> text = ReadFile(log);
    *error =
        "node exited with " + std::to_string(rc) + ": " + std::string(text.begin(), text.end());
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return ok;
}

}  // namespace boardlab::testing
