#include "runtime/profiling/etdump/etdump_reader.h"

#include <cstring>

#include "flatbuffers/flatbuffers.h"

namespace boardlab::runtime::etdump {
namespace {

// Where a delegate event's kernel ran: metadata byte 1 as NpuBackend writes it.
ExecutionUnit DelegateUnit(const ::etdump::ProfileEvent& pe) {
  const auto* metadata = pe.delegate_debug_metadata();
  if (metadata == nullptr || metadata->size() < 2) return ExecutionUnit::kUnknown;
  const uint8_t unit = metadata->Get(1);
  return unit <= static_cast<uint8_t>(kLastExecutionUnit) ? static_cast<ExecutionUnit>(unit)
                                                          : ExecutionUnit::kUnknown;
}

bool IsNativeCall(const char* name) {
  return name != nullptr && std::strncmp(name, "native_call_", 12) == 0;
}

}  // namespace

Result<EtdumpReader> EtdumpReader::Open(Span<const uint8_t> etdp) {
  flatbuffers::Verifier verifier(etdp.data(), etdp.size());
  RT_CHECK_OR_RETURN_ERROR(etdp.data() != nullptr && etdp.size() >= 12 &&
                               ::etdump::VerifySizePrefixedETDumpBuffer(verifier),
                           kInvalidProgram, "ETDump: not a size-prefixed ED00 buffer (%lu bytes)",
                           static_cast<unsigned long>(etdp.size()));
  return EtdumpReader(::etdump::GetSizePrefixedETDump(etdp.data()));
}

size_t EtdumpReader::NumProfileEvents() const {
  size_t n = 0;
  if (root_->run_data() == nullptr) return 0;
  for (const ::etdump::RunData* run : *root_->run_data()) {
    if (run->events() == nullptr) continue;
    for (const ::etdump::Event* e : *run->events()) n += e->profile_event() != nullptr ? 1 : 0;
  }
  return n;
}

size_t EtdumpReader::ReadRows(Span<ProfileRow> rows) const {
  size_t n = 0;
  if (root_->run_data() == nullptr) return 0;
  for (uint32_t r = 0; r < root_->run_data()->size(); ++r) {
    const ::etdump::RunData* run = root_->run_data()->Get(r);
    if (run->events() == nullptr) continue;
    for (const ::etdump::Event* e : *run->events()) {
      const ::etdump::ProfileEvent* pe = e->profile_event();
      if (pe == nullptr) continue;
      if (n >= rows.size()) return n;
      ProfileRow& row = rows[n++];
      row = ProfileRow{};
      row.run = r;
      row.run_name = run->name() ? run->name()->c_str() : nullptr;
      row.name = pe->name() ? pe->name()->c_str() : nullptr;
      row.chain = pe->chain_index();
      row.instruction = pe->instruction_id();
      row.delegate_debug_id = pe->delegate_debug_id_int();
      row.start = pe->start_time();
      row.end = pe->end_time();
      if (pe->delegate_debug_id_str() != nullptr) {
        row.delegate_debug_name = pe->delegate_debug_id_str()->c_str();
      }
      if (row.delegate_debug_id != -1 || row.delegate_debug_name != nullptr) {
        row.ran_on = DelegateUnit(*pe);
        if (const auto* metadata = pe->delegate_debug_metadata(); metadata != nullptr) {
          row.delegate_metadata = metadata->data();
          row.delegate_metadata_size = metadata->size();
        }
      } else if (IsNativeCall(row.name)) {
        row.ran_on = ExecutionUnit::kCpu;
      }
    }
  }
  return n;
}

}  // namespace boardlab::runtime::etdump
