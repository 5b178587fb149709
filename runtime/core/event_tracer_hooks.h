#pragma once

// RAII profiling scopes (STYLE.md rule 11): the executor reports to an EventTracer only through
// these. A scope with a null tracer does nothing but one branch; without RT_EVENT_TRACER_ENABLED
// the scopes are empty classes and compile away entirely.
//
//   {
//     internal::ProfileScope scope(tracer, "DELEGATE_CALL", /*chain=*/0, instruction, clock);
//     backend->Execute(...);
//   }  // the event is logged here, with the clock read at construction and destruction

#include <cstdint>

#include "runtime/core/event_tracer.h"

namespace boardlab::runtime {

/// The time source of profile events: returns ticks in the platform's unit. Pluggable so the
/// host simulator can report simulated cycles instead of wall time.
using Clock = Ticks (*)();

namespace internal {

#if defined(RT_EVENT_TRACER_ENABLED) && RT_EVENT_TRACER_ENABLED

class ProfileScope {
 public:
  /// `name` must outlive the scope (event names are string literals or live in the Method's
  /// persistent memory). `tracer` may be null; `clock` must not be null when `tracer` is set.
  ProfileScope(EventTracer* tracer, const char* name, int32_t chain, int32_t instruction,
               Clock clock)
      : tracer_(tracer), name_(name), chain_(chain), instruction_(instruction), clock_(clock) {
    if (tracer_ != nullptr) start_ = clock_();
  }
  ~ProfileScope() {
    if (tracer_ != nullptr) tracer_->LogProfileEvent(name_, chain_, instruction_, start_, clock_());
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  EventTracer* tracer_;
  const char* name_;
  int32_t chain_;
  int32_t instruction_;
  Clock clock_;
  Ticks start_ = 0;
};

/// Opens a run block (ETDump RunData) if there is a tracer.
inline void BeginRun(EventTracer* tracer, const char* name) {
  if (tracer != nullptr) tracer->BeginRun(name);
}

/// Logs a zero-length event `name` at the clock's present time, a mark rather than a span.
inline void LogMark(EventTracer* tracer, const char* name, int32_t chain, int32_t instruction,
                    Clock clock) {
  if (tracer == nullptr) return;
  const Ticks now = clock();
  tracer->LogProfileEvent(name, chain, instruction, now, now);
}

#else  // !RT_EVENT_TRACER_ENABLED

class ProfileScope {
 public:
  ProfileScope(EventTracer*, const char*, int32_t, int32_t, Clock) {}
};

inline void BeginRun(EventTracer*, const char*) {}

inline void LogMark(EventTracer*, const char*, int32_t, int32_t, Clock) {}

#endif

}  // namespace internal
}  // namespace boardlab::runtime
