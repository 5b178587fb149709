#pragma once

// Argument access for the CPU kernel glue (docs/artifact-format.md section 2.1): typed readers
// over the KernelCall's Values that report a load error naming the op and argument when the
// program does not match what the compiler writes.

#include <cstdint>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"
#include "runtime/executor/value.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

using Args = Span<Value* const>;

inline bool IsTensorOf(const Value* v, ScalarType type) {
  return v != nullptr && v->tag == ValueTag::kTensor && v->tensor != nullptr &&
         v->tensor->type == type;
}

[[nodiscard]] inline Error CheckArgCount(const char* op, Args args, size_t expected) {
  RT_CHECK_OR_RETURN_ERROR(
      args.size() == expected, kInvalidProgram, "%s: %lu arguments, expected %lu", op,
      static_cast<unsigned long>(args.size()), static_cast<unsigned long>(expected));
  return Error::kOk;
}

[[nodiscard]] inline Error TensorArg(const char* op, Args args, size_t i, ScalarType type,
                                     TensorView** out) {
  RT_CHECK_OR_RETURN_ERROR(i < args.size() && IsTensorOf(args[i], type), kInvalidProgram,
                           "%s: argument %lu must be a tensor of type %d", op,
                           static_cast<unsigned long>(i), static_cast<int>(type));
  *out = args[i]->tensor;
  return Error::kOk;
}

/// A tensor of any element type.
[[nodiscard]] inline Error AnyTensorArg(const char* op, Args args, size_t i, TensorView** out) {
  RT_CHECK_OR_RETURN_ERROR(i < args.size() && args[i] != nullptr && args[i]->is_tensor() &&
                               args[i]->tensor != nullptr && ElementSize(args[i]->tensor->type) > 0,
                           kInvalidProgram, "%s: argument %lu must be a tensor", op,
                           static_cast<unsigned long>(i));
  *out = args[i]->tensor;
  return Error::kOk;
}

/// A TensorList of 1..`max` tensors, each of any element type.
[[nodiscard]] inline Error TensorListArg(const char* op, Args args, size_t i, size_t max,
                                         ListView<TensorView*>* out) {
  RT_CHECK_OR_RETURN_ERROR(i < args.size() && args[i] != nullptr &&
                               args[i]->tag == ValueTag::kTensorList &&
                               args[i]->tensor_list.size > 0 && args[i]->tensor_list.size <= max,
                           kInvalidProgram, "%s: argument %lu must be a TensorList of 1..%lu", op,
                           static_cast<unsigned long>(i), static_cast<unsigned long>(max));
  *out = args[i]->tensor_list;
  for (size_t k = 0; k < out->size; ++k) {
    const TensorView* t = out->At(k);
    RT_CHECK_OR_RETURN_ERROR(t != nullptr && ElementSize(t->type) > 0, kInvalidProgram,
                             "%s: list entry %lu is not a tensor", op,
                             static_cast<unsigned long>(k));
  }
  return Error::kOk;
}

/// Checks that `args` has `count` entries and reads input 0 and the output (the last argument),
/// tensors of one element type.
[[nodiscard]] inline Error InputOutputArgs(const char* op, Args args, size_t count, TensorView** in,
                                           TensorView** out) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, count));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, count - 1, out));
  RT_CHECK_OR_RETURN_ERROR((*in)->type == (*out)->type && (*in)->rank <= kMaxDims, kInvalidProgram,
                           "%s: input and output types differ", op);
  return Error::kOk;
}

