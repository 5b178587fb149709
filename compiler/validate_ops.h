#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

/// Checks one imported op's operands the way a kernel's Prepare would: arity, operand types and
/// ranks, constant operands where the op needs them, and that the output shape follows from the
/// inputs and options. After it succeeds, passes may index shapes without further checks.
///
/// Errors: InvalidArgument ("invalid model: CONV_2D #3: ...") for an inconsistent model,
/// Unimplemented for a consistent one that uses a variant boardlab does not support (e.g. int16
/// activations, grouped convolution).
absl::Status ValidateOpOperands(const Graph& graph, const Op& op,
                                std::vector<std::string>* warnings);

/// Whether input `index` of an op of `type` is a state operand, the one place a variable tensor
/// may be used: SVDF's activation state (input 4), UNIDIRECTIONAL_SEQUENCE_LSTM's hidden state
/// (18) and cell state (19).
bool IsStateOperand(OpType type, size_t index);

/// True for the ops boardlab runs in 16x8 quantization (int16 activations, int8 weights, int64
/// bias): the importer accepts their int16 form, the CPU kernels compute it bit-exact with TFLite
/// Micro's reference kernels. Every other op but MovesInt16Values refuses int16 activations with
/// No16x8Reason.
bool Runs16x8(OpType type);

/// True for the layout, data movement and conversion ops whose kernels copy values of any
/// element type they list (int16 among them) without arithmetic: they take int16 tensors
/// without a 16x8 form of their own.
bool MovesInt16Values(OpType type);

/// Output size of a windowed op along one axis (TFLite padding rules).
int32_t WindowedOutputSize(Padding padding, int32_t in, int32_t filter, int32_t stride,
                           int32_t dilation);

/// Padding before the first element along one axis (the odd remainder goes after).
int32_t WindowedPaddingBefore(Padding padding, int32_t in, int32_t filter, int32_t stride,
                              int32_t dilation, int32_t out);

}  // namespace boardlab::compiler
