#include "runtime/kernels/reference/softmax_s8.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

Error softmax_s8(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* input,
                 int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "softmax_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(rows >= 0 && depth > 0, kInvalidArgument, "softmax_s8: bad sizes");
  RT_CHECK_OR_RETURN_ERROR(p.input_left_shift >= 0 && p.input_left_shift < 31, kInvalidArgument,
                           "softmax_s8: input_left_shift %d", static_cast<int>(p.input_left_shift));
  constexpr int kScaledDiffIntegerBits = 5;
  constexpr int kAccumulationIntegerBits = 12;
  // Rescaling the difference is a multiplication by a multiplier > 1: left shift, then the
  // doubling high multiply (no right shift).
  auto scaled_exp = [&p](int32_t diff) {
    const int32_t rescaled = SaturatingRoundingDoublingHighMul(
        static_cast<int32_t>(static_cast<uint32_t>(diff) << p.input_left_shift),
        p.input_multiplier);
    return fixed_point::ExpOnNegativeValues(rescaled, kScaledDiffIntegerBits);
  };
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* x = input + static_cast<int64_t>(r) * depth;
    int8_t* y = output + static_cast<int64_t>(r) * depth;
    int32_t max_value = -128;
    for (int32_t c = 0; c < depth; ++c) max_value = Max32(max_value, x[c]);
    int32_t sum_of_exps = 0;  // Q12.19
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = x[c] - max_value;
      if (diff >= p.diff_min) {
        sum_of_exps += fixed_point::Rescale(scaled_exp(diff), 0, kAccumulationIntegerBits);
      }
    }
    int num_bits_over_unit = 0;
    const int32_t shifted_scale =
        fixed_point::GetReciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = x[c] - max_value;
      if (diff >= p.diff_min) {
        const int32_t prob = fixed_point::Mul(shifted_scale, scaled_exp(diff));
        const int32_t unsat = RoundingDivideByPOT(prob, num_bits_over_unit + 31 - 8);
        y[c] = ClampToInt8(unsat - 128, -128, 127);
      } else {
        y[c] = -128;
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
