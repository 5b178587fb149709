// libFuzzer entry point for the TFLite importer. Beyond "no crash" (ASan/UBSan), it checks the
// importer's contract: a rejected model gets InvalidArgument or Unimplemented (an Internal error
// means a later consistency check caught something validation missed), and an accepted graph
// passes VerifyGraph.
//
// Run: importer_fuzzer -max_total_time=60 -max_len=65536 <corpus dir> tests/fuzz/seeds

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "compiler/import_tflite.h"

namespace {

void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "importer contract violated: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> warnings;
  absl::StatusOr<boardlab::compiler::Graph> graph =
      boardlab::compiler::ImportTflite(std::span<const uint8_t>(data, size), &warnings);
  if (!graph.ok()) {
    const absl::StatusCode code = graph.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kUnimplemented) {
      Fail("unexpected status code", graph.status());
    }
    return 0;
  }
  if (absl::Status s = boardlab::compiler::VerifyGraph(*graph); !s.ok()) {
    Fail("accepted graph fails VerifyGraph", s);
  }
  // Touch what later passes read without checks: sizes of every tensor and MACs of every op.
  int64_t total = 0;
  for (const boardlab::compiler::Tensor& t : graph->tensors) total += t.SizeBytes();
  for (const boardlab::compiler::Op& op : graph->ops) total += graph->Macs(op);
  return total < 0 ? -1 : 0;
}
