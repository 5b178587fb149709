#pragma once

// "BoardlabNeutronBackend": runs an NPU partition's payload (docs/artifact-format.md section 3)
// in software with the Neutron's numerics, and reports one ETDump delegate profile event per NPU
// kernel with simulated-cycle timestamps (neutron-rt700.md section 9).
//
//   timing::TimingParams params = ...;    // from the target spec the artifact was compiled for
//   sim::SimClock clock(params);          // optional: shared with the executor (MethodOptions)
//   NpuBackend npu(params, &clock);       // must outlive every Method that uses it
//   BackendRegistry registry;
//   registry.Register(&npu);
//
// Timing: the artifact does not carry TimingParams, so the backend is constructed with them (the
// caller takes them from the target spec, as the compiler's cost model does). Each kernel costs
// timing::NpuKernelCycles(NpuShapeForKernel(...)).total NPU cycles; weight prefetch overlaps
// compute (the model's max(compute, memory, prefetch)), so Prefetch commands cost nothing extra.
// With a SimClock, event timestamps start at clock->now() and Execute advances the clock by the
// kernels' cycles (converted to clock ticks), so the executor's DELEGATE_CALL event, read from
// the same clock, encloses them; the executor must then NOT also add LastCycles(). Without a
// clock, timestamps are a backend-local simulated NPU cycle counter that only grows. Both are the
// NPU's timing model: the events say they ran on ExecutionUnit::kNpu.
//
// On a board without the NPU driver (the firmware: QEMU, and the RT700 until NXP's Neutron driver
// plugs in), the engine runs the kernels on the Cortex-M33 itself. Constructed with
// EmulatedOnCore, the backend stamps each kernel with the board clock read around its run and
// says it ran on ExecutionUnit::kNpuEmulatedCortexM33; LastCycles() still gives the model's NPU
// cycles.
//
// Delegate event metadata: kKernelMetadataBytes bytes, [0] the kernel kind (NpuKernelKind),
// [1] the ExecutionUnit (docs/runtime.md, "Clock and where it ran").
//
// Weight prefetches (programs with weights in flash, docs/artifact-format.md 3.4) are delegate
// events too, logged by name: "weight_prefetch:<debug id of the kernel whose weights they load>",
// so that a timeline can draw the DMA beside the kernels while kernel-only readers skip them.
// Where their time comes from follows the kernels': under the timing model the transfer starts
// with the kernel that reads it and lasts the model's DMA cycles (the model charges a kernel
// max(compute, SRAM traffic, prefetch), i.e. it overlaps a kernel's own weight transfer with it);
// on the core (EmulatedOnCore) it is the memcpy the core does at the Prefetch command, read from
// the board clock around it. Metadata: kPrefetchMetadataBytes bytes, [0] the loading kernel's
// kind, [1] the ExecutionUnit (kDma, kDmaEmulatedCortexM33), [2] the scratch slot, [3..6] the
// bytes copied, little-endian.

#include <cstdint>

#include "runtime/executor/backend.h"
#include "runtime/sim/sim_clock.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::runtime::npu {

inline constexpr const char kNpuBackendId[] = "BoardlabNeutronBackend";

/// Bytes of metadata per NPU kernel event: kind, then ExecutionUnit.
inline constexpr uint32_t kKernelMetadataBytes = 2;

/// Name prefix of weight prefetch events; the kernel's debug id follows in decimal.
inline constexpr const char kWeightPrefetchEventPrefix[] = "weight_prefetch:";
/// Bytes of metadata per weight prefetch event: kind, ExecutionUnit, slot, u32 bytes.
inline constexpr uint32_t kPrefetchMetadataBytes = 7;

/// The core's clock for a backend whose kernels run on the Cortex-M33 (see the file comment).
struct EmulatedOnCore {
  Ticks (*clock)() = nullptr;  // e.g. rt_pal_current_ticks; must not be null
};

class NpuBackend : public Backend {
 public:
  /// `params` is copied. `clock` (nullable, not owned) must outlive the backend.
  explicit NpuBackend(const timing::TimingParams& params, sim::SimClock* clock = nullptr)
      : params_(params), clock_(clock) {}
  /// Kernels timed by `core.clock`, reported as run on the Cortex-M33.
  NpuBackend(const timing::TimingParams& params, EmulatedOnCore core)
      : params_(params), core_clock_(core.clock) {}

  const char* id() const override { return kNpuBackendId; }

  /// Verifies the blob (VerifyNpuPayload), checks that ctx's arena and weight scratch can hold
  /// the program, precomputes every kernel's cycles, and allocates the handle from
  /// ctx.persistent. Errors: kInvalidProgram / kIncompatibleVersion / kNotSupported for the blob,
  /// kInvalidArgument when the arena or weight scratch is too small,
  /// kDelegateMemoryAllocationFailed when ctx.persistent is full.
  Result<void*> Init(Span<const uint8_t> processed, BackendContext& ctx) override;

  /// Runs the command stream. `args` = partition inputs then outputs, each with the byte size of
  /// its payload tensor (checked: kInvalidArgument). kDelegateInvalidHandle for a null handle.
  Error Execute(void* handle, Span<TensorView* const> args, BackendContext& ctx) override;

  /// Simulated NPU cycles of the last Execute of `handle` (sum over its kernels).
  uint64_t LastCycles(void* handle) const override;

  const timing::TimingParams& params() const { return params_; }

  /// Where this backend's kernels run, as its events say.
  ExecutionUnit ran_on() const {
    return core_clock_ != nullptr ? ExecutionUnit::kNpuEmulatedCortexM33 : ExecutionUnit::kNpu;
  }
  /// Where its weight prefetches run, as their events say.
  ExecutionUnit prefetch_ran_on() const {
    return core_clock_ != nullptr ? ExecutionUnit::kDmaEmulatedCortexM33 : ExecutionUnit::kDma;
  }

 private:
  /// `npu_cycles` as ticks of the modelled timeline (the SimClock's, else NPU cycles).
  Ticks ModelledTicks(uint64_t npu_cycles) const;
  timing::TimingParams params_;
  sim::SimClock* clock_ = nullptr;
  Ticks (*core_clock_)() = nullptr;
  Ticks local_ticks_ = 0;  // timestamps when there is no SimClock
};

}  // namespace boardlab::runtime::npu
