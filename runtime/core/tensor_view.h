#pragma once

// A tensor as kernels see it: element type, shape (up to kMaxRank dims, row-major, contiguous)
// and a data pointer into the arena or the constant segment. Views do not own their data.

#include <cstdint>

namespace boardlab::runtime {

/// ExecuTorch ScalarType values (executorch-formats.md section 1.6) for the types we use.
enum class ScalarType : int8_t {
  kByte = 0,   // uint8
  kChar = 1,   // int8
  kShort = 2,  // int16
  kInt = 3,    // int32
  kLong = 4,   // int64
  kFloat = 6,  // float32
  kBool = 11,
  kUInt32 = 28,  // TFLite Micro's signal library accumulators (SIGNAL_ENERGY, filter banks)
  kUInt64 = 29,
};

inline constexpr int kMaxRank = 6;

constexpr int ElementSize(ScalarType type) {
  switch (type) {
    case ScalarType::kByte:
    case ScalarType::kChar:
    case ScalarType::kBool:
      return 1;
    case ScalarType::kShort:
      return 2;
    case ScalarType::kInt:
    case ScalarType::kFloat:
    case ScalarType::kUInt32:
      return 4;
    case ScalarType::kLong:
    case ScalarType::kUInt64:
      return 8;
  }
  return 0;
}

struct TensorView {
  ScalarType type = ScalarType::kChar;
  int32_t rank = 0;
  int32_t dims[kMaxRank] = {};
  void* data = nullptr;

  int64_t NumElements() const {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  int64_t NumBytes() const { return NumElements() * ElementSize(type); }
  int32_t Dim(int32_t i) const { return dims[i < 0 ? i + rank : i]; }
  template <typename T>
  T* As() const {
    return static_cast<T*>(data);
  }
};

}  // namespace boardlab::runtime
