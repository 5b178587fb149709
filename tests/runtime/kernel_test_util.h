#pragma once

// Test helpers that call a registered CPU kernel the way the executor does: Values built in the
// argument layout of docs/artifact-format.md 2.1, Prepare then Eval, with real allocators over
// test-owned buffers.

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/executor/kernel.h"

namespace boardlab::runtime::testing {

class KernelArgs {
 public:
  TensorView* Tensor(ScalarType type, const std::vector<int32_t>& shape, void* data) {
    TensorView& t = views_.emplace_back();
    t.type = type;
    t.rank = static_cast<int32_t>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) t.dims[i] = shape[i];
    t.data = data;
    Value& v = Push();
    v.tag = ValueTag::kTensor;
    v.tensor = &t;
    return &t;
  }
  void Int(int64_t x) {
    Value& v = Push();
    v.tag = ValueTag::kInt;
    v.int_value = x;
  }
  void Bool(bool x) {
    Value& v = Push();
    v.tag = ValueTag::kBool;
    v.bool_value = x;
  }
  void Double(double x) {
    Value& v = Push();
    v.tag = ValueTag::kDouble;
    v.double_value = x;
  }
  void Null() { Push().tag = ValueTag::kNone; }
  void IntList(const std::vector<int64_t>& x) {
    const std::vector<int64_t>& l = int_lists_.emplace_back(x);
    Value& v = Push();
    v.tag = ValueTag::kIntList;
    v.int_list = {l.data(), l.size()};
  }
  void DoubleList(const std::vector<double>& x) {
    const std::vector<double>& l = double_lists_.emplace_back(x);
    Value& v = Push();
    v.tag = ValueTag::kDoubleList;
    v.double_list = {l.data(), l.size()};
  }
  /// A TensorList of the tensors created by the last `count` Tensor() calls, which are removed
  /// from the argument list (they were only created to own their views).
  void TensorListOfLast(size_t count) {
    std::vector<TensorView*>& l = tensor_lists_.emplace_back();
    for (size_t i = ptrs_.size() - count; i < ptrs_.size(); ++i) l.push_back(ptrs_[i]->tensor);
    ptrs_.resize(ptrs_.size() - count);
    Value& v = Push();
    v.tag = ValueTag::kTensorList;
    v.tensor_list = {l.data(), l.size()};
  }
  Span<Value* const> span() const { return {ptrs_.data(), ptrs_.size()}; }

 private:
  Value& Push() {
    Value& v = values_.emplace_back();
    ptrs_.push_back(&v);
    return v;
  }
  std::deque<Value> values_;
  std::deque<TensorView> views_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::deque<std::vector<double>> double_lists_;
  std::deque<std::vector<TensorView*>> tensor_lists_;
  std::vector<Value*> ptrs_;
};

/// Prepare + Eval of kernel `name`; returns the first non-Ok error.
inline Error RunKernel(const char* name, const KernelArgs& args) {
  const KernelRegistration* k = FindKernel(name);
  if (k == nullptr) return Error::kOperatorMissing;
  alignas(16) static uint8_t persistent_buf[4096];
  static std::vector<uint8_t> temp_buf(1 << 20);
  MemoryAllocator persistent(persistent_buf, sizeof(persistent_buf));
  MemoryAllocator temp(temp_buf.data(), temp_buf.size());
  void* op_data = persistent.Allocate(k->op_data_size == 0 ? 1 : k->op_data_size, 16);
  if (op_data == nullptr) return Error::kMemoryAllocationFailed;
  std::memset(op_data, 0, k->op_data_size);
  KernelContext ctx{&persistent, &temp, op_data};
  Error e = k->prepare(ctx, args.span());
  if (e != Error::kOk) return e;
  e = k->eval(ctx, args.span());
  temp.Reset();
  return e;
}

}  // namespace boardlab::runtime::testing
