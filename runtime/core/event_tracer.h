#pragma once

// The narrow profiling interface the executor and the NPU backend report to (STYLE.md rule 11).
// Implementations: the ETDump writer (runtime/profiling/etdump/). Calls go through the RAII
// scopes in event_tracer_hooks.h, which compile away without RT_EVENT_TRACER_ENABLED.

#include <cstddef>
#include <cstdint>

namespace boardlab::runtime {

using Ticks = uint64_t;

/// Where a profiled kernel really ran, as the profile views print it ("ran on"). NPU kernel events
/// carry it in their delegate metadata (docs/runtime.md, "Clock and where it ran"); kernel calls
/// of the executor always run on the CPU core. The values are the metadata byte: never renumber.
enum class ExecutionUnit : uint8_t {
  kUnknown = 0,               // not recorded (ETDumps of other producers, older boardlab files)
  kCpu = 1,                   // a CPU kernel on the core (simulated, emulated or real)
  kNpu = 2,                   // the RT700 NPU: its timing model in the host simulator
  kNpuEmulatedCortexM33 = 3,  // an NPU kernel run by the software NPU engine on the Cortex-M33
  kDma = 4,                   // the RT700's flash -> SRAM weight DMA: its timing model (simulator)
  kDmaEmulatedCortexM33 = 5,  // a weight prefetch copied by the Cortex-M33 itself (no DMA driver)
};

/// The largest ExecutionUnit value; readers treat larger metadata bytes as kUnknown.
inline constexpr ExecutionUnit kLastExecutionUnit = ExecutionUnit::kDmaEmulatedCortexM33;

/// "cpu", "npu", "npu-emulated-cortex-m33", "dma", "dma-emulated-cortex-m33", or "unknown".
constexpr const char* ExecutionUnitName(ExecutionUnit unit) {
  switch (unit) {
    case ExecutionUnit::kCpu:
      return "cpu";
    case ExecutionUnit::kNpu:
      return "npu";
    case ExecutionUnit::kNpuEmulatedCortexM33:
      return "npu-emulated-cortex-m33";
    case ExecutionUnit::kDma:
      return "dma";
    case ExecutionUnit::kDmaEmulatedCortexM33:
      return "dma-emulated-cortex-m33";
    case ExecutionUnit::kUnknown:
      break;
  }
  return "unknown";
}

/// The zero-length event that marks an inference a kernel ended early (a streaming op waiting
/// for more input), in that inference's run block: profilers leave such partial runs out.
inline constexpr char kEndedEarlyEvent[] = "Method::ended_early";

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  /// Opens a run block (ETDump RunData), e.g. "Execute"; events go to the open block.
  virtual void BeginRun(const char* name) = 0;

  /// One profiled event of the method: a KernelCall ("OPERATOR_CALL" / "native_call_<op>.out"),
  /// "DELEGATE_CALL", "Method::execute". chain/instruction: chain index and chain-local
  /// instruction id (-1 outside an instruction).
  virtual void LogProfileEvent(const char* name, int32_t chain, int32_t instruction, Ticks start,
                               Ticks end) = 0;

  /// One event inside a delegate (an NPU kernel): identified by an int debug id (name null), with
  /// the enclosing DELEGATE_CALL's chain and instruction and optional metadata bytes.
  virtual void LogDelegateEvent(int32_t delegate_debug_id, int32_t chain, int32_t instruction,
                                Ticks start, Ticks end, const uint8_t* metadata,
                                uint32_t metadata_size) = 0;

  /// One event inside a delegate that is not a kernel, identified by a name (ETDump
  /// delegate_debug_id_str; the int id stays -1), e.g. a weight prefetch
  /// ("weight_prefetch:<debug id of the kernel it loads>"). `name` need only live for the call.
  /// Tracers that only follow kernels may ignore these events, hence the empty default.
  virtual void LogNamedDelegateEvent(const char* /*name*/, int32_t /*chain*/,
                                     int32_t /*instruction*/, Ticks /*start*/, Ticks /*end*/,
                                     const uint8_t* /*metadata*/, uint32_t /*metadata_size*/) {}

#if defined(BOARDLAB_RUNTIME_BAREMETAL)
  static void operator delete(void*, size_t) {}
#endif
};

}  // namespace boardlab::runtime
