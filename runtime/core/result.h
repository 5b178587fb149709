#pragma once

// Result<T>: a value or an Error, without exceptions (ExecuTorch's runtime/core/result.h shape).
//
//   Result<Program> program = Program::Load(data);
//   if (!program.ok()) return program.error();
//   RT_ASSIGN_OR_RETURN(Program p, Program::Load(data));

#include <new>
#include <type_traits>
#include <utility>

#include "runtime/core/error.h"

namespace boardlab::runtime {

template <typename T>
class [[nodiscard]] Result {
 public:
  /* implicit */ Result(const T& value) : ok_(true) { new (&storage_) T(value); }
  /* implicit */ Result(T&& value) : ok_(true) { new (&storage_) T(std::move(value)); }
  /* implicit */ Result(Error error) : ok_(false), error_(error == Error::kOk ? Error::kInternal : error) {}

  Result(Result&& other) noexcept : ok_(other.ok_), error_(other.error_) {
    if (ok_) new (&storage_) T(std::move(*other.ptr()));
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;
  ~Result() {
    if (ok_) ptr()->~T();
  }

  bool ok() const { return ok_; }
  Error error() const { return ok_ ? Error::kOk : error_; }
  T& get() { return *ptr(); }
  const T& get() const { return *ptr(); }
  T& operator*() { return *ptr(); }
  const T& operator*() const { return *ptr(); }
  T* operator->() { return ptr(); }
  const T* operator->() const { return ptr(); }

 private:
  T* ptr() { return std::launder(reinterpret_cast<T*>(&storage_)); }
  const T* ptr() const { return std::launder(reinterpret_cast<const T*>(&storage_)); }

  bool ok_;
  Error error_ = Error::kOk;
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace boardlab::runtime

#define RT_INTERNAL_CONCAT_(a, b) a##b
#define RT_INTERNAL_CONCAT(a, b) RT_INTERNAL_CONCAT_(a, b)
#define RT_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                              \
  if (!result.ok()) return result.error();           \
  lhs = std::move(result.get())

/// `RT_ASSIGN_OR_RETURN(T x, Fn());`: declares x from a Result, or returns its Error.
#define RT_ASSIGN_OR_RETURN(lhs, expr) \
  RT_ASSIGN_OR_RETURN_IMPL(RT_INTERNAL_CONCAT(rt_result_, __LINE__), lhs, expr)
