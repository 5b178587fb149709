#pragma once

// Run-time choice of the x86-64 kernel paths. The shipped binaries are built for the x86-64
// baseline (SSE2, no -march flag); the AVX2 variants of the hot inner loops are compiled with
// __attribute__((target("avx2"))) and only called when the CPU reports AVX2. Elsewhere (Cortex-M,
// other hosts) there is nothing to choose and UseAvx2() is constant false.
//
// Usage:
//   if (UseAvx2()) return DotTileAvx2(...);

#if defined(__x86_64__) && defined(__GNUC__)
#define BOARDLAB_HAVE_AVX2_PATHS 1
#define BOARDLAB_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define BOARDLAB_HAVE_AVX2_PATHS 0
#endif

namespace boardlab::runtime::kernels {

#if BOARDLAB_HAVE_AVX2_PATHS
/// True when the AVX2 kernel paths may run: the CPU supports AVX2 and the environment variable
/// BOARDLAB_NO_AVX2 is unset (set it to run and test the SSE2 baseline on an AVX2 machine).
/// Decided on the first call; thread-safe. Both paths give bit-identical results.
bool UseAvx2();
#else
inline constexpr bool UseAvx2() { return false; }
#endif

}  // namespace boardlab::runtime::kernels
