#pragma once

// The operand checks of one op, shared by the per-family validators that ValidateOpOperands
// (validate_ops.h) dispatches to. Internal to the importer.

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir.h"

namespace boardlab::compiler {

// Largest dimension a validated tensor can have (the importer caps tensors at 2 GiB).
inline constexpr int64_t kMaxDimension = std::numeric_limits<int32_t>::max();

inline std::string ShapeString(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Numpy-style broadcast of two shapes, right-aligned.
inline bool BroadcastShape(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                           std::vector<int32_t>& out) {
  const size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int32_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[rank - 1 - i] = std::max(da, db);
  }
  return true;
}

/// Why `type` does not take int16 activations (16x8 quantization): TFLite Micro has no such
/// kernel, or its 16x8 form needs int16 throughout (validate_ops.cc).
std::string No16x8Reason(OpType type);

// Collects the checks of one op; the first failure becomes the returned status.
class OpChecker {
 public:
  OpChecker(const Graph& graph, const Op& op, std::vector<std::string>* warnings)
      : graph_(graph), op_(op), warnings_(warnings), where_(graph.Describe(op)) {}

  absl::Status Invalid(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("invalid model: ", where_, ": ", what));
  }
  absl::Status Unsupported(const std::string& what) const {
    return absl::UnimplementedError(absl::StrCat("unsupported model: ", where_, ": ", what));
  }
  void Warn(const std::string& what) const {
    if (warnings_) warnings_->push_back(absl::StrCat(where_, ": ", what));
  }

  absl::Status Arity(size_t min_inputs, size_t max_inputs, size_t outputs = 1) const {
    if (op_.inputs.size() < min_inputs || op_.inputs.size() > max_inputs) {
      return Invalid(absl::StrCat("has ", op_.inputs.size(), " inputs, expected ",
                                  min_inputs == max_inputs
                                      ? absl::StrCat(min_inputs)
                                      : absl::StrCat(min_inputs, " to ", max_inputs)));
    }
    if (op_.outputs.size() != outputs) {
      return Invalid(absl::StrCat("has ", op_.outputs.size(), " outputs, expected ", outputs));
    }
    for (size_t i = 0; i < min_inputs; ++i) {
      if (op_.inputs[i] == kNoTensor) return Invalid(absl::StrCat("input ", i, " is missing"));
    }
    return absl::OkStatus();
  }

  bool Has(size_t i) const { return i < op_.inputs.size() && op_.inputs[i] != kNoTensor; }
  const Tensor& In(size_t i) const { return graph_.tensors[op_.inputs[i]]; }
  const Tensor& Out() const { return graph_.tensors[op_.outputs[0]]; }

  absl::Status Rank(const Tensor& t, const char* role, size_t min_rank, size_t max_rank) const {
    if (t.shape.size() < min_rank || t.shape.size() > max_rank) {
      return Invalid(absl::StrCat(
          role, " '", t.name, "' has shape ", ShapeString(t.shape), ", expected rank ",
          min_rank == max_rank ? absl::StrCat(min_rank) : absl::StrCat(min_rank, "-", max_rank)));
    }
    return absl::OkStatus();
  }

