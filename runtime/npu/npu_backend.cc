#include "runtime/npu/npu_backend.h"

#include <cstdio>
#include <new>

#include "runtime/npu/npu_engine.h"
#include "runtime/npu/npu_payload.h"
#include "runtime/npu/npu_timing.h"

namespace boardlab::runtime::npu {
namespace {

namespace fb = ::boardlab::npu;

constexpr uint32_t kNone = UINT32_MAX;

// Everything Execute needs, in the Method's persistent memory.
struct Handle {
  NpuPayload payload;
  const uint64_t* kernel_cycles = nullptr;  // per kernel, NPU cycles
  // Only for programs with Prefetch commands (null otherwise):
  const uint64_t* prefetch_cycles = nullptr;  // per kernel: the model's DMA cycles of its weights
  const uint32_t* kernel_prefetch = nullptr;  // per kernel: the Prefetch loading it, or kNone
  const uint32_t* prefetch_kernel = nullptr;  // per command: the kernel a Prefetch loads, or kNone
  uint64_t last_cycles = 0;
};

bool IsPrefetch(const fb::NpuProgram& program, uint32_t command) {
  return static_cast<fb::Command>(program.commands_type()->Get(command)) == fb::Command::Prefetch;
}

bool HasPrefetch(const fb::NpuProgram& program) {
  for (uint32_t i = 0; i < program.commands()->size(); ++i) {
    if (IsPrefetch(program, i)) return true;
  }
  return false;
}

// Pairs every Prefetch with the kernel that reads its slot next (docs/artifact-format.md 3.4):
// the kernel whose weights it loads.
void PairPrefetches(const fb::NpuProgram& program, uint32_t* kernel_prefetch,
                    uint32_t* prefetch_kernel) {
  const uint32_t num_commands = program.commands()->size();
  for (uint32_t k = 0; k < program.kernels()->size(); ++k) kernel_prefetch[k] = kNone;
  for (uint32_t i = 0; i < num_commands; ++i) {
    prefetch_kernel[i] = kNone;
    if (!IsPrefetch(program, i)) continue;
    const auto* prefetch = static_cast<const fb::Prefetch*>(program.commands()->Get(i));
    for (uint32_t j = i + 1; j < num_commands; ++j) {
      if (IsPrefetch(program, j)) continue;
      const uint32_t k = static_cast<const fb::RunKernel*>(program.commands()->Get(j))->kernel();
      if (program.kernels()->Get(k)->weight_slot() == static_cast<int32_t>(prefetch->slot())) {
        prefetch_kernel[i] = k;
        kernel_prefetch[k] = i;
        break;
      }
    }
  }
}

// The tables of a program with Prefetch commands, paired; returns the per-kernel DMA cycles for
// Init to fill, null when `persistent` is full.
uint64_t* AllocatePrefetchTables(const fb::NpuProgram& program, MemoryAllocator& persistent,
                                 Handle& handle) {
  const uint32_t num_kernels = program.kernels()->size();
  uint64_t* cycles = persistent.AllocateArray<uint64_t>(num_kernels == 0 ? 1 : num_kernels);
  uint32_t* kernel_prefetch =
      persistent.AllocateArray<uint32_t>(num_kernels == 0 ? 1 : num_kernels);
  uint32_t* prefetch_kernel = persistent.AllocateArray<uint32_t>(program.commands()->size());
  if (cycles == nullptr || kernel_prefetch == nullptr || prefetch_kernel == nullptr) {
    return nullptr;
  }
  PairPrefetches(program, kernel_prefetch, prefetch_kernel);
  handle.prefetch_cycles = cycles;
  handle.kernel_prefetch = kernel_prefetch;
  handle.prefetch_kernel = prefetch_kernel;
  return cycles;
}

// Logs Prefetch command `command` as a named delegate event (see npu_backend.h).
void LogPrefetch(const Handle& h, uint32_t command, ExecutionUnit unit, Ticks start, Ticks end,
                 BackendContext& ctx) {
  const uint32_t k = h.prefetch_kernel[command];
  if (ctx.tracer == nullptr || k == kNone) return;
  const fb::NpuProgram& program = *h.payload.program;
  const fb::NpuKernel& kernel = *program.kernels()->Get(k);
  const auto* prefetch = static_cast<const fb::Prefetch*>(program.commands()->Get(command));
  char name[sizeof(kWeightPrefetchEventPrefix) + 12];
  std::snprintf(name, sizeof(name), "%s%ld", kWeightPrefetchEventPrefix,
                static_cast<long>(kernel.debug_id()));
  const uint32_t bytes =
      prefetch->size() > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(prefetch->size());
  const uint8_t metadata[kPrefetchMetadataBytes] = {
      static_cast<uint8_t>(kernel.kind()),    static_cast<uint8_t>(unit),
      static_cast<uint8_t>(prefetch->slot()), static_cast<uint8_t>(bytes),
      static_cast<uint8_t>(bytes >> 8),       static_cast<uint8_t>(bytes >> 16),
      static_cast<uint8_t>(bytes >> 24)};
  ctx.tracer->LogNamedDelegateEvent(name, ctx.chain, ctx.instruction, start, end, metadata,
                                    kPrefetchMetadataBytes);
}

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
  const fb::NpuProgram& program = *payload->program;
  const uint32_t num_kernels = program.kernels()->size();
  void* memory = ctx.persistent->Allocate(sizeof(Handle), alignof(Handle));
  uint64_t* cycles = ctx.persistent->AllocateArray<uint64_t>(num_kernels == 0 ? 1 : num_kernels);
  if (memory == nullptr || cycles == nullptr) {
    RT_INTERNAL_SET_MESSAGE("NPU backend: persistent memory full (%u kernels)",
                            static_cast<unsigned>(num_kernels));
    return Error::kDelegateMemoryAllocationFailed;
  }
  Handle* handle = new (memory) Handle{*payload, cycles};
  uint64_t* prefetch_cycles = nullptr;
  if (HasPrefetch(program)) {
    prefetch_cycles = AllocatePrefetchTables(program, *ctx.persistent, *handle);
    RT_CHECK_OR_RETURN_ERROR(prefetch_cycles != nullptr, kDelegateMemoryAllocationFailed,
                             "NPU backend: persistent memory full (prefetch tables of %u kernels)",
                             static_cast<unsigned>(num_kernels));
  }
  for (uint32_t k = 0; k < num_kernels; ++k) {
    const timing::NpuKernelCost cost =
        timing::NpuKernelCycles(NpuShapeForKernel(program, *program.kernels()->Get(k)), params_);
    cycles[k] = cost.total;
    if (prefetch_cycles != nullptr) prefetch_cycles[k] = cost.prefetch;
  }
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
      const Ticks copy_start = core_clock_ != nullptr ? core_clock_() : 0;
      ExecutePrefetch(h.payload, *static_cast<const fb::Prefetch*>(commands->Get(i)), env);
      // On the core the copy is the core's own work, measured where it happens; the modelled
      // DMA is logged with the kernel that reads it (below).
      if (core_clock_ != nullptr) {
        LogPrefetch(h, i, prefetch_ran_on(), copy_start, core_clock_(), ctx);
      }
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
    // The timing model overlaps a kernel's own weight transfer with the kernel.
    if (core_clock_ == nullptr && h.kernel_prefetch != nullptr && h.kernel_prefetch[k] != kNone) {
      LogPrefetch(h, h.kernel_prefetch[k], prefetch_ran_on(), start,
                  start + ModelledTicks(h.prefetch_cycles[k]), ctx);
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

Ticks NpuBackend::ModelledTicks(uint64_t npu_cycles) const {
  return clock_ != nullptr ? clock_->NpuCyclesToTicks(npu_cycles) : npu_cycles;
}

uint64_t NpuBackend::LastCycles(void* handle) const {
  return handle == nullptr ? 0 : static_cast<const Handle*>(handle)->last_cycles;
}

}  // namespace boardlab::runtime::npu
