#include "runtime/verify/output_verifier.h"

#include <cstring>

namespace boardlab::runtime {
namespace {

// Loads element i of type T from possibly unaligned bytes (expected data comes from files).
template <typename T>
T Load(const uint8_t* base, size_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void CompareAs(const uint8_t* actual, const uint8_t* expected, size_t n, double atol,
               OutputComparison* r) {
  for (size_t i = 0; i < n; ++i) {
    const T a = Load<T>(actual, i);
    const T e = Load<T>(expected, i);
    // Differences in double: exact for every integer type up to 32 bits, and int64 differences
    // that large are mismatches anyway. A NaN never matches unless both are NaN.
    double diff = a > e ? static_cast<double>(a) - static_cast<double>(e)
                        : static_cast<double>(e) - static_cast<double>(a);
    const bool both_nan = a != a && e != e;
    if (both_nan) diff = 0;
    const bool bad = !(diff <= atol);
    if (diff > r->max_abs_diff || (diff != diff && !both_nan)) r->max_abs_diff = diff;
    if (bad) {
      if (r->mismatches == 0) r->first_mismatch = i;
      ++r->mismatches;
    }
  }
}

}  // namespace

Error CompareInt8(Span<const int8_t> actual, Span<const int8_t> expected, int32_t atol,
                  OutputComparison* result) {
  TensorView view;
  view.type = ScalarType::kChar;
  view.rank = 1;
  view.dims[0] = static_cast<int32_t>(actual.size());
  view.data = const_cast<int8_t*>(actual.data());
  RT_CHECK_OR_RETURN_ERROR(actual.size() <= INT32_MAX, kInvalidArgument,
                           "CompareInt8: %lu elements is too many",
                           static_cast<unsigned long>(actual.size()));
  return CompareOutput(
      view, Span<const uint8_t>(reinterpret_cast<const uint8_t*>(expected.data()), expected.size()),
      atol, result);
}

Error CompareOutput(const TensorView& actual, Span<const uint8_t> expected, double atol,
                    OutputComparison* result) {
  RT_CHECK_OR_RETURN_ERROR(result != nullptr, kInvalidArgument, "CompareOutput: null result");
  RT_CHECK_OR_RETURN_ERROR(atol >= 0, kInvalidArgument, "CompareOutput: negative atol %g", atol);
  const size_t bytes = static_cast<size_t>(actual.NumBytes());
  RT_CHECK_OR_RETURN_ERROR(expected.size() == bytes, kInvalidArgument,
                           "CompareOutput: output has %lu bytes, expected data has %lu",
                           static_cast<unsigned long>(bytes),
                           static_cast<unsigned long>(expected.size()));
  *result = OutputComparison{};
  const size_t n = static_cast<size_t>(actual.NumElements());
  result->num_elements = n;
  result->first_mismatch = n;
  const uint8_t* a = static_cast<const uint8_t*>(actual.data);
  const uint8_t* e = expected.data();
  if (n > 0) {
    RT_CHECK_OR_RETURN_ERROR(a != nullptr && e != nullptr, kInvalidArgument,
                             "CompareOutput: null data");
  }
  switch (actual.type) {
    case ScalarType::kChar:
      CompareAs<int8_t>(a, e, n, atol, result);
      break;
    case ScalarType::kByte:
    case ScalarType::kBool:
      CompareAs<uint8_t>(a, e, n, atol, result);
      break;
    case ScalarType::kShort:
      CompareAs<int16_t>(a, e, n, atol, result);
      break;
    case ScalarType::kInt:
      CompareAs<int32_t>(a, e, n, atol, result);
      break;
    case ScalarType::kLong:
      CompareAs<int64_t>(a, e, n, atol, result);
      break;
    case ScalarType::kUInt32:
      CompareAs<uint32_t>(a, e, n, atol, result);
      break;
    case ScalarType::kUInt64:
      CompareAs<uint64_t>(a, e, n, atol, result);
      break;
    case ScalarType::kFloat:
      CompareAs<float>(a, e, n, atol, result);
      break;
  }
  result->pass = result->mismatches == 0;
  return Error::kOk;
}

}  // namespace boardlab::runtime