  // An activation of an integer type must carry one scale and zero point.
  absl::Status PerTensorQuantized(const Tensor& t, const char* role) const {
    if (t.quant.empty()) {
      return Invalid(
          absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type), " without quantization"));
    }
    if (t.quant.per_channel()) {
      return Unsupported(absl::StrCat(role, " '", t.name,
                                      "' has per-channel quantization; activations must be "
                                      "per-tensor"));
    }
    return absl::OkStatus();
  }

  // Quantized int8 activation with per-tensor parameters: what the NPU and most kernels compute
  // with. An int16 one gets the op's own reason (No16x8Reason).
  absl::Status Int8Activation(const Tensor& t, const char* role) const {
    if (t.type == DataType::kInt16) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' is int16; ", No16x8Reason(op_.type)));
    }
    if (t.type != DataType::kInt8) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type),
                                      "; boardlab computes int8 activations only"));
    }
    if (absl::Status s = PerTensorQuantized(t, role); !s.ok()) return s;
    if (t.quant.zp() < -128 || t.quant.zp() > 127) {
      return Invalid(
          absl::StrCat(role, " '", t.name, "' zero point ", t.quant.zp(), " is outside int8"));
    }
    return absl::OkStatus();
  }

  absl::Status AllInt8Activations() const {
    for (size_t i = 0; i < op_.inputs.size(); ++i) {
      if (!Has(i) || In(i).is_constant) continue;
      if (absl::Status s = Int8Activation(In(i), "input"); !s.ok()) return s;
    }
    return Int8Activation(Out(), "output");
  }

  // Quantized int16 activation of a 16x8 op: per-tensor and symmetric (zero point 0), as the
  // TFLite quantization spec has it and TFLite's int16 kernels assume (most ignore the zero
  // point, so another one would silently compute something else).
  absl::Status Int16Activation(const Tensor& t, const char* role) const {
    if (t.type != DataType::kInt16) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type),
                                      "; the 16x8 form of ", OpTypeName(op_.type),
                                      " takes int16 activations throughout"));
    }
    if (absl::Status s = PerTensorQuantized(t, role); !s.ok()) return s;
    if (t.quant.zp() != 0) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' is int16 with zero point ",
                                      t.quant.zp(),
                                      "; 16x8 quantization is symmetric (zero point 0), as "
                                      "TFLite's int16 kernels require"));
    }
    return absl::OkStatus();
  }

  /// True when the op computes in 16x8 (its output is int16); then every activation must be.
  bool Is16x8() const { return Out().type == DataType::kInt16; }

  /// AllInt8Activations, or for a 16x8 op (Is16x8, and `allow_16x8`: boardlab runs the op's
  /// 16x8 form) every activation an Int16Activation.
  absl::Status AllQuantizedActivations(bool allow_16x8) const {
    if (!allow_16x8 || !Is16x8()) return AllInt8Activations();
    for (size_t i = 0; i < op_.inputs.size(); ++i) {
      if (!Has(i) || In(i).is_constant) continue;
      if (absl::Status s = Int16Activation(In(i), "input"); !s.ok()) return s;
    }
    return Int16Activation(Out(), "output");
  }

  absl::Status Constant(const Tensor& t, const char* role, DataType type) const {
    if (!t.is_constant) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' must be a constant"));
    }
    if (t.type != type) {
      return Invalid(absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type), ", expected ",
                                  DataTypeName(type)));
    }
    return absl::OkStatus();
  }

  std::vector<int32_t> ConstantInts(const Tensor& t) const {
    std::vector<int32_t> values(t.data.size() / sizeof(int32_t));
    std::memcpy(values.data(), t.data.data(), values.size() * sizeof(int32_t));
    return values;
  }

  absl::Status OutputShape(const std::vector<int32_t>& expected) const {
    if (Out().shape != expected) {
      return Invalid(absl::StrCat("output '", Out().name, "' has shape ", ShapeString(Out().shape),
                                  ", the inputs give ", ShapeString(expected)));
    }
    return absl::OkStatus();
  }

  absl::Status SameElementCount() const {
    if (In(0).NumElements() != Out().NumElements()) {
      return Invalid(absl::StrCat("input ", ShapeString(In(0).shape), " and output ",
                                  ShapeString(Out().shape), " hold different element counts"));
    }
    return absl::OkStatus();
  }

  /// Unsupported unless `t` has one of `types`; `reference` names who accepts what, e.g.
  /// "TFLite Micro's GATHER takes float32 or int8".
  absl::Status TypeIn(const Tensor& t, const char* role, std::initializer_list<DataType> types,
                      const char* reference) const {
    for (DataType type : types) {
      if (t.type == type) return absl::OkStatus();
    }
    return Unsupported(
        absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type), "; ", reference));
  }

  absl::Status SameType(const Tensor& a, const Tensor& b) const {
    if (a.type == b.type) return absl::OkStatus();
    return Invalid(absl::StrCat("'", a.name, "' is ", DataTypeName(a.type), " but '", b.name,
                                "' is ", DataTypeName(b.type)));
  }

  /// Int8 tensors must carry per-tensor quantization (the kernels read one scale and zero point);
  /// other types pass.
  absl::Status QuantizedIfInt8(const Tensor& t, const char* role) const {
    return t.type == DataType::kInt8 ? Int8Activation(t, role) : absl::OkStatus();
  }

  /// The values of a constant int32 or int64 operand (axes, shapes, paddings). Unsupported when
  /// it is not constant: boardlab's shapes are all known when compiling.
  absl::Status ConstantIndices(const Tensor& t, const char* role,
                               std::vector<int64_t>& values) const {
    if (!t.is_constant) {
      return Unsupported(absl::StrCat(role, " '", t.name, "' must be a constant"));
    }
    if (t.type != DataType::kInt32 && t.type != DataType::kInt64) {
      return Invalid(absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type),
                                  ", expected int32 or int64"));
    }
    const size_t size = static_cast<size_t>(DataTypeSize(t.type));
    values.assign(t.data.size() / size, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      if (t.type == DataType::kInt32) {
        int32_t v;
        std::memcpy(&v, t.data.data() + i * size, size);
        values[i] = v;
      } else {
        std::memcpy(&values[i], t.data.data() + i * size, size);
      }
    }
    return absl::OkStatus();
  }

  /// An axis in [-rank, rank) made non-negative, or Invalid naming the operand.
  absl::Status Axis(int64_t axis, size_t rank, const char* role, int32_t& out) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
      return Invalid(absl::StrCat(role, " ", axis, " is outside rank ", rank));
    }
    out = static_cast<int32_t>(axis < 0 ? axis + r : axis);
    return absl::OkStatus();
  }

  /// Data movement ops copy raw values, as TFLite Micro does: a quantization that changes
  /// between `in` and `out` is kept as the model says, with a warning.
  void WarnIfRequantized(const Tensor& in, const Tensor& out) const {
    if (!in.quant.empty() && !out.quant.empty() && !in.quant.SameAs(out.quant)) {
      Warn(absl::StrCat("'", in.name, "' and '", out.name,
                        "' are quantized differently; the values are copied unchanged, as "
                        "TFLite Micro does"));
    }
  }

  /// The numpy-style broadcast of shapes `a` and `b` into `shape`, or Invalid naming both.
  absl::Status Broadcast(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                         std::vector<int32_t>& shape) const {
    if (!BroadcastShape(a, b, shape)) {
      return Invalid(
          absl::StrCat("inputs ", ShapeString(a), " and ", ShapeString(b), " do not broadcast"));
    }
    return absl::OkStatus();
  }

  const Tensor& Out(size_t i) const { return graph_.tensors[op_.outputs[i]]; }
  const Graph& graph() const { return graph_; }
  const Op& op() const { return op_; }

 private:
  const Graph& graph_;
  const Op& op_;
  std::vector<std::string>* warnings_;
  std::string where_;
};

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    if (absl::Status _s = (expr); !_s.ok()) { \
      return _s;                              \
    }                                         \
  } while (0)

