#include "runtime/profiling/etdump/etdump_reader.h"

#include <cstring>

#include "flatbuffers/flatbuffers.h"

// The debug map is read with a small recursive-descent JSON scanner instead of a JSON library:
// the runtime builds without exceptions and without heap, and only a handful of keys matter.
// Every object is scanned; when it closes, the fields seen directly in it decide whether it is
// a kernels[] entry ("id" + "ops") or a cpu_ops[] entry ("instruction" + "name" + "ops").

namespace boardlab::runtime::etdump {
namespace {

struct Entry {
  bool has_id = false, has_instruction = false, has_ops = false, has_name = false;
  bool has_kernels = false;
  int64_t id = -1, kernel = -1, instruction = -1;
  int32_t ops[ProfileRow::kMaxSourceOps] = {};
  int32_t num_ops = 0;
  JsonString name;        // "name" (cpu op)
  JsonString first_name;  // first of "names" (kernel)
};

enum class Want { kKernel, kCpuOp };

class Scanner {
 public:
  Scanner(const char* p, size_t n, Want want, int64_t key)
      : p_(p), end_(p + n), want_(want), key_(key) {}

  bool Run(Entry* found) {
    found_ = found;
    SkipWs();
    return Value(nullptr, 0) && matched_;
  }

 private:
  void SkipWs() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool Eat(char c) {
    SkipWs();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool String(JsonString* out) {
    SkipWs();
    if (p_ >= end_ || *p_ != '"') return false;
    const char* start = ++p_;
    while (p_ < end_ && *p_ != '"') p_ += (*p_ == '\\' && p_ + 1 < end_) ? 2 : 1;
    if (p_ >= end_) return false;
    if (out) *out = {start, static_cast<size_t>(p_ - start)};
    ++p_;
    return true;
  }
  bool Number(int64_t* out) {
    SkipWs();
    const char* start = p_;
    bool negative = false;
    if (p_ < end_ && *p_ == '-') {
      negative = true;
      ++p_;
    }
    int64_t v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + (*p_++ - '0');
    // Fractions and exponents are skipped; the debug map only has integers.
    while (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E' || *p_ == '+' || *p_ == '-' ||
                         (*p_ >= '0' && *p_ <= '9'))) {
      ++p_;
    }
    if (p_ == start) return false;
    if (out) *out = negative ? -v : v;
    return true;
  }
  static bool KeyIs(const JsonString& k, const char* name) {
    return k.size == std::strlen(name) && std::memcmp(k.data, name, k.size) == 0;
  }
  // Parses any value; `entry`/`key` say which object field it is (for the fields we collect).
  bool Value(Entry* entry, const JsonString* key) {
    if (++depth_ > 64) return false;
    SkipWs();
    bool ok = false;
    if (p_ >= end_) {
      ok = false;
    } else if (*p_ == '{') {
      ok = Object();
    } else if (*p_ == '[') {
      ok = Array(entry, key);
    } else if (*p_ == '"') {
      JsonString s;
      ok = String(&s);
      if (ok && entry && key && KeyIs(*key, "name")) {
        entry->name = s;
        entry->has_name = true;
      }
    } else if (*p_ == 't' || *p_ == 'f' || *p_ == 'n') {
      while (p_ < end_ && *p_ >= 'a' && *p_ <= 'z') ++p_;
      ok = true;
    } else {
      int64_t v = 0;
      ok = Number(&v);
      if (ok && entry && key) {
        if (KeyIs(*key, "id")) {
          entry->id = v;
          entry->has_id = true;
        } else if (KeyIs(*key, "kernel")) {
          entry->kernel = v;
        } else if (KeyIs(*key, "instruction")) {
          entry->instruction = v;
          entry->has_instruction = true;
        }
      }
    }
    --depth_;
    return ok;
  }
  bool Array(Entry* entry, const JsonString* key) {
    ++p_;
    const bool ops = entry && key && KeyIs(*key, "ops");
    const bool names = entry && key && KeyIs(*key, "names");
    if (ops) entry->has_ops = true;
    if (entry && key && KeyIs(*key, "kernels")) entry->has_kernels = true;
    if (Eat(']')) return true;
    for (int i = 0;; ++i) {
      SkipWs();
      if (ops && p_ < end_ && *p_ != '{' && *p_ != '[') {
        int64_t v = 0;
        if (!Number(&v)) return false;
        if (entry->num_ops < ProfileRow::kMaxSourceOps) {
          entry->ops[entry->num_ops] = static_cast<int32_t>(v);
        }
        ++entry->num_ops;
      } else if (names && i == 0 && p_ < end_ && *p_ == '"') {
        if (!String(&entry->first_name)) return false;
      } else if (!Value(nullptr, nullptr)) {
        return false;
      }
      if (Eat(']')) return true;
      if (!Eat(',')) return false;
    }
  }
  bool Object() {
    ++p_;
    Entry entry;
    if (!Eat('}')) {
      for (;;) {
        JsonString key;
        if (!String(&key) || !Eat(':') || !Value(&entry, &key)) return false;
        if (Eat('}')) break;
        if (!Eat(',')) return false;
      }
    }
    if (!matched_) {
      const bool kernel =
          want_ == Want::kKernel && entry.has_id && entry.has_ops && entry.id == key_;
      const bool cpu = want_ == Want::kCpuOp && entry.has_instruction && entry.has_name &&
                       entry.has_ops && !entry.has_kernels && entry.instruction == key_;
      if (kernel || cpu) {
        *found_ = entry;
        matched_ = true;
      }
    }
    return true;
  }

