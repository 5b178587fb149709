#include "runtime/npu/npu_backend.h"

#include <new>

#include "runtime/npu/npu_engine.h"
#include "runtime/npu/npu_payload.h"
#include "runtime/npu/npu_timing.h"

namespace boardlab::runtime::npu {
namespace {

namespace fb = ::boardlab::npu;

// Everything Execute needs, in the Method's persistent memory.
struct Handle {
  NpuPayload payload;
  const uint64_t* kernel_cycles = nullptr;  // per kernel, NPU cycles
  uint64_t last_cycles = 0;
};

}  // namespace

Result<void*> NpuBackend::Init(Span<const uint8_t> processed, BackendContext& ctx) {
  Result<NpuPayload> payload = VerifyNpuPayload(processed);
  if (!payload.ok()) return payload.error();
  const NpuExecEnv env{Span<TensorView* const>(), ctx.arena, ctx.arena_size, ctx.weight_scratch,
                       ctx.weight_scratch_size};
  const Error fits = BindingsFit(*payload, env, /*check_args=*/false);
  if (fits != Error::kOk) return fits;
  RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kDelegateMemoryAllocationFailed,
                           "NPU backend: no persistent allocator");
  const uint32_t num_kernels = payload->program->kernels()->size();
  void* memory = ctx.persistent->Allocate(sizeof(Handle), alignof(Handle));
  uint64_t* cycles = ctx.persistent->AllocateArray<uint64_t>(num_kernels == 0 ? 1 : num_kernels);
  if (memory == nullptr || cycles == nullptr) {
    RT_INTERNAL_SET_MESSAGE("NPU backend: persistent memory full (%u kernels)",
                            static_cast<unsigned>(num_kernels));
    return Error::kDelegateMemoryAllocationFailed;
  }
  for (uint32_t k = 0; k < num_kernels; ++k) {
    const timing::NpuKernelShape shape =
        NpuShapeForKernel(*payload->program, *payload->program->kernels()->Get(k));
    cycles[k] = timing::NpuKernelCycles(shape, params_).total;
  }
  Handle* handle = new (memory) Handle{*payload, cycles, 0};
  return static_cast<void*>(handle);
}

Error NpuBackend::Execute(void* handle, Span<TensorView* const> args, BackendContext& ctx) {
  RT_CHECK_OR_RETURN_ERROR(handle != nullptr, kDelegateInvalidHandle, "NPU backend: null handle");
  Handle& h = *static_cast<Handle*>(handle);
  const NpuExecEnv env{
      args, ctx.arena, ctx.arena_size, ctx.weight_scratch, ctx.weight_scratch_size, ctx.temp};
  // The argument binding comes from the executor at every call, so it is checked here (cheap:
  // one comparison per IO tensor); the program itself was verified at Init.
  RT_RETURN_IF_ERROR(BindingsFit(h.payload, env));
  const fb::NpuProgram& program = *h.payload.program;
  const auto* types = program.commands_type();
  const auto* commands = program.commands();
  h.last_cycles = 0;
  for (uint32_t i = 0; i < commands->size(); ++i) {
    if (static_cast<fb::Command>(types->Get(i)) == fb::Command::Prefetch) {
      ExecutePrefetch(h.payload, *static_cast<const fb::Prefetch*>(commands->Get(i)), env);
      continue;
    }
    const uint32_t k = static_cast<const fb::RunKernel*>(commands->Get(i))->kernel();
    // Measured on the core: the engine's own run time, read from the board clock around it.
    const Ticks measured_start = core_clock_ != nullptr ? core_clock_() : 0;
    RT_RETURN_IF_ERROR(ExecuteKernel(h.payload, k, env));
    const Ticks measured_end = core_clock_ != nullptr ? core_clock_() : 0;
    // Kernel scratch lives for one kernel (the executor resets temp only after the whole call).
    if (ctx.temp != nullptr) ctx.temp->Reset();
    const uint64_t cycles = h.kernel_cycles[k];
    h.last_cycles += cycles;
    Ticks start, end;
    if (core_clock_ != nullptr) {
      start = measured_start;
      end = measured_end;
    } else if (clock_ != nullptr) {
      start = clock_->now();
      clock_->AdvanceNpuCycles(cycles);
      end = clock_->now();
    } else {
      start = local_ticks_;
      local_ticks_ += cycles;
      end = local_ticks_;
    }
    if (ctx.tracer != nullptr) {
      const fb::NpuKernel& kernel = *program.kernels()->Get(k);
      // Metadata: the kernel kind, one byte, like Neutron's function code (neutron-rt700.md 9),
      // then where the kernel ran (ExecutionUnit), so that no profile shows the Cortex-M33's time
      // as the NPU's.
      const uint8_t metadata[kKernelMetadataBytes] = {static_cast<uint8_t>(kernel.kind()),
                                                      static_cast<uint8_t>(ran_on())};
      ctx.tracer->LogDelegateEvent(kernel.debug_id(), ctx.chain, ctx.instruction, start, end,
                                   metadata, kKernelMetadataBytes);
    }
  }
  return Error::kOk;
}

uint64_t NpuBackend::LastCycles(void* handle) const {
  return handle == nullptr ? 0 : static_cast<const Handle*>(handle)->last_cycles;
}

}  // namespace boardlab::runtime::npu
