#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

/// Reads a TFLite flatbuffer into the IR, validating everything later passes rely on.
///
/// The FlatBuffers verifier runs before any field is read; then every tensor, buffer and operator
/// index, every shape, buffer size, quantization count and quantized_dimension, and each
/// operator's arity, operand ranks and shapes are checked. The bytes are not referenced after
/// the call returns (constant data is copied into the IR).
///
/// Errors: InvalidArgument for a malformed model (the message says what and where, e.g.
/// "tensor 7 'conv/bias': buffer holds 12 bytes, shape [16] int32 needs 64"); Unimplemented for a
/// well-formed model that uses something boardlab does not support (an operator outside the
/// supported set, several subgraphs, sparse or external tensors).
///
/// @param warnings if not null, receives notes about tolerated quirks (e.g. a bias tensor with a
///        meaningless quantized_dimension).
absl::StatusOr<Graph> ImportTflite(std::span<const uint8_t> model,
                                   std::vector<std::string>* warnings = nullptr);

}  // namespace boardlab::compiler
