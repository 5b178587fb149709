#include "runtime/link/messages.h"

#include <initializer_list>

#include "runtime/link/wire.h"

namespace boardlab::link {
namespace {

size_t Finish(const WireWriter& w) { return w.ok() ? w.size() : 0; }
bool Done(const WireReader& r) { return r.ok() && r.AtEnd(); }

void PutDigest(WireWriter& w, const Digest& d) { w.Bytes(d.bytes, kDigestBytes); }
void GetDigest(WireReader& r, Digest& d) { r.Bytes(d.bytes, kDigestBytes); }

// Enumerations are checked on decoding, so that a value from a newer peer is an error rather
// than a silently wrong switch.
bool ValidBlobKind(uint8_t v) { return v >= 1 && v <= 5; }
// BLOB_STATUS also answers MODEL_SLOT.
bool ValidStatusKind(uint8_t v) {
  return ValidBlobKind(v) || v == static_cast<uint8_t>(BlobKind::kModelSlot);
}
bool ValidResetCause(uint8_t v) { return v <= 4; }

}  // namespace

const char* ResetCauseName(ResetCause cause) {
  switch (cause) {
    case ResetCause::kUnknown:
      return "unknown";
    case ResetCause::kPowerOn:
      return "power-on or external reset";
    case ResetCause::kSoftware:
      return "software reset";
    case ResetCause::kWatchdog:
      return "watchdog reset";
    case ResetCause::kFault:
      return "fault reset";
  }
  return "unknown";
}

const char* BlobKindName(BlobKind kind) {
  switch (kind) {
    case BlobKind::kArtifact:
      return "artifact";
    case BlobKind::kInput:
      return "input";
    case BlobKind::kExpected:
      return "expected output";
    case BlobKind::kOutput:
      return "output";
    case BlobKind::kEtdump:
      return "ETDump";
    case BlobKind::kModelSlot:
      return "model slot";
  }
  return "blob";
}

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kUnverified:
      return "UNVERIFIED";
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kError:
      return "ERROR";
    case Verdict::kNoOutput:
      return "NO_OUTPUT";
    case Verdict::kModelNotHeld:
      return "MODEL_NOT_HELD";
  }
  return "ERROR";
}

size_t Encode(const Connect& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U16(m.protocol_version);
  w.U32(m.nonce);
  w.U16(m.max_payload);
  w.U8(m.window);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, Connect* m) {
  WireReader r(payload, size);
  m->protocol_version = r.U16();
  m->nonce = r.U32();
  m->max_payload = r.U16();
  m->window = r.U8();
  return Done(r);
}

size_t Encode(const Hello& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U16(m.protocol_version);
  w.U32(m.session);
  w.U8(static_cast<uint8_t>(m.reset_cause));
  w.U8(m.flags);
  w.U16(m.max_payload);
  w.U8(m.window);
  w.String8(m.board);
  w.String8(m.firmware_version);
  w.String8(m.build_id);
  w.String8(m.clock);
  w.U64(m.ticks_per_second);
  w.U64(m.core_hz);
  w.I8(m.icount_shift);
  w.String8(m.npu);
  const uint8_t regions = m.num_regions < kMaxRegions ? m.num_regions : kMaxRegions;
  w.U8(regions);
  for (uint8_t i = 0; i < regions; ++i) {
    w.String8(m.regions[i].name);
    w.U32(m.regions[i].base);
    w.U32(m.regions[i].size);
  }
  w.U32(m.cache_capacity);
  const uint8_t cached = m.num_cached < kMaxCachedArtifacts ? m.num_cached : kMaxCachedArtifacts;
  w.U8(cached);
  for (uint8_t i = 0; i < cached; ++i) {
    PutDigest(w, m.cached[i].digest);
    w.U32(m.cached[i].size);
  }
  if (m.protocol_version >= 3) {
    w.U32(m.model_slot_base);
    w.U32(m.model_slot_size);
  }
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, Hello* m) {
  WireReader r(payload, size);
  m->protocol_version = r.U16();
  m->session = r.U32();
  const uint8_t cause = r.U8();
  m->reset_cause = static_cast<ResetCause>(cause);
  m->flags = r.U8();
  m->max_payload = r.U16();
  m->window = r.U8();
  r.String8(m->board, sizeof(m->board));
  r.String8(m->firmware_version, sizeof(m->firmware_version));
  r.String8(m->build_id, sizeof(m->build_id));
  r.String8(m->clock, sizeof(m->clock));
  m->ticks_per_second = r.U64();
  m->core_hz = r.U64();
  m->icount_shift = r.I8();
  r.String8(m->npu, sizeof(m->npu));
  m->num_regions = r.U8();
  if (m->num_regions > kMaxRegions) return false;
  for (uint8_t i = 0; i < m->num_regions; ++i) {
    r.String8(m->regions[i].name, sizeof(m->regions[i].name));
    m->regions[i].base = r.U32();
    m->regions[i].size = r.U32();
  }
  m->cache_capacity = r.U32();
  m->num_cached = r.U8();
  if (m->num_cached > kMaxCachedArtifacts) return false;
  for (uint8_t i = 0; i < m->num_cached; ++i) {
    GetDigest(r, m->cached[i].digest);
    m->cached[i].size = r.U32();
  }
  m->model_slot_base = 0;
  m->model_slot_size = 0;
  if (m->protocol_version >= 3) {
    m->model_slot_base = r.U32();
    m->model_slot_size = r.U32();
  }
  return Done(r) && ValidResetCause(cause);
}

