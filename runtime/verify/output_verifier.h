#pragma once

// Compares a method's outputs with expected bytes (the "verifier" of DESIGN.md, Runtime): per
// output a pass/fail verdict under an absolute tolerance, the largest element difference and the
// number of elements outside the tolerance. Integer outputs compare element-wise as integers of
// their type (int8 outputs: |actual - expected| <= atol); float outputs as floats.
//
//   OutputComparison c;
//   if (CompareOutput(*method.GetOutput(0), {expected, expected_size}, /*atol=*/1, &c) ==
//       Error::kOk && c.pass) { ... }
//
// ExecuTorch's bundled-program check is bytewise for int8 (atol 0 here gives the same verdict).

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"

namespace boardlab::runtime {

struct OutputComparison {
  bool pass = false;
  size_t num_elements = 0;
  /// Elements with |actual - expected| > atol.
  size_t mismatches = 0;
  /// Largest |actual - expected| over all elements (0 for identical outputs).
  double max_abs_diff = 0;
  /// First element outside the tolerance, or num_elements when none.
  size_t first_mismatch = 0;
};

/// Compares int8 elements: pass iff every |actual[i] - expected[i]| <= atol. Errors:
/// kInvalidArgument when the spans differ in length or atol is negative.
[[nodiscard]] Error CompareInt8(Span<const int8_t> actual, Span<const int8_t> expected,
                                int32_t atol, OutputComparison* result);

/// Compares tensor `actual` with `expected` raw bytes laid out like it (same type, contiguous).
/// Errors: kInvalidArgument when the byte counts differ (message says both), atol is negative or
/// `result` is null.
[[nodiscard]] Error CompareOutput(const TensorView& actual, Span<const uint8_t> expected,
                                  double atol, OutputComparison* result);

}  // namespace boardlab::runtime
