// The static kernel table (STYLE.md rule 10): built at compile time from BOARDLAB_KERNEL_LIST, so
// registering costs no RAM and nothing runs before main.

#include <cstring>

#include "runtime/executor/kernel.h"
#include "runtime/kernels/kernels.h"

namespace boardlab::runtime {
namespace {

constexpr KernelRegistration kKernels[] = {
#define BOARDLAB_REGISTER_KERNEL(name, Fn, OpData)                                                \
  {"boardlab::" #name ".out", &kernels::Fn##Prepare, &kernels::Fn##Eval, sizeof(kernels::OpData), \
   kernels::kKeepsState<kernels::OpData>},
    BOARDLAB_KERNEL_LIST(BOARDLAB_REGISTER_KERNEL)
#undef BOARDLAB_REGISTER_KERNEL
};

}  // namespace

Span<const KernelRegistration> AllKernels() {
  return Span<const KernelRegistration>(kKernels, sizeof(kKernels) / sizeof(kKernels[0]));
}

const KernelRegistration* FindKernel(const char* name) {
  if (name == nullptr) return nullptr;
  for (const KernelRegistration& k : kKernels) {
    if (std::strcmp(k.name, name) == 0) return &k;
  }
  return nullptr;
}

}  // namespace boardlab::runtime
