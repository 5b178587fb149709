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
// clock, timestamps are a backend-local simulated NPU cycle counter that only grows.

#include <cstdint>

#include "runtime/executor/backend.h"
#include "runtime/sim/sim_clock.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::runtime::npu {

inline constexpr const char kNpuBackendId[] = "BoardlabNeutronBackend";

class NpuBackend : public Backend {
 public:
  /// `params` is copied. `clock` (nullable, not owned) must outlive the backend.
  explicit NpuBackend(const timing::TimingParams& params, sim::SimClock* clock = nullptr)
      : params_(params), clock_(clock) {}

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

 private:
  timing::TimingParams params_;
  sim::SimClock* clock_;
  Ticks local_ticks_ = 0;  // timestamps when there is no SimClock
};

}  // namespace boardlab::runtime::npu
