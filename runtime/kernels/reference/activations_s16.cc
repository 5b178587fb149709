#include "runtime/kernels/reference/activations_s16.h"

#include "runtime/kernels/reference/float_math.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// sigmoid(i / 24) in Q0.16 for i = 0..255, the values of TFLite's shared sigmoid/tanh table
// (sigmoid_table_uint16). They are not all round(65536 * sigmoid(i / 24)), so they are reproduced
// as numbers rather than recomputed.
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
};

// x * multiplier plus the rounding half, then the right shift, in int32 with the reference's
// wrap-around (its product of an int16 and a multiplier below 2^15 cannot overflow; the rounding
// constant can, for shifts near 31).
int32_t Rescale(int16_t x, int32_t multiplier, int32_t shift) {
  const int32_t round = shift > 0 ? int32_t{1} << (shift - 1) : 0;
  const auto sum = static_cast<int32_t>(static_cast<uint32_t>(int32_t{x} * multiplier) +
                                        static_cast<uint32_t>(round));
  return sum >> shift;
}

// The power-of-two form (multiplier 0) is a multiplier of 3 << shift with no shift.
Sigmoid16Params Resolved(const Sigmoid16Params& p) {
  if (p.multiplier != 0) return p;
  return {3 << p.left_shift, 0};
}

int16_t Logistic16(int16_t x, const Sigmoid16Params& p) {
  const int32_t v = Rescale(x, p.multiplier, p.left_shift);
  const uint32_t magnitude = static_cast<uint32_t>(v < 0 ? -int64_t{v} : v);
  const uint32_t index = magnitude >> 9;
  uint32_t result = 0x7FFFu << 10;  // saturated
  if (index < 255) {
    const uint32_t a = kSigmoidTable[index], b = kSigmoidTable[index + 1];
    result = (a << 9) + (magnitude & 0x1FF) * (b - a);
  }
  result = v >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1;
  return static_cast<int16_t>(result >> 10);
}

int16_t Tanh16(int16_t x, const Sigmoid16Params& p) {
  const int32_t v = Rescale(x, p.multiplier, p.left_shift);
  const uint32_t magnitude = static_cast<uint32_t>(v < 0 ? -int64_t{v} : v);
  const uint32_t index = magnitude >> 8;
  int32_t result = static_cast<int32_t>(0xFFFFu << 8);  // saturated
  if (index < 255) {
    const uint32_t a = kSigmoidTable[index], b = kSigmoidTable[index + 1];
    result = static_cast<int32_t>((a << 8) + (magnitude & 0xFF) * (b - a));
  }
  result = v >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
  return static_cast<int16_t>(result >> 8);
}

// TFLite's int16 table lookup: the high 9 bits of x (offset by 256) index the table, the low 7
// interpolate towards the next entry.
int16_t Lookup(int16_t x, const int16_t* table) {
  const int index = 256 + (x >> 7);
  const int32_t offset = x & 0x7F;
  const int32_t base = table[index];
  const int32_t slope = table[index + 1] - table[index];
  return static_cast<int16_t>(base + ((slope * offset + 64) >> 7));
}

// TFLite Micro's gen_lut<float, int16_t, int16_t> for outputs in [-1, 1]: 512 samples of `f`
// over [lo, hi] in Q0.15, each biased by half the error of the linear interpolation at the
// midpoint of its step, and the value at `hi` last. Every operation is float, as there.
template <typename F>
void GenerateTable(F f, float lo, float hi, int16_t* table) {
  constexpr int kSteps = 512;
  const float step = (hi - lo) / kSteps;
  const float half_step = step / 2;
  const float scaling = 65536.0f / 2.0f;  // (int16 range) / (output_max - output_min)
  auto clamp = [](float v) {
    return static_cast<int16_t>(v < -32768.0f ? -32768.0f : (v > 32767.0f ? 32767.0f : v));
  };
  for (int i = 0; i < kSteps; ++i) {
    const float value = f(lo + static_cast<float>(i) * step);
    const float midpoint = f(lo + static_cast<float>(i) * step + half_step);
    const float next = f(lo + static_cast<float>(i + 1) * step);
    const float sample = RoundHalfAwayF(value * scaling);
    const float interpolated =
        RoundHalfAwayF((next * scaling + RoundHalfAwayF(value * scaling)) / 2);
    const float error = interpolated - RoundHalfAwayF(midpoint * scaling);
    table[i] = clamp(sample - RoundHalfAwayF(error / 2));
  }
  table[kSteps] = clamp(RoundHalfAwayF(f(hi) * scaling));
}

