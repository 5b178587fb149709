#pragma once

// An EventTracer that writes ExecuTorch ETDump (.etdp) bytes into a caller-provided buffer
// (executorch-formats.md section 3; ExecuTorch's devtools/etdump/etdump_flatcc.h shape, STYLE.md
// rule 11): size-prefixed flatbuffer, identifier "ED00", ETDump.version 0, one RunData per
// BeginRun, ProfileEvents in the order they are logged.
//
//   alignas(16) static uint8_t etdump_buffer[64 * 1024];
//   EtdumpWriter writer(etdump_buffer, sizeof(etdump_buffer));
//   program.LoadMethod("forward", memory, backends, &writer, ...);
//   method->Execute();
//   Result<Span<const uint8_t>> etdp = writer.Finish();   // write these bytes to model.etdp
//
// No heap: a flatbuffers::FlatBufferBuilder runs over the caller's buffer through a bounded
// allocator; the event offsets are kept in the same buffer. When the buffer is full further
// events are dropped (dropped_events() counts them) and Finish() still produces a valid file.

#include <cstddef>
#include <cstdint>

#include "runtime/core/event_tracer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace boardlab::runtime::etdump {

class EtdumpWriter : public EventTracer {
 public:
  /// `buffer` (any alignment; must outlive the writer and the span Finish() returns) holds the
  /// builder and the bookkeeping: about 80 bytes per event plus the names. `max_events` and
  /// `max_runs` bound the events and run blocks kept (4 bytes each, carved from `buffer`).
  EtdumpWriter(uint8_t* buffer, size_t size, uint32_t max_events = 1024, uint32_t max_runs = 16);
  ~EtdumpWriter() override;
  EtdumpWriter(const EtdumpWriter&) = delete;
  EtdumpWriter& operator=(const EtdumpWriter&) = delete;

  void BeginRun(const char* name) override;
  /// ProfileEvent{name, chain_index, instruction_id, start_time, end_time}.
  void LogProfileEvent(const char* name, int32_t chain, int32_t instruction, Ticks start,
                       Ticks end) override;
  /// ProfileEvent{delegate_debug_id_int, chain_index, instruction_id, start, end,
  /// delegate_debug_metadata (always written, possibly empty)}, name unset. An event before any
  /// BeginRun opens a run named "Default".
  void LogDelegateEvent(int32_t delegate_debug_id, int32_t chain, int32_t instruction, Ticks start,
                        Ticks end, const uint8_t* metadata, uint32_t metadata_size) override;
  /// ProfileEvent{delegate_debug_id_str = name, delegate_debug_id_int -1, chain_index,
  /// instruction_id, start, end, delegate_debug_metadata}, as ExecuTorch writes a delegate event
  /// logged by name.
  void LogNamedDelegateEvent(const char* name, int32_t chain, int32_t instruction, Ticks start,
                             Ticks end, const uint8_t* metadata, uint32_t metadata_size) override;

  /// DebugEvent{name, debug_entry: Value{Int value}}, chain_index 0, instruction_id unset: a named
  /// integer of the open run (an event before any BeginRun opens "Default"). boardlab records the
  /// clock this way (clock_record.h); ExecuTorch's Inspector shows it as the run's debug data.
  void LogNamedInt(const char* name, int64_t value);

  /// Closes the open run and finishes the file. The bytes stay valid until the writer is
  /// destroyed; no events can be logged afterwards. kMemoryAllocationFailed when `buffer` was too
  /// small even for an empty file; kInvalidState when called twice.
  Result<Span<const uint8_t>> Finish();

  uint32_t dropped_events() const { return dropped_events_; }
  uint32_t num_events() const { return num_events_; }

 private:
  class Impl;
  bool Reserve(size_t bytes);
  bool ReserveEvent(size_t bytes);
  void CloseRun();
  void LogEvent(const char* name, int32_t delegate_id, int32_t chain, int32_t instruction,
                Ticks start, Ticks end, const uint8_t* metadata, uint32_t metadata_size,
                bool delegate);

  Impl* impl_ = nullptr;  // placement-constructed in the buffer
  uint32_t* event_offsets_ = nullptr;
  uint32_t max_events_ = 0;
  uint32_t* run_offsets_ = nullptr;
  uint32_t max_runs_ = 0;
  uint32_t num_runs_ = 0;
  uint32_t run_first_event_ = 0;  // event_offsets_ index of the open run's first event
  uint32_t num_events_ = 0;       // events of the open run
  uint32_t run_name_ = 0;         // string offset of the open run's name
  bool run_open_ = false;
  bool finished_ = false;
  uint32_t dropped_events_ = 0;
};

}  // namespace boardlab::runtime::etdump
