#pragma once

// Decodes an .etdp (size-prefixed ETDump, executorch-formats.md section 3) into profile rows, so
// tools and tests can read boardlab's profiles without the Python Inspector. No heap, no
// exceptions: rows go into a caller array, strings point into the .etdp. Naming the rows after
// the compiler's debug map is the host's job (runtime/cli/debug_map_names.h).
//
//   Result<EtdumpReader> reader = EtdumpReader::Open(etdp_bytes);
//   ProfileRow rows[256];
//   size_t n = reader->ReadRows(rows);   // rows[0..n)
//
// `etdp` must outlive the reader and the rows.

#include <cstddef>
#include <cstdint>

#include "boardlab/schema/etdump_generated.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace boardlab::runtime::etdump {

struct ProfileRow {
  uint32_t run = 0;                // RunData index
  const char* run_name = nullptr;  // RunData.name (NUL-terminated, in the .etdp)
  const char* name = nullptr;      // ProfileEvent.name; null for delegate events
  int32_t chain = -1;
  int32_t instruction = -1;
  int32_t delegate_debug_id = -1;  // -1 for non-delegate events and named delegate events
  // A delegate event identified by name (delegate_debug_id_str), e.g. "weight_prefetch:10";
  // null otherwise.
  const char* delegate_debug_name = nullptr;
  // A delegate event's delegate_debug_metadata (in the .etdp); null and 0 otherwise.
  const uint8_t* delegate_metadata = nullptr;
  uint32_t delegate_metadata_size = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t duration() const { return end >= start ? end - start : 0; }
  // Where the kernel ran: a delegate event's metadata byte 1 (NpuBackend; also for named delegate
  // events), kCpu for a "native_call_*" event, kUnknown otherwise (and for delegate events
  // without that byte).
  ExecutionUnit ran_on = ExecutionUnit::kUnknown;
};

class EtdumpReader {
 public:
  /// Verifies `etdp` as a size-prefixed ETDump ("ED00"). kInvalidProgram otherwise.
  static Result<EtdumpReader> Open(Span<const uint8_t> etdp);

  const ::etdump::ETDump& root() const { return *root_; }
  /// Number of ProfileEvents over all runs.
  size_t NumProfileEvents() const;

  /// Fills `rows` with the ProfileEvents in file order (at most rows.size()). Returns the number
  /// of rows.
  size_t ReadRows(Span<ProfileRow> rows) const;

 private:
  explicit EtdumpReader(const ::etdump::ETDump* root) : root_(root) {}
  const ::etdump::ETDump* root_;
};

}  // namespace boardlab::runtime::etdump
