#include "runtime/kernels/reference/cpu_features.h"

#if BOARDLAB_HAVE_AVX2_PATHS
#include <cstdlib>

namespace boardlab::runtime::kernels {

bool UseAvx2() {
  // A function-local static, not a namespace-scope one: __builtin_cpu_supports must not run
  // before libgcc has initialised its CPU model, and kernels may run from other constructors.
  static const bool use = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && std::getenv("BOARDLAB_NO_AVX2") == nullptr;
  }();
  return use;
}

}  // namespace boardlab::runtime::kernels
#endif
