#include "runtime/core/error.h"

#include <cstdarg>
#include <cstdio>

namespace boardlab::runtime {
namespace {

// A fixed buffer: the runtime must not allocate to report an error. thread_local on hosts where
// several runtimes run in threads (the agent's simulator); a plain static on bare metal.
#if defined(BOARDLAB_RUNTIME_BAREMETAL)
char last_error[256];
#else
thread_local char last_error[256];
#endif

}  // namespace

const char* LastErrorMessage() { return last_error; }

namespace internal {

void SetLastErrorMessage(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(last_error, sizeof(last_error), format, args);
  va_end(args);
}

}  // namespace internal
}  // namespace boardlab::runtime
