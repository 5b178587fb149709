#pragma once

// The inputs and outputs of a .tflite model as the client sees them before submitting it: the
// tensors' types, shapes and sizes, so that the case files of `submit --inputs DIR` are checked
// (and a wrong one refused) before anything is uploaded. The compiled artifact keeps the
// model's inputs and outputs as they are (the server checks the job against the artifact too).

#include <string>

#include "absl/status/statusor.h"
#include "runtime/cli/model_io.h"

namespace boardlab::cli {

/// The tensors of subgraph 0's inputs and outputs of the TFLite flatbuffer `bytes`.
/// Errors: InvalidArgument "'<name>': ..." when it is no TFLite model or a tensor's type or
/// shape cannot be sized.
absl::StatusOr<run::ModelIo> ReadTfliteIo(const std::string& bytes, const std::string& name);

}  // namespace boardlab::cli
