#pragma once

// Float32 transcendental functions whose results do not depend on the C library.
//
// TFLite Micro calls std::exp / std::log / std::expm1 / std::sin / std::cos on float, so its
// results are those of whatever libm it is linked with: glibc's expf and logf round correctly all
// but about one input in 10^4 (measured over every float), other C libraries (newlib on the board)
// have their own error patterns. boardlab computes the function in double and rounds once to float:
// the correctly rounded result except where the exact value lies within a double ulp of a float
// rounding boundary (about one input in 2^28), identical on the host and on the board, and equal to
// glibc's expf/logf wherever glibc itself rounds correctly.
//
// Every float expression in the runtime is compiled without contraction (-ffp-contract=off in
// runtime/CMakeLists.txt and firmware/CMakeLists.txt): a fused multiply-add rounds once where
// TFLite's source rounds twice, and the Cortex-M33's VFMA would otherwise make the board's
// floats differ from the host's.

#include <cmath>

namespace boardlab::runtime::kernels {

inline float ExpF(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
inline float LogF(float x) { return static_cast<float>(std::log(static_cast<double>(x))); }
inline float Expm1F(float x) { return static_cast<float>(std::expm1(static_cast<double>(x))); }
inline float SinF(float x) { return static_cast<float>(std::sin(static_cast<double>(x))); }
inline float CosF(float x) { return static_cast<float>(std::cos(static_cast<double>(x))); }

/// TFLite's TfLiteRound: round half away from zero (std::round).
inline float RoundHalfAwayF(float x) { return std::round(x); }

}  // namespace boardlab::runtime::kernels
