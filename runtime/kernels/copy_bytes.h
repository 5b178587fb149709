#pragma once

// The byte copy that RESHAPE, SQUEEZE and the control-flow `copy` kernel share.

#include <cstring>

#include "runtime/core/tensor_view.h"

namespace boardlab::runtime::kernels {

/// Copies `in`'s bytes into `out` (same byte size, checked in Prepare); nothing to do when the
/// memory planner gave both the same bytes.
inline void CopyTensorBytes(const TensorView& in, const TensorView& out) {
  if (in.data != out.data) std::memmove(out.data, in.data, static_cast<size_t>(in.NumBytes()));
}

}  // namespace boardlab::runtime::kernels
