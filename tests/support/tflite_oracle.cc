#include "tests/support/tflite_oracle.h"

#include "tests/support/test_paths.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
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

namespace {

// One case as the manifest lists it: the model, its inputs and its outputs (empty types: the
// untyped form, output 0 only).
struct ManifestCase {
  const std::vector<uint8_t>* model;
  std::vector<std::pair<std::string, const std::vector<uint8_t>*>> inputs;  // (type, bytes)
  std::vector<std::vector<int32_t>> input_shapes;                           // typed cases only
  std::vector<std::string> output_types;
  const std::vector<std::vector<std::vector<uint8_t>>>* later_inputs = nullptr;
};

// Writes the cases and runs node on them; on success `outputs[case]` holds each output's bytes
// (output 0 alone for untyped cases) and, when asked for, `node_types[case]` the node types the
// interpreter ran.
bool RunManifest(const std::vector<ManifestCase>& cases,
                 std::vector<std::vector<std::vector<uint8_t>>>* outputs, std::string* error,
                 std::vector<std::vector<std::string>>* node_types = nullptr) {
  char dir_template[] = "/tmp/boardlab_oracle_XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    *error = "cannot create a temporary directory";
    return false;
  }
  const std::string dir = dir_template;
  std::ostringstream manifest;
  manifest << "{\"cases\": [";
  for (size_t i = 0; i < cases.size(); ++i) {
    const ManifestCase& c = cases[i];
    const std::string base = dir + "/case" + std::to_string(i);
    if (!WriteFile(base + ".tflite", *c.model)) {
      *error = "cannot write " + base + ".tflite";
      return false;
    }
    manifest << (i ? ", " : "") << "{\"model\": \"" << base << ".tflite\", \"inputs\": [";
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const std::string in = base + ".in" + std::to_string(k);
      if (!WriteFile(in, *c.inputs[k].second)) {
        *error = "cannot write " + in;
        return false;
      }
      manifest << (k ? ", " : "");
      if (c.inputs[k].first.empty()) {
        manifest << "\"" << in << "\"";
      } else {
        manifest << "{\"file\": \"" << in << "\", \"type\": \"" << c.inputs[k].first
                 << "\", \"shape\": [";
        for (size_t d = 0; d < c.input_shapes[k].size(); ++d) {
          manifest << (d ? ", " : "") << c.input_shapes[k][d];
        }
        manifest << "]}";
      }
    }
    manifest << "], \"output\": \"" << base << ".out0\"";
    if (!c.output_types.empty()) {
      manifest << ", \"outputs\": [";
      for (size_t k = 0; k < c.output_types.size(); ++k) {
        manifest << (k ? ", " : "") << "{\"file\": \"" << base << ".out" << k << "\", \"type\": \""
                 << c.output_types[k] << "\"}";
      }
      manifest << "]";
    }
    if (node_types) manifest << ", \"nodes\": \"" << base << ".nodes\"";
    if (c.later_inputs != nullptr && !c.later_inputs->empty()) {
      // Inference j reads <input file>.<j> and writes <output file>.<j>.
      manifest << ", \"later\": " << c.later_inputs->size();
      for (size_t j = 0; j < c.later_inputs->size(); ++j) {
        for (size_t k = 0; k < (*c.later_inputs)[j].size(); ++k) {
          const std::string in = base + ".in" + std::to_string(k) + "." + std::to_string(j + 1);
          if (!WriteFile(in, (*c.later_inputs)[j][k])) {
            *error = "cannot write " + in;
            return false;
          }
        }
      }
    }
    manifest << "}";
  }
  manifest << "]}";
  const std::string manifest_path = dir + "/manifest.json";
  std::ofstream(manifest_path) << manifest.str();
  const std::string log = dir + "/node.log";
  const std::string command = "node " + RepoRoot() + "/tests/oracle/run_tflite.js " +
                              NodeModules() + " " + manifest_path + " >" + log + " 2>&1";
  const int rc = std::system(command.c_str());
  outputs->clear();
  if (node_types) node_types->clear();
  const bool ok = rc == 0;
  for (size_t i = 0; i < cases.size() && ok; ++i) {
    const size_t count = std::max<size_t>(1, cases[i].output_types.size());
    const size_t later = cases[i].later_inputs == nullptr ? 0 : cases[i].later_inputs->size();
    std::vector<std::vector<uint8_t>>& out = outputs->emplace_back();
    for (size_t j = 0; j <= later; ++j) {
      const std::string suffix = j == 0 ? "" : "." + std::to_string(j);
      for (size_t k = 0; k < count; ++k) {
        out.push_back(
            ReadFile(dir + "/case" + std::to_string(i) + ".out" + std::to_string(k) + suffix));
      }
    }
    if (node_types) {
      std::vector<std::string>& types = node_types->emplace_back();
      std::ifstream nodes(dir + "/case" + std::to_string(i) + ".nodes");
      for (std::string line; std::getline(nodes, line);) types.push_back(line);
    }
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

}  // namespace

bool RunTfliteOracle(const std::vector<OracleCase>& cases,
                     std::vector<std::vector<uint8_t>>* outputs, std::string* error) {
  std::vector<ManifestCase> manifest;
  for (const OracleCase& c : cases) {
    ManifestCase& m = manifest.emplace_back();
    m.model = &c.model;
    for (const auto& in : c.inputs) m.inputs.push_back({"", &in});
  }
  std::vector<std::vector<std::vector<uint8_t>>> all;
  const bool ok = RunManifest(manifest, &all, error);
  outputs->clear();
  for (auto& per_case : all) outputs->push_back(std::move(per_case.front()));
  return ok;
}

bool RunTfliteOracleTyped(const std::vector<TypedOracleCase>& cases,
                          std::vector<std::vector<std::vector<uint8_t>>>* outputs,
                          std::string* error, std::vector<std::vector<std::string>>* node_types) {
  std::vector<ManifestCase> manifest;
  for (const TypedOracleCase& c : cases) {
    ManifestCase& m = manifest.emplace_back();
    m.model = &c.model;
    for (size_t k = 0; k < c.inputs.size(); ++k)
      m.inputs.push_back({c.input_types[k], &c.inputs[k]});
    m.input_shapes = c.input_shapes;
    m.output_types = c.output_types;
    m.later_inputs = &c.later_inputs;
  }
  return RunManifest(manifest, outputs, error, node_types);
}

bool RunTfliteOracleInferences(const std::vector<uint8_t>& model,
                               const std::vector<std::string>& input_types,
                               const std::vector<std::vector<int32_t>>& input_shapes,
                               const std::vector<std::string>& output_types,
                               const std::vector<std::vector<std::vector<uint8_t>>>& inferences,
                               std::vector<std::vector<uint8_t>>* outputs, std::string* error) {
  TypedOracleCase c;
  c.model = model;
  c.input_types = input_types;
  c.input_shapes = input_shapes;
  c.output_types = output_types;
  c.inputs = inferences.at(0);
  c.later_inputs.assign(inferences.begin() + 1, inferences.end());
  std::vector<std::vector<std::vector<uint8_t>>> all;
  if (!RunTfliteOracleTyped({c}, &all, error)) return false;
  *outputs = all.at(0);
  return true;
}

}  // namespace boardlab::testing
