#pragma once

// The narrow profiling interface the executor and the NPU backend report to (STYLE.md rule 11).
// Implementations: the ETDump writer (runtime/profiling/etdump/). Calls go through the RAII
// scopes in event_tracer_hooks.h, which compile away without RT_EVENT_TRACER_ENABLED.

#include <cstddef>
#include <cstdint>

namespace boardlab::runtime {

using Ticks = uint64_t;

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

  #if defined(BOARDLAB_RUNTIME_BAREMETAL)
  static void operator delete(void*, size_t) {}
#endif
};

}  // namespace boardlab::runtime
