#pragma once

// A simulated cycle clock for the host simulator and QEMU: time advances only by what the RT700
// timing model (runtime/timing) says each kernel costs, so the same artifact and inputs always
// give the same profile (no wall-clock noise).
//
//   SimClock clock(params);                          // params: the target spec's TimingParams
//   SimClock::Install(&clock);                       // Read() now reports this clock
//   SimKernelLookup::SetBase(FindKernel);            // CPU kernels advance it (see below)
//   MethodOptions options{.clock = &SimClock::Read};
//   NpuBackend npu(params, &clock);                  // NPU kernels advance it
//   program.LoadMethod("forward", memory, backends, tracer, &SimKernelLookup::Find, options);
//
// Ticks are CPU cycles (params.cpu_clock_hz); NPU cycles are converted at npu/cpu clock ratio.
// Seam with the executor: its Clock is a plain function pointer `Ticks (*)()`, so the installed
// clock is process-wide (one simulated board per process; not thread-safe). CPU kernels advance
// it through SimKernelLookup, which hands the executor wrapped registrations whose Eval calls the
// real Eval and then AdvanceForKernelCall(); the NPU backend advances it itself.

#include <cstdint>

#include "runtime/core/event_tracer.h"
#include "runtime/core/span.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/value.h"
#include "runtime/timing/timing_model.h"

namespace boardlab::runtime::sim {

class SimClock {
 public:
  /// `params` is copied.
  explicit SimClock(const timing::TimingParams& params) : params_(params) {}

  Ticks now() const { return now_; }
  void Reset(Ticks t = 0) { now_ = t; }

  /// Advances by `cycles` CPU cycles.
  void AdvanceCpuCycles(uint64_t cycles) { now_ += cycles; }
  /// Advances by `cycles` NPU cycles (rounded up to whole CPU cycles).
  void AdvanceNpuCycles(uint64_t cycles) { now_ += NpuCyclesToTicks(cycles); }
  Ticks NpuCyclesToTicks(uint64_t npu_cycles) const;

  /// Advances by timing::CpuKernelCycles of the KernelCall (`kernel_name` is the operator key,
  /// "boardlab::conv_2d.out"; `args` its values). Returns the cycles added.
  uint64_t AdvanceForKernelCall(const char* kernel_name, Span<Value* const> args);

  const timing::TimingParams& params() const { return params_; }

  /// Makes `clock` (nullable, not owned, must stay alive while installed) the clock Read()
  /// reports.
  static void Install(SimClock* clock);
  static SimClock* Installed();
  /// The executor's Clock: now() of the installed clock, 0 when none is installed.
  static Ticks Read();

 private:
  timing::TimingParams params_;
  Ticks now_ = 0;
};

/// The Cortex-M33 kernel shape of a KernelCall, derived from its operator key and argument
/// TensorViews (docs/artifact-format.md 2.1): the output is the last tensor argument; MACs of
/// CONV_2D = output elements x kH x kW x Cin (OHWI weights, args[1]), DEPTHWISE_CONV_2D = output
/// elements x kH x kW, FULLY_CONNECTED = output elements x weights' last dim, BATCH_MATMUL =
/// output elements x the reduction dim, pools = output elements x filter taps (the filter IntList
/// args[3]), MEAN = input elements. Classes follow compiler/cost_model.cc CpuClassOf. Unknown
/// operators count as data movement.
timing::CpuKernelShape CpuShapeForKernelCall(const char* kernel_name, Span<Value* const> args);

/// A KernelLookupFn that returns the base lookup's registration with Eval wrapped so that the
/// installed SimClock advances after every call. Holds up to kMaxKernels distinct operators in a
/// static table (process-wide, like the installed clock).
class SimKernelLookup {
 public:
  static constexpr int kMaxKernels = 64;
  /// The lookup that finds the real kernels (e.g. FindKernel); also clears the table.
  static void SetBase(const KernelRegistration* (*base)(const char* name));
  /// nullptr when the base has no kernel `name` or the table is full.
  static const KernelRegistration* Find(const char* name);
};

}  // namespace boardlab::runtime::sim
