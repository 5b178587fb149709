#include "runtime/profiling/etdump/etdump_writer.h"

#include <cstring>
#include <new>

#include "boardlab/schema/etdump_generated.h"
#include "flatbuffers/flatbuffers.h"

// The builder writes back to front into one fixed region; it can never grow, so every addition
// is preceded by Reserve(), a conservative bound of what the builder will write (data, vtable,
// padding) plus what Finish still needs. Events are built completely when logged (children
// before parents, as FlatBuffers requires) and only their offsets are kept until the run closes.

namespace boardlab::runtime::etdump {
namespace {

// A flatbuffers::Allocator over one caller region that can be handed out once and never grows.
class FixedAllocator : public flatbuffers::Allocator {
 public:
  FixedAllocator(uint8_t* base, size_t size) : base_(base), size_(size) {}
  uint8_t* allocate(size_t size) override {
    if (in_use_ || size > size_) return nullptr;
    in_use_ = true;
    return base_;
  }
  void deallocate(uint8_t*, size_t) override { in_use_ = false; }
  uint8_t* reallocate_downward(uint8_t*, size_t, size_t, size_t, size_t) override {
    // Unreachable: Reserve() keeps every addition within the initial allocation.
    return nullptr;
  }

 private:
  uint8_t* base_;
  size_t size_;
  bool in_use_ = false;
};

// Bytes Finish() needs beyond the runs' events: the run-data vector, the root table, its
// vtable, the size prefix, identifier and alignment slack.
constexpr size_t kFinishReserve = 256;
// Per table: vtable (up to 20 bytes), table header and alignment slack; plus builder scratch.
constexpr size_t kTableOverhead = 96;

size_t StringBytes(const char* s) { return s == nullptr ? 0 : std::strlen(s) + 1 + 4 + 4; }

}  // namespace

class EtdumpWriter::Impl {
 public:
  Impl(uint8_t* base, size_t size)
      : allocator(base, size), capacity(size), fbb(size, &allocator, false, 16) {}

  // Free bytes of the region, minus the builder's scratch (vtable offsets, field records).
  size_t Free() const {
    const size_t used = fbb.GetSize() + Scratch();
    return used >= capacity ? 0 : capacity - used;
  }
  size_t Scratch() const { return static_cast<const Builder&>(fbb).scratch(); }

  // Exposes the builder's scratch size (protected in FlatBufferBuilder).
  struct Builder : flatbuffers::FlatBufferBuilder {
    using flatbuffers::FlatBufferBuilder::FlatBufferBuilder;
    size_t scratch() const { return buf_.scratch_size(); }
  };

