#pragma once

// A program value as kernels receive it (the runtime's view of an ExecuTorch EValue). The
// executor builds one Value per ExecutionPlan value at load; list payloads point into the loaded
// program (which must outlive the Method), tensor payloads into the Method's TensorViews.

#include <cstddef>
#include <cstdint>

#include "runtime/core/tensor_view.h"

namespace boardlab::runtime {

enum class ValueTag : uint8_t {
  kNone,
  kInt,
  kBool,
  kDouble,
  kTensor,
  kIntList,
  kDoubleList,
  kBoolList,
  kTensorList,
  kString,
};

template <typename T>
struct ListView {
  const T* data = nullptr;  // may be unaligned for 64-bit items read from a flatbuffer: use At()
  size_t size = 0;
  T At(size_t i) const {
    T v;
    __builtin_memcpy(&v, reinterpret_cast<const unsigned char*>(data) + i * sizeof(T), sizeof(T));
    return v;
  }
};

struct Value {
  ValueTag tag = ValueTag::kNone;
  union {
    int64_t int_value;
    bool bool_value;
    double double_value;
    TensorView* tensor;
    ListView<int64_t> int_list;
    ListView<double> double_list;
    ListView<uint8_t> bool_list;  // flatbuffers stores bools as bytes
    ListView<TensorView*> tensor_list;
    const char* string_value;
  };
  Value() : int_value(0) {}

  bool is_tensor() const { return tag == ValueTag::kTensor; }
  bool is_none() const { return tag == ValueTag::kNone; }
};

}  // namespace boardlab::runtime
