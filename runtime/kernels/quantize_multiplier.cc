// Load-time QuantizeMultiplier for kernels that derive multipliers from the scales the compiler
// passes (docs/artifact-format.md 2.1, "every other op").

#include <cmath>

#include "runtime/kernels/kernel_util.h"

namespace boardlab::runtime::kernels {

void QuantizeMultiplier(double real, int32_t* multiplier, int32_t* shift) {
  if (real == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  int exponent = 0;
  const double q = std::frexp(real, &exponent);
  // round() is half away from zero, as TfLiteRound.
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    // Too small to represent: the reference flushes to zero.
    q_fixed = 0;
    exponent = 0;
  }
  *multiplier = static_cast<int32_t>(q_fixed);
  *shift = exponent;
}

}  // namespace boardlab::runtime::kernels
