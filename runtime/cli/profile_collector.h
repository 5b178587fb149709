#pragma once

// boardlab-run's EventTracer: keeps the profile events of every Execute run (host code, so it
// may allocate) and forwards each call to an optional second tracer, the ETDump writer. This is
// the seam between the executor's events and the per-op profile table.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/event_tracer.h"

namespace boardlab::run {

struct CollectedEvent {
  std::string name;          // empty for delegate events
  int32_t delegate_id = -1;  // NPU kernel debug id for delegate events
  int32_t chain = -1;
  int32_t instruction = -1;
  runtime::Ticks start = 0;
  runtime::Ticks end = 0;
  runtime::Ticks duration() const { return end >= start ? end - start : 0; }
};

class ProfileCollector : public runtime::EventTracer {
 public:
  /// `next` (nullable, not owned) also receives every call.
  explicit ProfileCollector(runtime::EventTracer* next = nullptr) : next_(next) {}

  void BeginRun(const char* name) override {
    if (std::string(name) == "Execute") runs_.emplace_back();
    if (next_ != nullptr) next_->BeginRun(name);
  }
  void LogProfileEvent(const char* name, int32_t chain, int32_t instruction, runtime::Ticks start,
                       runtime::Ticks end) override {
    if (!runs_.empty()) runs_.back().push_back({name, -1, chain, instruction, start, end});
    if (next_ != nullptr) next_->LogProfileEvent(name, chain, instruction, start, end);
  }
  void LogDelegateEvent(int32_t id, int32_t chain, int32_t instruction, runtime::Ticks start,
                        runtime::Ticks end, const uint8_t* metadata, uint32_t size) override {
    if (!runs_.empty()) runs_.back().push_back({"", id, chain, instruction, start, end});
    if (next_ != nullptr) {
      next_->LogDelegateEvent(id, chain, instruction, start, end, metadata, size);
    }
  }

  // Weight prefetches have no row in the per-op profile (timelines read them from the ETDump).
  void LogNamedDelegateEvent(const char* name, int32_t chain, int32_t instruction,
                             runtime::Ticks start, runtime::Ticks end, const uint8_t* metadata,
                             uint32_t size) override {
    if (next_ != nullptr) {
      next_->LogNamedDelegateEvent(name, chain, instruction, start, end, metadata, size);
    }
  }

  /// Events of each Execute, in the order they ended.
  const std::vector<std::vector<CollectedEvent>>& runs() const { return runs_; }

 private:
  runtime::EventTracer* next_;
  std::vector<std::vector<CollectedEvent>> runs_;
};

}  // namespace boardlab::run
