#pragma once

// The machinery behind the generated op cases (op_cases.h), shared by the case lists of
// op_cases.cc (batch 1: layout, data movement, comparison and selection) and math_cases.cc
// (batch 2: arithmetic and math): a writer that appends one case's tensors and operator to a
// builder, and a list that seeds each case deterministically. Internal to tests/support.

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"

namespace boardlab::testing::cases {

using compiler::OpType;

inline int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

inline int64_t Count(const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

template <typename T>
std::vector<uint8_t> RawBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Appends one case's tensors and operator to a builder and collects its inputs and outputs.
class CaseWriter {
 public:
  CaseWriter(TfliteBuilder& b, std::string prefix, uint32_t seed, bool constant_inputs)
      : b_(b), prefix_(std::move(prefix)), rng_(seed), constant_inputs_(constant_inputs) {}

  /// An int8 activation input with random values in [lo, hi] (narrow ranges give ties).
  int Int8(std::vector<int32_t> shape, QuantParams q, int lo = -128, int hi = 127) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int8_t> v(static_cast<size_t>(Count(shape)));
    for (int8_t& x : v) x = static_cast<int8_t>(d(rng_));
    return Input(std::move(shape), TflType::kInt8, std::move(q), RawBytes(v));
  }
  /// An int16 activation input (16x8) with random values in [lo, hi].
  int Int16(std::vector<int32_t> shape, QuantParams q, int lo = -32768, int hi = 32767) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int16_t> v(static_cast<size_t>(Count(shape)));
    for (int16_t& x : v) x = static_cast<int16_t>(d(rng_));
    return Input(std::move(shape), TflType::kInt16, std::move(q), RawBytes(v));
  }
  /// An int8 activation input holding exactly `values` (cases that need particular operands).
  int Int8Values(std::vector<int32_t> shape, QuantParams q, const std::vector<int8_t>& values) {
    return Input(std::move(shape), TflType::kInt8, std::move(q), RawBytes(values));
  }
  int Int16Values(std::vector<int32_t> shape, QuantParams q, const std::vector<int16_t>& values) {
    return Input(std::move(shape), TflType::kInt16, std::move(q), RawBytes(values));
  }
  int Bool(std::vector<int32_t> shape) {
    std::vector<uint8_t> v(static_cast<size_t>(Count(shape)));
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng_() & 1);
    return Input(std::move(shape), TflType::kBool, {}, v);
  }
  /// float32 input: random multiples of 1/8 in [lo, hi] (exact in binary, so conversions and
  /// comparisons are well defined on both sides).
  int Float(std::vector<int32_t> shape, float lo = -10.0f, float hi = 10.0f) {
    std::uniform_int_distribution<int> d(static_cast<int>(lo * 8), static_cast<int>(hi * 8));
    std::vector<float> v(static_cast<size_t>(Count(shape)));
    for (float& x : v) x = static_cast<float>(d(rng_)) / 8.0f;
    return Input(std::move(shape), TflType::kFloat32, {}, RawBytes(v));
  }
  /// Inputs with the given values.
  int FloatValues(std::vector<int32_t> shape, const std::vector<float>& values) {
    return Input(std::move(shape), TflType::kFloat32, {}, RawBytes(values));
  }
  /// The case's random source, for values a case draws itself.
  std::mt19937& rng() { return rng_; }
  /// An input of `type` holding exactly `values` (uint32 and uint64 ones among them).
  template <typename T>
  int Values(std::vector<int32_t> shape, TflType type, const std::vector<T>& values) {
    return Input(std::move(shape), type, {}, RawBytes(values));
  }
  int Int32(std::vector<int32_t> shape, const std::vector<int32_t>& values) {
    return Input(std::move(shape), TflType::kInt32, {}, RawBytes(values));
  }
  int Int64(std::vector<int32_t> shape, const std::vector<int64_t>& values) {
    return Input(std::move(shape), TflType::kInt64, {}, RawBytes(values));
  }
  int Int32Random(std::vector<int32_t> shape, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int32_t> v(static_cast<size_t>(Count(shape)));
    for (int32_t& x : v) x = d(rng_);
    return Int32(std::move(shape), v);
  }

  int Const32(std::vector<int32_t> shape, const std::vector<int32_t>& values) {
    return b_.AddConstInt32(Name("c"), std::move(shape), values);
  }
  /// Constant int8 weights with random values in [-127, 127] (symmetric, as TFLite quantizes).
  int ConstInt8(std::vector<int32_t> shape, QuantParams q) {
    std::uniform_int_distribution<int> d(-127, 127);
    std::vector<int8_t> v(static_cast<size_t>(Count(shape)));
    for (int8_t& x : v) x = static_cast<int8_t>(d(rng_));
    return b_.AddConstInt8(Name("w"), std::move(shape), v, std::move(q));
  }
  /// Constant int16 weights with random values in [lo, hi].
  int ConstInt16(std::vector<int32_t> shape, QuantParams q, int lo = -32767, int hi = 32767) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int16_t> v(static_cast<size_t>(Count(shape)));
    for (int16_t& x : v) x = static_cast<int16_t>(d(rng_));
    return b_.AddTensor(Name("w"), std::move(shape), TflType::kInt16, std::move(q), RawBytes(v));
  }
  /// Constant int32 values (biases) drawn from [lo, hi].
  int Const32Random(std::vector<int32_t> shape, int lo, int hi, QuantParams q = {}) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<int32_t> v(static_cast<size_t>(Count(shape)));
    for (int32_t& x : v) x = d(rng_);
    return b_.AddConstInt32(Name("c"), std::move(shape), v, std::move(q));
  }
  /// A variable (stateful) tensor without data: the op's state, kept between inferences.
  int Variable(std::vector<int32_t> shape, TflType type, QuantParams q) {
    const int t = b_.AddTensor(Name("state"), std::move(shape), type, std::move(q));
    b_.mutable_tensor(t).is_variable = true;
    return t;
  }
  int ConstInt8Values(std::vector<int32_t> shape, const std::vector<int8_t>& values,
                      QuantParams q) {
    return b_.AddConstInt8(Name("w"), std::move(shape), values, std::move(q));
  }
  int Const64(std::vector<int32_t> shape, const std::vector<int64_t>& values, QuantParams q = {}) {
    return b_.AddTensor(Name("c"), std::move(shape), TflType::kInt64, std::move(q),
                        RawBytes(values));
  }
  int Const16(std::vector<int32_t> shape, const std::vector<int16_t>& values, QuantParams q) {
    return b_.AddTensor(Name("c"), std::move(shape), TflType::kInt16, std::move(q),
                        RawBytes(values));
  }
  int Const32(std::vector<int32_t> shape, const std::vector<int32_t>& values, QuantParams q) {
    return b_.AddConstInt32(Name("c"), std::move(shape), values, std::move(q));
  }
  int Output(std::vector<int32_t> shape, TflType type, QuantParams q = {}) {
    const int t = b_.AddTensor(Name("out"), std::move(shape), type, std::move(q));
    io_.outputs.push_back(t);
    return t;
  }
  /// A tensor between two of the case's ops: neither an input nor an output of the model.
  int Intermediate(std::vector<int32_t> shape, TflType type, QuantParams q = {}) {
    return b_.AddTensor(Name("mid"), std::move(shape), type, std::move(q));
  }
  int Int8Output(std::vector<int32_t> shape, QuantParams q) {
    return Output(std::move(shape), TflType::kInt8, std::move(q));
  }
  int Int16Output(std::vector<int32_t> shape, QuantParams q) {
    return Output(std::move(shape), TflType::kInt16, std::move(q));
  }

  void Op(OpType type, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
          BuilderOptions options = {}) {
    b_.AddOperator(Code(type), std::move(inputs), std::move(outputs), std::move(options));
  }
  /// A custom op (compiler::CustomCodeOf(type)) with its flexbuffer options.
  void CustomOp(OpType type, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                std::vector<uint8_t> options) {
    b_.AddCustomOperator(std::string(compiler::CustomCodeOf(type)), std::move(inputs),
                         std::move(outputs), std::move(options));
  }
  /// A float32 constant.
  int ConstFloat(std::vector<int32_t> shape, const std::vector<float>& values) {
    return b_.AddTensor(Name("c"), std::move(shape), TflType::kFloat32, {}, RawBytes(values));
  }

  CaseIo Done() { return std::move(io_); }

 private:
  std::string Name(const char* role) { return prefix_ + role + std::to_string(next_++); }
  int Input(std::vector<int32_t> shape, TflType type, QuantParams q, std::vector<uint8_t> bytes) {
    if (constant_inputs_) {
      return b_.AddTensor(Name("in"), std::move(shape), type, std::move(q), std::move(bytes));
    }
    const int t = b_.AddTensor(Name("in"), std::move(shape), type, std::move(q));
    io_.inputs.push_back(t);
    io_.input_bytes.push_back(std::move(bytes));
    return t;
  }

  TfliteBuilder& b_;
  std::string prefix_;
  std::mt19937 rng_;
  bool constant_inputs_;
  CaseIo io_;
  int next_ = 0;
};

