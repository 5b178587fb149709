#pragma once

// Comparisons, logical ops and SELECT_V2 with numpy broadcasting (up to 6-D), bit-exact with
// TFLite Micro's reference kernels (comparisons.h, logical.h, select.h):
// - int8 operands are compared in a common rescaled space, as TFLite does:
//     scaled = MultiplyByQuantizedMultiplier((q + offset) << left_shift, multiplier, shift)
//   with offset = -zero point, left_shift 8 and (multiplier, shift) = QuantizeMultiplier(scale)
//   of each input (shift <= 0). Outputs are bool (one byte, 0 or 1).
// - int32, int64, float32 and bool operands are compared as they are.
// - SELECT_V2 copies elements of any type: condition ? x : y.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

enum class Comparison : uint8_t { kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual };

/// Rescaling of two int8 comparison operands (index 0 and 1).
struct ComparisonScaling {
  int32_t offset[2] = {0, 0};
  int32_t multiplier[2] = {0, 0};
  int32_t shift[2] = {0, 0};
  int32_t left_shift = 8;
};

/// Strides from ComputeBroadcast(a_shape, b_shape, out_shape).
[[nodiscard]] Error compare_s8(Comparison op, const ComparisonScaling& scaling,
                               const BroadcastStrides& strides, const int8_t* a, const int8_t* b,
                               bool* out);
/// int16 operands rescaled like compare_s8 (TFLite Micro's GREATER takes them).
[[nodiscard]] Error compare_s16(Comparison op, const ComparisonScaling& scaling,
                                const BroadcastStrides& strides, const int16_t* a, const int16_t* b,
                                bool* out);
[[nodiscard]] Error compare_s32(Comparison op, const BroadcastStrides& strides, const int32_t* a,
                                const int32_t* b, bool* out);
[[nodiscard]] Error compare_s64(Comparison op, const BroadcastStrides& strides, const int64_t* a,
                                const int64_t* b, bool* out);
[[nodiscard]] Error compare_f32(Comparison op, const BroadcastStrides& strides, const float* a,
                                const float* b, bool* out);
/// EQUAL / NOT_EQUAL only (TFLite does not order bools).
[[nodiscard]] Error compare_bool(Comparison op, const BroadcastStrides& strides, const bool* a,
                                 const bool* b, bool* out);

enum class LogicalOp : uint8_t { kAnd, kOr };

[[nodiscard]] Error logical_bool(LogicalOp op, const BroadcastStrides& strides, const bool* a,
                                 const bool* b, bool* out);
[[nodiscard]] Error logical_not_bool(int64_t count, const bool* in, bool* out);

/// SELECT_V2: out = condition ? x : y, each operand broadcast to `out_shape`.
[[nodiscard]] Error select_elements(const ShapeN& condition_shape, const bool* condition,
                                    const ShapeN& x_shape, const void* x, const ShapeN& y_shape,
                                    const void* y, const ShapeN& out_shape, int32_t element_size,
                                    void* out);

}  // namespace boardlab::runtime::kernels