size_t Encode(const BlobBegin& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(static_cast<uint8_t>(m.kind));
  w.U8(m.index);
  w.U32(m.size);
  PutDigest(w, m.digest);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, BlobBegin* m) {
  WireReader r(payload, size);
  const uint8_t kind = r.U8();
  m->kind = static_cast<BlobKind>(kind);
  m->index = r.U8();
  m->size = r.U32();
  GetDigest(r, m->digest);
  return Done(r) && ValidBlobKind(kind);
}

size_t Encode(const BlobChunk& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U32(m.offset);
  w.Bytes(m.data, m.size);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, BlobChunk* m) {
  WireReader r(payload, size);
  m->offset = r.U32();
  m->data = r.Rest(&m->size);
  return r.ok();
}

size_t Encode(const BlobEnd& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(static_cast<uint8_t>(m.kind));
  w.U8(m.index);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, BlobEnd* m) {
  WireReader r(payload, size);
  const uint8_t kind = r.U8();
  m->kind = static_cast<BlobKind>(kind);
  m->index = r.U8();
  return Done(r) && ValidBlobKind(kind);
}

size_t Encode(const BlobStatus& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(static_cast<uint8_t>(m.kind));
  w.U8(m.index);
  w.U8(static_cast<uint8_t>(m.status));
  w.String16(m.message, sizeof(m.message) - 1);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, BlobStatus* m) {
  WireReader r(payload, size);
  const uint8_t kind = r.U8();
  m->kind = static_cast<BlobKind>(kind);
  m->index = r.U8();
  const uint8_t status = r.U8();
  m->status = static_cast<BlobStatusCode>(status);
  r.String16(m->message, sizeof(m->message));
  return Done(r) && ValidStatusKind(kind) && status <= 3;
}

size_t Encode(const RunCommand& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  PutDigest(w, m.artifact);
  w.U32(m.iterations);
  w.F64(m.atol);
  w.U8(m.flags);
  w.U8(m.num_inputs);
  w.U8(m.num_expected);
  w.U8(static_cast<uint8_t>(m.test_fault));
  w.U32(m.job);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, RunCommand* m) {
  WireReader r(payload, size);
  GetDigest(r, m->artifact);
  m->iterations = r.U32();
  m->atol = r.F64();
  m->flags = r.U8();
  m->num_inputs = r.U8();
  m->num_expected = r.U8();
  const uint8_t fault = r.U8();
  m->test_fault = static_cast<TestFault>(fault);
  m->job = r.U32();
  return Done(r) && fault <= 4 && m->num_inputs <= kMaxTensors && m->num_expected <= kMaxTensors &&
         (m->flags & ~RunCommand::kKnownFlags) == 0 &&
         ((m->flags & RunCommand::kContinue) == 0 || m->job != 0);
}

