#pragma once

// What the host tools know of a model's inputs and outputs without running it: each tensor's
// element type, shape and byte size, read from a .pte artifact (method "forward") by the
// runtime's own loader. boardlab-run sizes inputs with it and checks case files against it
// (runtime/cli/run_cases.h); the boardlab client fills the same struct from a .tflite file.
//
//   ModelIo io;
//   std::string error;
//   if (!ReadArtifactIo(bytes.data(), bytes.size(), &io, &error)) ...  // not a valid artifact
//   io.inputs[0].Describe();                                          // "int8 [1,49,10,1]"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor_view.h"

namespace boardlab::run {

struct TensorInfo {
  runtime::ScalarType type = runtime::ScalarType::kChar;
  std::vector<int64_t> shape;
  size_t bytes = 0;

  /// "int8 [1,49,10,1]", as messages name a tensor.
  std::string Describe() const;
};

struct ModelIo {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

/// boardlab-run's name of an element type: uint8, int8, int16, int32, int64, float32, bool.
const char* ScalarTypeName(runtime::ScalarType type);

/// The type of a ScalarTypeName; int8 (boardlab's models) for any other name.
runtime::ScalarType ScalarTypeNamed(std::string_view name);

/// The index of the largest element of `bytes` read as `type` (the first one on a tie), or -1
/// when there is no whole element. NaN never wins.
int64_t ArgMax(std::string_view bytes, runtime::ScalarType type);

/// The inputs and outputs of method "forward" of the artifact in [data, data + size). `data`
/// needs no particular alignment (it is copied). False, with `error` saying why, when the
/// bytes are no valid artifact or a tensor has a type the runtime does not know.
bool ReadArtifactIo(const uint8_t* data, size_t size, ModelIo* io, std::string* error);

}  // namespace boardlab::run
