#pragma once

// Decodes an .etdp (size-prefixed ETDump, executorch-formats.md section 3) into profile rows and
// joins them with the compiler's debug map JSON (docs/artifact-format.md section 4), so tools and
// tests can print "NPU kernel 10 (conv_out, TFLite ops 0,1): 1234 cycles" without the Python
// Inspector. No heap, no exceptions: rows go into a caller array, strings point into the inputs.
//
//   Result<EtdumpReader> reader = EtdumpReader::Open(etdp_bytes);
//   ProfileRow rows[256];
//   size_t n = reader->ReadRows(rows, debug_map_json);   // rows[0..n)
//
// `etdp` and `debug_map_json` must outlive the reader and the rows.

#include <cstddef>
#include <cstdint>

#include "boardlab/schema/etdump_generated.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace boardlab::runtime::etdump {

/// A string slice into the debug map JSON (not NUL-terminated, escapes left as written).
struct JsonString {
  const char* data = nullptr;
  size_t size = 0;
};

struct ProfileRow {
  uint32_t run = 0;                // RunData index
  const char* run_name = nullptr;  // RunData.name (NUL-terminated, in the .etdp)
  const char* name = nullptr;      // ProfileEvent.name; null for delegate events
  int32_t chain = -1;
  int32_t instruction = -1;
  int32_t delegate_debug_id = -1;  // -1 for non-delegate events
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t duration() const { return end >= start ? end - start : 0; }
  // Where the kernel ran: a delegate event's metadata byte 1 (NpuBackend), kCpu for a
  // "native_call_*" event, kUnknown otherwise (and for delegate events without that byte).
  ExecutionUnit ran_on = ExecutionUnit::kUnknown;
  // From the debug map (when given and matched): NPU kernel (delegate id -> kernels[].id) or CPU
  // op (a "native_call_*" event's instruction -> cpu_ops[].instruction).
  bool mapped = false;
  int32_t kernel = -1;  // kernel index in its partition (delegate events)
  static constexpr int kMaxSourceOps = 16;
  int32_t source_ops[kMaxSourceOps] = {};
  int32_t num_source_ops = 0;  // may exceed kMaxSourceOps; only the first ones are stored
  JsonString layer;            // first of kernels[].names, or cpu_ops[].name
};

class EtdumpReader {
 public:
  /// Verifies `etdp` as a size-prefixed ETDump ("ED00"). kInvalidProgram otherwise.
  static Result<EtdumpReader> Open(Span<const uint8_t> etdp);

  const ::etdump::ETDump& root() const { return *root_; }
  /// Number of ProfileEvents over all runs.
  size_t NumProfileEvents() const;

  /// Fills `rows` with the ProfileEvents in file order (at most rows.size()), joined with
  /// `debug_map_json` when it is non-null (`json_size` bytes). Returns the number of rows.
  size_t ReadRows(Span<ProfileRow> rows, const char* debug_map_json = nullptr,
                  size_t json_size = 0) const;

 private:
  explicit EtdumpReader(const ::etdump::ETDump* root) : root_(root) {}
  const ::etdump::ETDump* root_;
};

/// Looks up an NPU kernel entry of the debug map by delegate debug id, or a CPU op entry by
/// instruction. Returns false when absent or when the JSON is malformed.
bool LookupDelegateKernel(const char* json, size_t size, int32_t id, ProfileRow* row);
bool LookupCpuOp(const char* json, size_t size, int32_t instruction, ProfileRow* row);

}  // namespace boardlab::runtime::etdump