/// How ValidateFixedOutputQuant compares and refuses. The default is the TFLite int8
/// quantization spec's fixed output (scale within 1e-3, Invalid); a kernel's own requirement
/// (e.g. TFLite's Prepare) is exact and Unsupported.
struct FixedQuantRule {
  float relative_tolerance = 1e-3f;
  bool unsupported = false;  // Unsupported (we do not run it) rather than Invalid
  std::string required_by = "int8 (TFLite quantization spec)";  // ends the message
};

/// The output's quantization must be (scale, zero_point) under `rule`.
absl::Status ValidateFixedOutputQuant(const OpChecker& c, float scale, int64_t zero_point,
                                      const FixedQuantRule& rule = {});

/// Layout and data movement ops: EXPAND_DIMS, SHAPE, FILL, ZEROS_LIKE, BROADCAST_TO,
/// BROADCAST_ARGS, PACK,
/// UNPACK, SPLIT, SPLIT_V, GATHER, GATHER_ND, EMBEDDING_LOOKUP, REVERSE_V2, MIRROR_PAD,
/// DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND
/// (validate_data_movement_ops.cc).
absl::Status ValidateDataMovementOp(const OpChecker& c);

/// Comparisons, logical ops, SELECT_V2, reductions, ARG_MAX/ARG_MIN, CAST, ABS and NEG
/// (validate_selection_ops.cc).
absl::Status ValidateSelectionOp(const OpChecker& c);

/// Arithmetic and math ops: EXP, LOG, SQRT, RSQRT, SQUARE, ROUND, FLOOR, CEIL, SIN, COS, ELU,
/// PRELU, DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, ADD_N and CUMSUM (validate_math_ops.cc).
absl::Status ValidateMathOp(const OpChecker& c);

/// Sequence and detection ops: SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM and DETECTION_POSTPROCESS
/// (validate_sequence_ops.cc).
absl::Status ValidateSequenceOp(const OpChecker& c);

/// TFLite Micro's signal library ops: SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE and SIGNAL_DELAY
/// (validate_signal_ops.cc).
absl::Status ValidateSignalOp(const OpChecker& c);

/// TFLite Micro's signal library filter bank stage: SIGNAL_ENERGY, SIGNAL_FILTER_BANK,
/// SIGNAL_FILTER_BANK_SQUARE_ROOT, SIGNAL_FILTER_BANK_LOG, SIGNAL_PCAN and
/// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION (validate_signal_filter_bank_ops.cc).
absl::Status ValidateSignalFilterBankOp(const OpChecker& c);

/// TFLite Micro's signal library real FFTs: SIGNAL_RFFT and SIGNAL_IRFFT
/// (validate_signal_fft_ops.cc).
absl::Status ValidateSignalFftOp(const OpChecker& c);
/// TFLite Micro's streaming ops: SIGNAL_FRAMER, SIGNAL_STACKER, SIGNAL_OVERLAP_ADD and
/// CIRCULAR_BUFFER (validate_stream_ops.cc).
absl::Status ValidateStreamOp(const OpChecker& c);

}  // namespace boardlab::compiler