/// `a` and `b` have the same element type and shape.
inline bool SameTypeAndShape(const TensorView& a, const TensorView& b) {
  if (a.type != b.type || a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

/// The quantized element type of an op that runs in int8 or in 16x8: kShort when args[i] is an
/// int16 tensor, else kChar (the TensorArg checks that follow report a mismatch).
inline ScalarType QuantizedTypeOf(Args args, size_t i) {
  return i < args.size() && IsTensorOf(args[i], ScalarType::kShort) ? ScalarType::kShort
                                                                    : ScalarType::kChar;
}

/// Inputs 0 and 1 and the output args[out_index] of a binary op, of one quantized type: int8,
/// or int16 (16x8, `*int16` set) when input 0 is int16.
[[nodiscard]] inline Error QuantizedBinaryArgs(const char* op, Args args, size_t out_index,
                                               TensorView** a, TensorView** b, TensorView** out,
                                               bool* int16) {
  const ScalarType type = QuantizedTypeOf(args, 0);
  *int16 = type == ScalarType::kShort;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, a));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, type, b));
  return TensorArg(op, args, out_index, type, out);
}

/// [act_min, act_max] is a non-empty range inside int8, or int16 when `int16`.
inline bool ActivationRangeFits(bool int16, int32_t act_min, int32_t act_max) {
  const int32_t lo = int16 ? -32768 : -128, hi = int16 ? 32767 : 127;
  return lo <= act_min && act_min <= act_max && act_max <= hi;
}

/// An optional tensor: Null gives nullptr.
[[nodiscard]] inline Error OptionalTensorArg(const char* op, Args args, size_t i, ScalarType type,
                                             TensorView** out) {
  if (i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kNone) {
    *out = nullptr;
    return Error::kOk;
  }
  return TensorArg(op, args, i, type, out);
}

[[nodiscard]] inline Error IntArg(const char* op, Args args, size_t i, int32_t* out) {
  RT_CHECK_OR_RETURN_ERROR(
      i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kInt &&
          args[i]->int_value >= INT32_MIN && args[i]->int_value <= INT32_MAX,
      kInvalidProgram, "%s: argument %lu must be an int32 Int", op, static_cast<unsigned long>(i));
  *out = static_cast<int32_t>(args[i]->int_value);
  return Error::kOk;
}

[[nodiscard]] inline Error BoolArg(const char* op, Args args, size_t i, bool* out) {
  RT_CHECK_OR_RETURN_ERROR(i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kBool,
                           kInvalidProgram, "%s: argument %lu must be a Bool", op,
                           static_cast<unsigned long>(i));
  *out = args[i]->bool_value;
  return Error::kOk;
}

[[nodiscard]] inline Error DoubleArg(const char* op, Args args, size_t i, double* out) {
  RT_CHECK_OR_RETURN_ERROR(
      i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kDouble, kInvalidProgram,
      "%s: argument %lu must be a Double", op, static_cast<unsigned long>(i));
  *out = args[i]->double_value;
  return Error::kOk;
}

/// An IntList of exactly `n` int32 values (n < 0: any length up to `capacity`).
[[nodiscard]] inline Error IntListArg(const char* op, Args args, size_t i, int32_t n, int32_t* out,
                                      int32_t capacity, int32_t* count = nullptr) {
  RT_CHECK_OR_RETURN_ERROR(
      i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kIntList, kInvalidProgram,
      "%s: argument %lu must be an IntList", op, static_cast<unsigned long>(i));
  const ListView<int64_t>& l = args[i]->int_list;
  RT_CHECK_OR_RETURN_ERROR(
      n < 0 ? l.size <= static_cast<size_t>(capacity) : l.size == static_cast<size_t>(n),
      kInvalidProgram, "%s: argument %lu has %lu entries", op, static_cast<unsigned long>(i),
      static_cast<unsigned long>(l.size));
  for (size_t k = 0; k < l.size; ++k) {
    const int64_t v = l.At(k);
    RT_CHECK_OR_RETURN_ERROR(v >= INT32_MIN && v <= INT32_MAX, kInvalidProgram,
                             "%s: argument %lu entry out of int32 range", op,
                             static_cast<unsigned long>(i));
    out[k] = static_cast<int32_t>(v);
  }
  if (count != nullptr) *count = static_cast<int32_t>(l.size);
  return Error::kOk;
}