  const char* p_;
  const char* end_;
  Want want_;
  int64_t key_;
  Entry* found_ = nullptr;
  bool matched_ = false;
  int depth_ = 0;
};

void CopyEntry(const Entry& e, bool kernel, ProfileRow* row) {
  row->mapped = true;
  row->kernel = kernel ? static_cast<int32_t>(e.kernel) : -1;
  row->num_source_ops = e.num_ops;
  const int32_t n = e.num_ops < ProfileRow::kMaxSourceOps ? e.num_ops : ProfileRow::kMaxSourceOps;
  for (int32_t i = 0; i < n; ++i) row->source_ops[i] = e.ops[i];
  row->layer = kernel ? e.first_name : e.name;
}

// Where a delegate event's kernel ran: metadata byte 1 as NpuBackend writes it.
ExecutionUnit DelegateUnit(const ::etdump::ProfileEvent& pe) {
  const auto* metadata = pe.delegate_debug_metadata();
  if (metadata == nullptr || metadata->size() < 2) return ExecutionUnit::kUnknown;
  const uint8_t unit = metadata->Get(1);
  return unit <= static_cast<uint8_t>(ExecutionUnit::kNpuEmulatedCortexM33)
             ? static_cast<ExecutionUnit>(unit)
             : ExecutionUnit::kUnknown;
}

bool IsNativeCall(const char* name) {
  return name != nullptr && std::strncmp(name, "native_call_", 12) == 0;
}

}  // namespace

bool LookupDelegateKernel(const char* json, size_t size, int32_t id, ProfileRow* row) {
  Entry e;
  if (json == nullptr || !Scanner(json, size, Want::kKernel, id).Run(&e)) return false;
  CopyEntry(e, true, row);
  return true;
}

bool LookupCpuOp(const char* json, size_t size, int32_t instruction, ProfileRow* row) {
  Entry e;
  if (json == nullptr || !Scanner(json, size, Want::kCpuOp, instruction).Run(&e)) return false;
  CopyEntry(e, false, row);
  return true;
}

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

size_t EtdumpReader::ReadRows(Span<ProfileRow> rows, const char* json, size_t json_size) const {
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
      if (row.delegate_debug_id != -1) {
        row.ran_on = DelegateUnit(*pe);
      } else if (IsNativeCall(row.name)) {
        row.ran_on = ExecutionUnit::kCpu;
      }
      if (json == nullptr) continue;
      if (row.delegate_debug_id != -1) {
        LookupDelegateKernel(json, json_size, row.delegate_debug_id, &row);
      } else if (IsNativeCall(row.name)) {
        LookupCpuOp(json, json_size, row.instruction, &row);
      }
    }
  }
  return n;
}

}  // namespace boardlab::runtime::etdump