// Quantizations: a typical one, and the zero point at either end of int8.
inline const QuantParams kQ = PerTensor(0.05f, -3);
inline const QuantParams kQLow = PerTensor(0.1f, -128);
inline const QuantParams kQHigh = PerTensor(0.02f, 127);

using Body = std::function<void(CaseWriter&)>;

struct CaseList {
  std::vector<OpCase> cases;
  void Add(OpType type, std::string name, Body body, std::string no_oracle = "") {
    const uint32_t seed = static_cast<uint32_t>(cases.size() * 7919 + 11);
    cases.push_back({std::string(compiler::OpTypeName(type)) + " " + name, type,
                     [body, seed](TfliteBuilder& b, const std::string& prefix, bool constant) {
                       CaseWriter w(b, prefix, seed, constant);
                       body(w);
                       return w.Done();
                     },
                     std::move(no_oracle)});
  }
};

/// The int8 cases that pin TFLite Micro's arithmetic down to the float rounding of its
/// parameters and its RELU6 and SUM semantics (tflm_exactness_cases.cc), appended to MathCases().
void AddTflmExactnessCases(CaseList& l);

/// The 16x8 cases of RELU, RELU6 (alone and fused), SUM, BATCH_MATMUL, ABS, PRELU,
/// SQUARED_DIFFERENCE, GREATER and of int16 data movement (int16_arith_cases.cc), appended to
/// Int16Cases().
void AddInt16ArithmeticCases(CaseList& l);

}  // namespace boardlab::testing::cases