size_t Encode(const ModelSlot& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U32(m.size);
  PutDigest(w, m.digest);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, ModelSlot* m) {
  WireReader r(payload, size);
  m->size = r.U32();
  GetDigest(r, m->digest);
  return Done(r);
}

size_t Encode(const Log& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(m.level);
  w.String16(m.text, sizeof(m.text) - 1);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, Log* m) {
  WireReader r(payload, size);
  m->level = r.U8();
  r.String16(m->text, sizeof(m->text));
  return Done(r);
}

size_t Encode(const OutputCheckMessage& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(m.index);
  const OutputCheck& o = m.check;
  w.U32(o.bytes);
  w.U32(o.fnv1a32);
  w.U8(o.checked);
  w.U8(o.pass);
  w.F64(o.max_abs_diff);
  w.U32(o.mismatches);
  w.U32(o.elements);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, OutputCheckMessage* m) {
  WireReader r(payload, size);
  m->index = r.U8();
  OutputCheck& o = m->check;
  o.bytes = r.U32();
  o.fnv1a32 = r.U32();
  o.checked = r.U8();
  o.pass = r.U8();
  o.max_abs_diff = r.F64();
  o.mismatches = r.U32();
  o.elements = r.U32();
  return Done(r) && m->index < kMaxTensors && o.checked <= 1 && o.pass <= 1;
}

size_t Encode(const Result& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(m.exit_code);
  w.U8(static_cast<uint8_t>(m.verdict));
  w.U32(m.iterations);
  w.U64(m.mean_ticks);
  const uint16_t times = m.num_times < kMaxIterationTimes ? m.num_times : kMaxIterationTimes;
  w.U16(times);
  for (uint16_t i = 0; i < times; ++i) w.U64(m.ticks[i]);
  const uint8_t outputs = m.num_outputs < kMaxTensors ? m.num_outputs : kMaxTensors;
  w.U8(outputs);  // their checks came in CHECK messages
  w.String16(m.message, sizeof(m.message) - 1);
  w.U32(m.inferences_with_output);
  w.U64(m.output_mean_ticks);
  w.U64(m.early_mean_ticks);
  w.U64(m.early_times_mask);
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, Result* m) {
  WireReader r(payload, size);
  m->exit_code = r.U8();
  const uint8_t verdict = r.U8();
  m->verdict = static_cast<Verdict>(verdict);
  m->iterations = r.U32();
  m->mean_ticks = r.U64();
  m->num_times = r.U16();
  if (m->num_times > kMaxIterationTimes) return false;
  for (uint16_t i = 0; i < m->num_times; ++i) m->ticks[i] = r.U64();
  m->num_outputs = r.U8();
  if (m->num_outputs > kMaxTensors) return false;
  r.String16(m->message, sizeof(m->message));
  m->inferences_with_output = r.U32();
  m->output_mean_ticks = r.U64();
  m->early_mean_ticks = r.U64();
  m->early_times_mask = r.U64();
  return Done(r) && verdict <= static_cast<uint8_t>(Verdict::kModelNotHeld);
}

size_t Encode(const Fault& m, uint8_t* out, size_t size) {
  WireWriter w(out, size);
  w.U8(static_cast<uint8_t>(m.cause));
  for (uint32_t v : {m.r0, m.r1, m.r2, m.r3, m.r12, m.lr, m.pc, m.xpsr, m.sp, m.exc_return, m.cfsr,
                     m.hfsr, m.mmfar, m.bfar}) {
    w.U32(v);
  }
  return Finish(w);
}

bool Decode(const uint8_t* payload, size_t size, Fault* m) {
  WireReader r(payload, size);
  const uint8_t cause = r.U8();
  m->cause = static_cast<ResetCause>(cause);
  for (uint32_t* v : {&m->r0, &m->r1, &m->r2, &m->r3, &m->r12, &m->lr, &m->pc, &m->xpsr, &m->sp,
                      &m->exc_return, &m->cfsr, &m->hfsr, &m->mmfar, &m->bfar}) {
    *v = r.U32();
  }
  return Done(r) && ValidResetCause(cause);
}

}  // namespace boardlab::link