  FixedAllocator allocator;
  size_t capacity;
  Builder fbb;
};

EtdumpWriter::EtdumpWriter(uint8_t* buffer, size_t size, uint32_t max_events, uint32_t max_runs) {
  // Carve, in order: the Impl object, the run and event offset arrays, the builder region.
  uintptr_t p = reinterpret_cast<uintptr_t>(buffer);
  const uintptr_t end = p + size;
  auto take = [&](size_t bytes, size_t align) -> uint8_t* {
    const uintptr_t aligned = (p + align - 1) & ~(uintptr_t{align} - 1);
    if (aligned > end || bytes > end - aligned) return nullptr;
    p = aligned + bytes;
    return reinterpret_cast<uint8_t*>(aligned);
  };
  uint8_t* impl = take(sizeof(Impl), alignof(Impl));
  uint8_t* runs = take(sizeof(uint32_t) * max_runs, alignof(uint32_t));
  uint8_t* events = take(sizeof(uint32_t) * max_events, alignof(uint32_t));
  uint8_t* region = take(0, 16);
  if (impl == nullptr || runs == nullptr || events == nullptr || region == nullptr) return;
  const size_t region_size = (end - reinterpret_cast<uintptr_t>(region)) & ~size_t{15};
  impl_ = new (impl) Impl(region, region_size);
  run_offsets_ = reinterpret_cast<uint32_t*>(runs);
  max_runs_ = max_runs;
  event_offsets_ = reinterpret_cast<uint32_t*>(events);
  max_events_ = max_events;
}

EtdumpWriter::~EtdumpWriter() {
  if (impl_ != nullptr) impl_->~Impl();
}

bool EtdumpWriter::Reserve(size_t bytes) {
  return impl_ != nullptr && !finished_ && impl_->Free() >= bytes + kFinishReserve;
}

void EtdumpWriter::CloseRun() {
  if (!run_open_) return;
  run_open_ = false;
  auto& fbb = impl_->fbb;
  // The vector, then the RunData table; Reserve() in BeginRun/LogEvent kept room for both.
  fbb.StartVector(num_events_, sizeof(flatbuffers::uoffset_t));
  for (uint32_t i = num_events_; i > 0; --i) {
    fbb.PushElement(flatbuffers::Offset<::etdump::Event>(event_offsets_[run_first_event_ + i - 1]));
  }
  const auto events =
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<::etdump::Event>>>(
          fbb.EndVector(num_events_));
  ::etdump::RunDataBuilder run(fbb);
  run.add_events(events);
  run.add_name(flatbuffers::Offset<flatbuffers::String>(run_name_));
  run_offsets_[num_runs_++] = run.Finish().o;
  run_first_event_ += num_events_;
  num_events_ = 0;
}

void EtdumpWriter::BeginRun(const char* name) {
  if (impl_ == nullptr || finished_) return;
  CloseRun();
  // Room for the name, this run's table and its vector header, and one slot in the root vector.
  if (num_runs_ >= max_runs_ || !Reserve(StringBytes(name) + 2 * kTableOverhead)) {
    ++dropped_events_;
    return;
  }
  run_name_ = impl_->fbb.CreateString(name == nullptr ? "" : name).o;
  run_open_ = true;
}

void EtdumpWriter::LogEvent(const char* name, int32_t delegate_id, int32_t chain,
                            int32_t instruction, Ticks start, Ticks end, const uint8_t* metadata,
                            uint32_t metadata_size, bool delegate) {
  const size_t need = StringBytes(name) + metadata_size + 8 + 2 * kTableOverhead + 4;
  if (!ReserveEvent(need)) return;
  auto& fbb = impl_->fbb;
  flatbuffers::Offset<flatbuffers::String> name_offset;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> metadata_offset;
  if (delegate) {
    // ExecuTorch always writes the metadata vector for delegate events, empty or not.
    metadata_offset = fbb.CreateVector(metadata_size > 0 ? metadata : nullptr, metadata_size);
  }
  // A delegate event has a name only when it is identified by one (delegate_debug_id_str).
  if (!delegate || name != nullptr) name_offset = fbb.CreateString(name == nullptr ? "" : name);
  ::etdump::ProfileEventBuilder pe(fbb);
  pe.add_end_time(end);
  pe.add_start_time(start);
  if (delegate) {
    pe.add_delegate_debug_metadata(metadata_offset);
    if (name != nullptr) {
      pe.add_delegate_debug_id_str(name_offset);
    } else {
      pe.add_delegate_debug_id_int(delegate_id);
    }
  } else {
    pe.add_name(name_offset);
  }
  pe.add_instruction_id(instruction);
  pe.add_chain_index(chain);
  const auto profile_event = pe.Finish();
  ::etdump::EventBuilder event(fbb);
  event.add_profile_event(profile_event);
  event_offsets_[run_first_event_ + num_events_++] = event.Finish().o;
}

// Opens "Default" when no run is open, and checks that one more event of `bytes` fits; counts
// it as dropped otherwise.
bool EtdumpWriter::ReserveEvent(size_t bytes) {
  if (impl_ == nullptr || finished_) return false;
  if (!run_open_) BeginRun("Default");
  if (!run_open_ || run_first_event_ + num_events_ >= max_events_ || !Reserve(bytes)) {
    ++dropped_events_;
    return false;
  }
  return true;
}

void EtdumpWriter::LogNamedInt(const char* name, int64_t value) {
  // Four tables: Int, Value, DebugEvent, Event.
  if (!ReserveEvent(StringBytes(name) + 4 * kTableOverhead + 4)) return;
  auto& fbb = impl_->fbb;
  const auto name_offset = fbb.CreateString(name == nullptr ? "" : name);
  const auto int_value = ::etdump::CreateInt(fbb, value);
  ::etdump::ValueBuilder entry(fbb);
  entry.add_int_value(int_value);
  entry.add_val(::etdump::ValueType::Int);
  const auto entry_offset = entry.Finish();
  ::etdump::DebugEventBuilder debug(fbb);
  debug.add_name(name_offset);
  debug.add_debug_entry(entry_offset);
  const auto debug_offset = debug.Finish();
  ::etdump::EventBuilder event(fbb);
  event.add_debug_event(debug_offset);
  event_offsets_[run_first_event_ + num_events_++] = event.Finish().o;
}

void EtdumpWriter::LogProfileEvent(const char* name, int32_t chain, int32_t instruction,
                                   Ticks start, Ticks end) {
  LogEvent(name, -1, chain, instruction, start, end, nullptr, 0, /*delegate=*/false);
}

void EtdumpWriter::LogDelegateEvent(int32_t delegate_debug_id, int32_t chain, int32_t instruction,
                                    Ticks start, Ticks end, const uint8_t* metadata,
                                    uint32_t metadata_size) {
  LogEvent(nullptr, delegate_debug_id, chain, instruction, start, end, metadata, metadata_size,
           /*delegate=*/true);
}

void EtdumpWriter::LogNamedDelegateEvent(const char* name, int32_t chain, int32_t instruction,
                                         Ticks start, Ticks end, const uint8_t* metadata,
                                         uint32_t metadata_size) {
  LogEvent(name == nullptr ? "" : name, -1, chain, instruction, start, end, metadata, metadata_size,
           /*delegate=*/true);
}

Result<Span<const uint8_t>> EtdumpWriter::Finish() {
  RT_CHECK_OR_RETURN_ERROR(!finished_, kInvalidState, "ETDump: Finish() called twice");
  RT_CHECK_OR_RETURN_ERROR(impl_ != nullptr && impl_->Free() >= kFinishReserve + 4 * num_runs_,
                           kMemoryAllocationFailed, "ETDump: buffer too small");
  CloseRun();
  finished_ = true;
  auto& fbb = impl_->fbb;
  fbb.StartVector(num_runs_, sizeof(flatbuffers::uoffset_t));
  for (uint32_t i = num_runs_; i > 0; --i) {
    fbb.PushElement(flatbuffers::Offset<::etdump::RunData>(run_offsets_[i - 1]));
  }
  const auto runs =
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<::etdump::RunData>>>(
          fbb.EndVector(num_runs_));
  // version 0 equals the default and would be omitted; ExecuTorch's flatcc writer omits it too.
  const auto root = ::etdump::CreateETDump(fbb, /*version=*/0, runs);
  fbb.FinishSizePrefixed(root, ::etdump::ETDumpIdentifier());
  return Span<const uint8_t>(fbb.GetBufferPointer(), fbb.GetSize());
}

}  // namespace boardlab::runtime::etdump
