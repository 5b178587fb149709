#pragma once

// The timing-model view of a payload kernel: the runtime counterpart of the compiler's
// NpuShapeFor (compiler/cost_model.h), so the simulated profile and the compile report give the
// same cycles for the same kernel.
//
// Usage:
//   NpuKernelShape shape = NpuShapeForKernel(*payload.program, *program->kernels()->Get(k));
//   uint64_t cycles = timing::NpuKernelCycles(shape, params).total;

#include "boardlab/schema/npu_payload_generated.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::runtime::npu {

/// The NpuKernelShape of kernel `k` of a verified `program`. Matches NpuShapeFor of the IR op it
/// was lowered from: out rows/cols/channels from the output shape (NHWC for rank 4, else rows =
/// all but the last dim), the reduction from the geometry and operand shapes, input_bytes = the
/// non-constant inputs, weight_bytes = the unpadded IR weights (O*kH*kW*I, kH*kW*C, O*I) plus
/// 4 bytes of bias per output channel, plus Constant operands. One known difference: the IR
/// counts no bias bytes for a conv without bias, while the payload always carries (zero) bias.
/// weights_in_flash = the program prefetches and the kernel has weight bytes.
timing::NpuKernelShape NpuShapeForKernel(const ::boardlab::npu::NpuProgram& program,
                                         const ::boardlab::npu::NpuKernel& k);

}  // namespace boardlab::runtime::npu
