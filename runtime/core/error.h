#pragma once

// Runtime error codes (STYLE.md rule 5: ExecuTorch's shape). The runtime never throws; every
// fallible function returns Error or Result<T> and is [[nodiscard]].

#include <cstdint>

namespace boardlab::runtime {

enum class Error : uint32_t {
  // System
  kOk = 0x00,
  kInternal = 0x01,
  kInvalidState = 0x02,
  kEndOfMethod = 0x03,
  // Logical
  kNotSupported = 0x10,
  kNotImplemented = 0x11,
  kInvalidArgument = 0x12,
  kInvalidType = 0x13,
  kOperatorMissing = 0x14,
  // Resource
  kNotFound = 0x20,
  kMemoryAllocationFailed = 0x21,
  kAccessFailed = 0x22,
  kInvalidProgram = 0x23,
  kIncompatibleVersion = 0x24,
  // NPU / delegate
  kDelegateInvalidCompatibility = 0x30,
  kDelegateMemoryAllocationFailed = 0x31,
  kDelegateInvalidHandle = 0x32,
  // Verification
  kOutputMismatch = 0x40,
};

constexpr const char* ToString(Error error) {
  switch (error) {
    case Error::kOk:
      return "Ok";
    case Error::kInternal:
      return "Internal";
    case Error::kInvalidState:
      return "InvalidState";
    case Error::kEndOfMethod:
      return "EndOfMethod";
    case Error::kNotSupported:
      return "NotSupported";
    case Error::kNotImplemented:
      return "NotImplemented";
    case Error::kInvalidArgument:
      return "InvalidArgument";
    case Error::kInvalidType:
      return "InvalidType";
    case Error::kOperatorMissing:
      return "OperatorMissing";
    case Error::kNotFound:
      return "NotFound";
    case Error::kMemoryAllocationFailed:
      return "MemoryAllocationFailed";
    case Error::kAccessFailed:
      return "AccessFailed";
    case Error::kInvalidProgram:
      return "InvalidProgram";
    case Error::kIncompatibleVersion:
      return "IncompatibleVersion";
    case Error::kDelegateInvalidCompatibility:
      return "DelegateInvalidCompatibility";
    case Error::kDelegateMemoryAllocationFailed:
      return "DelegateMemoryAllocationFailed";
    case Error::kDelegateInvalidHandle:
      return "DelegateInvalidHandle";
    case Error::kOutputMismatch:
      return "OutputMismatch";
  }
  return "Unknown";
}

/// The last error message of this thread (or of the program on single-threaded MCU builds): set
/// by RT_CHECK_OR_RETURN_ERROR with the failing condition's explanation, so a CLI can print what
/// went wrong without the runtime allocating. Empty when RT_STRIP_ERROR_STRINGS is defined.
const char* LastErrorMessage();

namespace internal {
/// Formats into the fixed last-error buffer (truncating), printf-style.
void SetLastErrorMessage(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
}  // namespace internal

}  // namespace boardlab::runtime

#if defined(RT_STRIP_ERROR_STRINGS)
#define RT_INTERNAL_SET_MESSAGE(...) ((void)0)
#else
#define RT_INTERNAL_SET_MESSAGE(...) ::boardlab::runtime::internal::SetLastErrorMessage(__VA_ARGS__)
#endif

/// Returns `code` from the enclosing function (and records the formatted message) unless `cond`.
#define RT_CHECK_OR_RETURN_ERROR(cond, code, ...) \
  do {                                            \
    if (!(cond)) {                                \
      RT_INTERNAL_SET_MESSAGE(__VA_ARGS__);       \
      return ::boardlab::runtime::Error::code;    \
    }                                             \
  } while (0)

/// Propagates a non-Ok Error.
#define RT_RETURN_IF_ERROR(expr)                                 \
  do {                                                           \
    const ::boardlab::runtime::Error rt_err_ = (expr);           \
    if (rt_err_ != ::boardlab::runtime::Error::kOk) return rt_err_; \
  } while (0)
