#pragma once

// The delegate backends a Method may use, looked up by BackendDelegate.id at load (ExecuTorch's
// register_backend / get_backend_class, but per registry instead of a process-wide table so that
// tests and several runtimes in one host process do not share state). A fixed-capacity table:
// registering never allocates (STYLE.md rule 10).
//
//   NpuBackend npu;                          // must outlive the registry and every Method
//   BackendRegistry registry;
//   if (registry.Register(&npu) != Error::kOk) ...;
//   Backend* b = registry.Find("BoardlabNeutronBackend");

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/executor/backend.h"

namespace boardlab::runtime {

class BackendRegistry {
 public:
  static constexpr size_t kMaxBackends = 8;

  /// Adds `backend` (not owned; must outlive the registry and every Method that uses it).
  /// Errors: kInvalidArgument for a null backend or id, or an id already registered;
  /// kMemoryAllocationFailed when kMaxBackends are registered.
  [[nodiscard]] Error Register(Backend* backend);

  /// The backend registered under `id`, or nullptr.
  Backend* Find(const char* id) const;

  size_t size() const { return count_; }

 private:
  Backend* backends_[kMaxBackends] = {};
  size_t count_ = 0;
};

}  // namespace boardlab::runtime