void SoftmaxRow(const Softmax16Params& p, int32_t depth, const int16_t* in, int16_t* out) {
  int16_t max = in[0];
  for (int32_t c = 1; c < depth; ++c) max = in[c] > max ? in[c] : max;
  // exp(x - max) in Q0.15, kept in the output row until the sum is known.
  int32_t sum = 0;
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t scaled =
        MultiplyByQuantizedMultiplier(in[c] - max, p.input_multiplier, p.input_shift);
    const int32_t centred = Min32(Max32(scaled + 32767, -32768), 32767);
    out[c] = Lookup(static_cast<int16_t>(centred), p.tables->exp);
    sum += out[c];
  }
  // 1 / sum: the sum normalized to [1, 2) as 1 + x, x recentred to [-32768, 32767].
  const int headroom_plus_one = CountLeadingZeros32(static_cast<uint32_t>(sum));
  const auto shifted = static_cast<int32_t>(
      ((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
  const int32_t x = Min32(Max32(shifted - ((1 << 15) + (1 << 16)), -32768), 32767);
  const int16_t reciprocal = Lookup(static_cast<int16_t>(x), p.tables->one_over_one_plus_x);
  const int right_shift = 31 - headroom_plus_one;
  const int64_t round = int64_t{1} << (right_shift - 1);
  for (int32_t c = 0; c < depth; ++c) {
    const auto v = static_cast<int32_t>((int64_t{out[c]} * reciprocal + round) >> right_shift);
    out[c] = static_cast<int16_t>(Min32(Max32(v, 0), 32767));
  }
}

}  // namespace

const uint16_t* Sigmoid16Table() { return kSigmoidTable; }

Error logistic_s16(const Sigmoid16Params& params, int64_t size, const int16_t* input,
                   int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && params.left_shift >= 0 && params.left_shift <= 31,
      kInvalidArgument, "logistic_s16: bad arguments");
  const Sigmoid16Params p = Resolved(params);
  for (int64_t i = 0; i < size; ++i) output[i] = Logistic16(input[i], p);
  return Error::kOk;
}

Error tanh_s16(const Sigmoid16Params& params, int64_t size, const int16_t* input, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && params.left_shift >= 0 && params.left_shift <= 31,
      kInvalidArgument, "tanh_s16: bad arguments");
  const Sigmoid16Params p = Resolved(params);
  for (int64_t i = 0; i < size; ++i) output[i] = Tanh16(input[i], p);
  return Error::kOk;
}

void BuildSoftmax16Tables(Softmax16Tables* t) {
  // exp matters only below 0: exp(-10) is negligible in the sum.
  GenerateTable([](float v) { return ExpF(v); }, -10.0f, 0.0f, t->exp);
  GenerateTable([](float v) { return 1.0f / (1.0f + v); }, 0.0f, 1.0f, t->one_over_one_plus_x);
}

Error softmax_s16(const Softmax16Params& p, int32_t rows, int32_t depth, const int16_t* input,
                  int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && p.tables != nullptr && depth > 0 && rows >= 0,
      kInvalidArgument, "softmax_s16: bad arguments");
  for (int32_t r = 0; r < rows; ++r) {
    SoftmaxRow(p, depth, input + int64_t{r} * depth, output + int64_t{r} * depth);
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
