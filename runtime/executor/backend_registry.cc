#include "runtime/executor/backend_registry.h"

#include <cstring>

namespace boardlab::runtime {

Error BackendRegistry::Register(Backend* backend) {
  RT_CHECK_OR_RETURN_ERROR(backend != nullptr && backend->id() != nullptr, kInvalidArgument,
                           "BackendRegistry: null backend or backend id");
  // Two backends under one id would make the choice depend on registration order.
  RT_CHECK_OR_RETURN_ERROR(Find(backend->id()) == nullptr, kInvalidArgument,
                           "BackendRegistry: backend '%s' is already registered", backend->id());
  RT_CHECK_OR_RETURN_ERROR(count_ < kMaxBackends, kMemoryAllocationFailed,
                           "BackendRegistry: full (%lu backends) registering '%s'",
                           static_cast<unsigned long>(kMaxBackends), backend->id());
  backends_[count_++] = backend;
  return Error::kOk;
}

Backend* BackendRegistry::Find(const char* id) const {
  if (id == nullptr) return nullptr;
  for (size_t i = 0; i < count_; ++i) {
    if (std::strcmp(backends_[i]->id(), id) == 0) return backends_[i];
  }
  return nullptr;
}

}  // namespace boardlab::runtime
