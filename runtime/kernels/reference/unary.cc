#include "runtime/kernels/reference/unary.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// One source value widened so that every supported conversion starts from it: integers as int64
// (exact for every source integer type), float32 as itself.
struct Scalar {
  bool is_float = false;
  int64_t i = 0;
  float f = 0.0f;
};

Scalar Load(ScalarType type, const void* data, int64_t k) {
  Scalar s;
  switch (type) {
    case ScalarType::kChar:
      s.i = static_cast<const int8_t*>(data)[k];
      break;
    case ScalarType::kShort:
      s.i = static_cast<const int16_t*>(data)[k];
      break;
    case ScalarType::kInt:
      s.i = static_cast<const int32_t*>(data)[k];
      break;
    case ScalarType::kBool:
      s.i = static_cast<const bool*>(data)[k] ? 1 : 0;
      break;
    default:
      s.is_float = true;
      s.f = static_cast<const float*>(data)[k];
      break;
  }
  return s;
}

int32_t SaturatingTruncate(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return kInt32Max;
  if (f < -2147483648.0f) return kInt32Min;
  return static_cast<int32_t>(f);
}

template <typename T>
T ToInteger(const Scalar& s) {
  const int64_t wide = s.is_float ? SaturatingTruncate(s.f) : s.i;
  // Modular narrowing (two's complement), without the implementation-defined conversion.
  using U = typename std::make_unsigned<T>::type;
  const U bits = static_cast<U>(static_cast<uint64_t>(wide));
  T out;
  __builtin_memcpy(&out, &bits, sizeof(out));
  return out;
}

void Store(ScalarType type, void* data, int64_t k, const Scalar& s) {
  switch (type) {
    case ScalarType::kChar:
      static_cast<int8_t*>(data)[k] = ToInteger<int8_t>(s);
      break;
    case ScalarType::kShort:
      static_cast<int16_t*>(data)[k] = ToInteger<int16_t>(s);
      break;
    case ScalarType::kInt:
      static_cast<int32_t*>(data)[k] = ToInteger<int32_t>(s);
      break;
    default:
      static_cast<float*>(data)[k] = s.is_float ? s.f : static_cast<float>(s.i);
      break;
  }
}

bool CastSource(ScalarType t) {
  return t == ScalarType::kChar || t == ScalarType::kShort || t == ScalarType::kInt ||
         t == ScalarType::kFloat || t == ScalarType::kBool;
}

bool CastTarget(ScalarType t) {
  return t == ScalarType::kChar || t == ScalarType::kShort || t == ScalarType::kInt ||
         t == ScalarType::kFloat;
}

}  // namespace

namespace {

// TFLite Micro's AbsEvalQuantized: |x - in_zp|, rescaled when the scales differ, plus the output
// zero point, clamped to the type.
template <typename T>
void QuantizedAbs(const AbsParams& p, int64_t count, const T* input, T* output) {
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < count; ++i) {
    int32_t v = input[i] - p.input_zero_point;
    v = v < 0 ? -v : v;
    if (p.rescale) v = MultiplyByQuantizedMultiplier(v, p.multiplier, p.shift);
    v += p.output_zero_point;
    output[i] = static_cast<T>(v < kLo ? kLo : (v > kHi ? kHi : v));
  }
}

}  // namespace

Error abs_s8(const AbsParams& p, int64_t count, const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "abs_s8: bad arguments");
  QuantizedAbs(p, count, input, output);
  return Error::kOk;
}

Error abs_s16(const AbsParams& p, int64_t count, const int16_t* input, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "abs_s16: bad arguments");
  if (p.quantized) {
    QuantizedAbs(p, count, input, output);
    return Error::kOk;
  }
  // Plain int16 (TFLite Micro's std::abs on the promoted value, narrowed back: -32768 stays).
  for (int64_t i = 0; i < count; ++i) {
    const int32_t v = input[i];
    output[i] = static_cast<int16_t>(static_cast<uint16_t>(v < 0 ? -v : v));
  }
  return Error::kOk;
}

Error abs_f32(int64_t count, const float* input, float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "abs_f32: bad arguments");
  for (int64_t i = 0; i < count; ++i) output[i] = std::fabs(input[i]);
  return Error::kOk;
}

Error neg_f32(int64_t count, const float* input, float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "neg_f32: bad arguments");
  for (int64_t i = 0; i < count; ++i) output[i] = -input[i];
  return Error::kOk;
}

bool CastSupported(ScalarType from, ScalarType to) { return CastSource(from) && CastTarget(to); }

Error cast_elements(ScalarType from, const void* input, ScalarType to, int64_t count,
                    void* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && count >= 0 && CastSupported(from, to),
      kInvalidArgument, "cast_elements: bad arguments");
  for (int64_t k = 0; k < count; ++k) Store(to, output, k, Load(from, input, k));
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