/// Zero points and scales of an "every other op" call (the two lists just before the output):
/// inputs in order, then the output.
struct QuantLists {
  static constexpr int kMax = 64;
  int32_t count = 0;
  int32_t zero_point[kMax] = {};
  double scale[kMax] = {};
};

[[nodiscard]] inline Error QuantListArgs(const char* op, Args args, QuantLists* q) {
  RT_CHECK_OR_RETURN_ERROR(args.size() >= 3, kInvalidProgram, "%s: too few arguments", op);
  const size_t zi = args.size() - 3, si = args.size() - 2;
  RT_RETURN_IF_ERROR(IntListArg(op, args, zi, -1, q->zero_point, QuantLists::kMax, &q->count));
  RT_CHECK_OR_RETURN_ERROR(args[si] != nullptr && args[si]->tag == ValueTag::kDoubleList &&
                               args[si]->double_list.size == static_cast<size_t>(q->count),
                           kInvalidProgram, "%s: scales must be a DoubleList of %d", op,
                           static_cast<int>(q->count));
  for (int32_t k = 0; k < q->count; ++k) q->scale[k] = args[si]->double_list.At(k);
  return Error::kOk;
}

/// The float32 scales and zero points of `count` operands (inputs, then the output); every one
/// but `unquantized` (an index operand, -1 for none) has a positive scale.
[[nodiscard]] inline Error Int8Quantization(const char* op, Args args, int32_t count, QuantLists* q,
                                            int32_t unquantized = -1) {
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, q));
  RT_CHECK_OR_RETURN_ERROR(q->count == count, kInvalidProgram, "%s: quantization lists", op);
  for (int32_t k = 0; k < count; ++k) {
    RT_CHECK_OR_RETURN_ERROR(k == unquantized || q->scale[k] > 0, kInvalidProgram,
                             "%s: scale %d is not positive", op, static_cast<int>(k));
    q->scale[k] = static_cast<float>(q->scale[k]);  // TFLite keeps float32 scales
  }
  return Error::kOk;
}

inline ShapeN ToShape(const TensorView& t) {
  ShapeN s;
  s.rank = t.rank;
  for (int32_t i = 0; i < t.rank && i < kMaxDims; ++i) s.dims[i] = t.dims[i];
  return s;
}

/// NHWC dims of a rank-4 tensor.
inline Dims4 ToDims4(const TensorView& t) {
  return Dims4{t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
}

/// Reads element `i` of a constant int32 or int64 index tensor.
inline int64_t IndexAt(const TensorView& t, int64_t i) {
  return t.type == ScalarType::kLong ? t.As<const int64_t>()[i] : t.As<const int32_t>()[i];
}

inline bool IsIndexTensor(const Value* v) {
  return (IsTensorOf(v, ScalarType::kInt) || IsTensorOf(v, ScalarType::kLong)) &&
         v->tensor->data != nullptr;
}

/// TFLite QuantizeMultiplier (tflite-int8.md section 9), for multipliers kernels derive at
/// Prepare. Uses frexp, so it is only called at load time.
void QuantizeMultiplier(double real, int32_t* multiplier, int32_t* shift);

// The fused activation codes of the TFLite schema that clamp (the others clamp nowhere).
enum ActivationCode : int32_t { kActRelu = 1, kActReluN1To1 = 2, kActRelu6 = 3 };

/// TFLite's CalculateActivationRange<T> for float32 and int32 outputs.
template <typename T>
void ActivationRange(int32_t code, T* lo, T* hi) {
  *lo = std::numeric_limits<T>::lowest();
  *hi = std::numeric_limits<T>::max();
  if (code == kActRelu) *lo = 0;
  if (code == kActRelu6) *lo = 0, *hi = 6;
  if (code == kActReluN1To1) *lo = -1, *hi = 1;
}

}  // namespace boardlab::runtime::kernels
