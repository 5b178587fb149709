#include "runtime/npu/npu_payload.h"

#include <cstring>

#include "flatbuffers/flatbuffers.h"
#include "runtime/core/tensor_view.h"

// The verifier is the only line of defence between a corrupt or hostile .pte and the engine's
// unchecked loops, so it proves every address the engine will form stays inside its buffer:
// tensor extents (shape products bounded to 2^31 bytes), weight-section ranges, slot contents,
// and per kernel the shape relations the loops index by. Semantic slips that stay in bounds
// (a wrong multiplier) are the compiler's responsibility and caught by the bit-exact tests.

namespace boardlab::runtime::npu {
namespace {

constexpr uint64_t kMaxDotLength = 65535;

namespace fb = ::boardlab::npu;

constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

uint32_t ReadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

#define CHECK_PROGRAM(cond, ...) RT_CHECK_OR_RETURN_ERROR(cond, kInvalidProgram, __VA_ARGS__)

// Shape of a verified tensor.
struct Shape {
  int32_t rank = 0;
  int32_t dims[kMaxRank] = {};
  int64_t elements = 1;
  fb::ElementType type = fb::ElementType::Int8;
  fb::TensorKind kind = fb::TensorKind::Input;
  const fb::Tensor* tensor = nullptr;
  int32_t Dim(int i) const { return dims[i < 0 ? i + rank : i]; }
};

bool RangeInside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

class Verifier {
 public:
  Verifier(const fb::NpuProgram& p, Span<const uint8_t> weights) : p_(p), weights_(weights) {}

  Error Run(uint32_t* num_inputs, uint32_t* num_outputs);

 private:
  Error VerifyTensors(uint32_t num_args);
  Error VerifyKernel(uint32_t index);
  Error VerifyKernelShapes(const fb::NpuKernel& k, uint32_t index);
  Error VerifyCommands();
  Shape TensorShape(int32_t index) const;
  Error Operand(const fb::NpuKernel& k, uint32_t i, uint32_t kernel, Shape* shape,
                bool optional = false) const;
  // Reads element i of a verified constant index tensor (int32 or int64).
  int64_t ConstIndex(const Shape& s, int64_t i) const;

  const fb::NpuProgram& p_;
  Span<const uint8_t> weights_;
};

int64_t Verifier::ConstIndex(const Shape& s, int64_t i) const {
  const uint8_t* data = weights_.data() + s.tensor->weights_offset();
  if (s.type == fb::ElementType::Int64) {
    int64_t v;
    std::memcpy(&v, data + i * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, data + i * 4, 4);
  return v;
}

Shape Verifier::TensorShape(int32_t index) const {
  Shape s;
  const fb::Tensor* t = p_.tensors()->Get(static_cast<uint32_t>(index));
  s.tensor = t;
  s.type = t->type();
  s.kind = t->kind();
  s.rank = static_cast<int32_t>(t->shape()->size());
  for (int32_t i = 0; i < s.rank; ++i) {
    s.dims[i] = t->shape()->Get(static_cast<uint32_t>(i));
    s.elements *= s.dims[i];
  }
  return s;
}

Error Verifier::Operand(const fb::NpuKernel& k, uint32_t i, uint32_t kernel, Shape* shape,
                        bool optional) const {
  if (i >= k.inputs()->size() || k.inputs()->Get(i) < 0) {
    CHECK_PROGRAM(optional, "NPU payload: kernel %u lacks input %u", static_cast<unsigned>(kernel),
                  static_cast<unsigned>(i));
    shape->tensor = nullptr;
    return Error::kOk;
  }
  *shape = TensorShape(k.inputs()->Get(i));
  return Error::kOk;
}

Error Verifier::VerifyTensors(uint32_t num_args) {
  const auto* tensors = p_.tensors();
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* t = tensors->Get(i);
    CHECK_PROGRAM(t != nullptr && t->shape() != nullptr, "NPU payload: tensor %u has no shape",
                  static_cast<unsigned>(i));
    CHECK_PROGRAM(t->shape()->size() <= static_cast<uint32_t>(kMaxRank),
                  "NPU payload: tensor %u has rank %u > %d", static_cast<unsigned>(i),
                  static_cast<unsigned>(t->shape()->size()), kMaxRank);
    CHECK_PROGRAM(t->type() <= fb::ElementType::MAX, "NPU payload: tensor %u has type %d",
                  static_cast<unsigned>(i), static_cast<int>(t->type()));
    int64_t bytes = ElementBytes(t->type());
    for (int32_t d : *t->shape()) {
      CHECK_PROGRAM(d >= 0, "NPU payload: tensor %u has a negative dimension",
                    static_cast<unsigned>(i));
      bytes *= d;
      CHECK_PROGRAM(bytes <= kMaxTensorBytes, "NPU payload: tensor %u is too large",
                    static_cast<unsigned>(i));
    }
    switch (t->kind()) {
      case fb::TensorKind::Input:
      case fb::TensorKind::Output:
        CHECK_PROGRAM(t->arg_index() >= 0 && static_cast<uint32_t>(t->arg_index()) < num_args,
                      "NPU payload: tensor %u has argument index %d (of %u)",
                      static_cast<unsigned>(i), static_cast<int>(t->arg_index()),
                      static_cast<unsigned>(num_args));
        break;
      case fb::TensorKind::Intermediate:
        // The arena size is only known at Init (BindingsFit); bound the offset here.
        CHECK_PROGRAM(t->arena_offset() >= 0 && t->arena_offset() <= kMaxTensorBytes,
                      "NPU payload: intermediate %u has arena offset %lld",
                      static_cast<unsigned>(i), static_cast<long long>(t->arena_offset()));
        break;
      case fb::TensorKind::Constant:
        CHECK_PROGRAM(t->weights_offset() >= 0 && t->weights_size() == bytes &&
                          RangeInside(static_cast<uint64_t>(t->weights_offset()),
                                      static_cast<uint64_t>(bytes), weights_.size()),
                      "NPU payload: constant %u [%lld, +%lld) is outside the weight section "
                      "(%lu bytes) or does not match its shape",
                      static_cast<unsigned>(i), static_cast<long long>(t->weights_offset()),
                      static_cast<long long>(t->weights_size()),
                      static_cast<unsigned long>(weights_.size()));
        break;
      default:
        CHECK_PROGRAM(false, "NPU payload: tensor %u has kind %d", static_cast<unsigned>(i),
                      static_cast<int>(t->kind()));
    }
  }
  return Error::kOk;
}

bool IsInt8(const Shape& s) { return s.type == fb::ElementType::Int8; }

// Each input dim equals the output's or is 1 (right-aligned numpy broadcasting).
bool Broadcastable(const Shape& in, const Shape& out) {
  if (in.rank > out.rank) return false;
  for (int32_t i = 0; i < in.rank; ++i) {
    const int32_t o = out.dims[out.rank - in.rank + i];
    if (in.dims[i] != o && in.dims[i] != 1) return false;
  }
  return true;
}

bool IsIndexType(const Shape& s) {
  return s.kind == fb::TensorKind::Constant &&
         (s.type == fb::ElementType::Int32 || s.type == fb::ElementType::Int64);
}

Error Verifier::VerifyKernelShapes(const fb::NpuKernel& k, uint32_t n) {
  Shape in, in2, out = TensorShape(k.outputs()->Get(0));
  RT_RETURN_IF_ERROR(Operand(k, 0, n, &in));
  const uint32_t multipliers = k.output_multipliers() ? k.output_multipliers()->size() : 0;
  const uint32_t int_params = k.int_params() ? k.int_params()->size() : 0;
  const fb::Geometry* g = k.geometry();
  auto geometry_ok = [g]() {
    return g != nullptr && g->kernel_h() >= 1 && g->kernel_w() >= 1 && g->stride_h() >= 1 &&
           g->stride_w() >= 1 && g->dilation_h() >= 1 && g->dilation_w() >= 1 &&
           g->pad_top() >= 0 && g->pad_left() >= 0 && g->depth_multiplier() >= 1 &&
           g->kernel_h() <= 4096 && g->kernel_w() <= 4096 && g->stride_h() <= 4096 &&
           g->stride_w() <= 4096 && g->dilation_h() <= 4096 && g->dilation_w() <= 4096 &&
           g->pad_top() <= 4096 && g->pad_left() <= 4096;
  };
  auto weights_hold = [&](uint64_t bytes, int32_t channels) {
    const uint64_t bo = static_cast<uint64_t>(p_.weight_block_out());
    return k.weights() != nullptr && k.bias() != nullptr && k.weights()->size() >= bytes &&
           k.bias()->size() >= 4 * ((static_cast<uint64_t>(channels) + bo - 1) / bo * bo) &&
           multipliers == static_cast<uint32_t>(channels);
  };
  const uint64_t bo = static_cast<uint64_t>(p_.weight_block_out());
  const uint64_t bi = static_cast<uint64_t>(p_.weight_block_in());
  auto blocks = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
  switch (k.kind()) {
    case fb::KernelKind::Conv2D:
    case fb::KernelKind::DepthwiseConv2D: {
      const bool dw = k.kind() == fb::KernelKind::DepthwiseConv2D;
      CHECK_PROGRAM(in.rank == 4 && out.rank == 4 && in.dims[0] == out.dims[0] && IsInt8(in) &&
                        IsInt8(out) && geometry_ok(),
                    "NPU payload: kernel %u: convolution needs int8 NHWC operands and geometry",
                    static_cast<unsigned>(n));
      const uint64_t taps = static_cast<uint64_t>(g->kernel_h()) * g->kernel_w();
      const int32_t out_c = out.dims[3];
      // The NPU's own limit (neutron-rt700.md 4.1); it also keeps the int32 accumulator of the
      // engine from overflowing: 65535 taps x 128 x 255 < 2^31.
      const uint64_t dot_length = dw ? taps : taps * static_cast<uint64_t>(in.dims[3]);
      CHECK_PROGRAM(dot_length <= kMaxDotLength,
                    "NPU payload: kernel %u: dot products of %lu elements exceed %lu",
                    static_cast<unsigned>(n), static_cast<unsigned long>(dot_length),
                    static_cast<unsigned long>(kMaxDotLength));
      if (dw) {
        CHECK_PROGRAM(out_c == in.dims[3] * g->depth_multiplier(),
                      "NPU payload: kernel %u: depthwise channels %d != %d x %d",
                      static_cast<unsigned>(n), static_cast<int>(out_c),
                      static_cast<int>(in.dims[3]), static_cast<int>(g->depth_multiplier()));
      }
      const uint64_t bytes = dw ? taps * blocks(static_cast<uint64_t>(out_c), bo) * bo
                                : blocks(static_cast<uint64_t>(out_c), bo) * taps *
                                      blocks(static_cast<uint64_t>(in.dims[3]), bi) * bo * bi;
      CHECK_PROGRAM(weights_hold(bytes, out_c),
                    "NPU payload: kernel %u: weights/bias/multipliers too short for %d channels",
                    static_cast<unsigned>(n), static_cast<int>(out_c));
      return Error::kOk;
    }
    case fb::KernelKind::FullyConnected: {
      CHECK_PROGRAM(IsInt8(in) && IsInt8(out) && out.rank >= 1 && out.Dim(-1) > 0 &&
                        out.elements > 0 && in.elements % (out.elements / out.Dim(-1)) == 0,
                    "NPU payload: kernel %u: fully connected shapes do not divide",
                    static_cast<unsigned>(n));
      const uint64_t depth = static_cast<uint64_t>(in.elements / (out.elements / out.Dim(-1)));
      const uint64_t bytes =
          blocks(static_cast<uint64_t>(out.Dim(-1)), bo) * blocks(depth, bi) * bo * bi;
      CHECK_PROGRAM(weights_hold(bytes, out.Dim(-1)),
                    "NPU payload: kernel %u: weights/bias/multipliers too short",
                    static_cast<unsigned>(n));
      return Error::kOk;
    }
    case fb::KernelKind::AveragePool2D:
    case fb::KernelKind::MaxPool2D:
      CHECK_PROGRAM(in.rank == 4 && out.rank == 4 && in.dims[0] == out.dims[0] &&
                        in.dims[3] == out.dims[3] && IsInt8(in) && IsInt8(out) && geometry_ok(),
                    "NPU payload: kernel %u: pool needs int8 NHWC operands and geometry",
                    static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::Add:
    case fb::KernelKind::Sub:
    case fb::KernelKind::Mul:
    case fb::KernelKind::Maximum:
    case fb::KernelKind::Minimum: {
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &in2));
      CHECK_PROGRAM(IsInt8(in) && IsInt8(in2) && IsInt8(out) && Broadcastable(in, out) &&
                        Broadcastable(in2, out),
                    "NPU payload: kernel %u: operands do not broadcast to the output",
                    static_cast<unsigned>(n));
      if (k.kind() == fb::KernelKind::Add || k.kind() == fb::KernelKind::Sub) {
        const fb::AddSubParams* a = k.add_sub();
        CHECK_PROGRAM(a != nullptr && a->left_shift() >= 0 && a->left_shift() <= 22 &&
                          a->input1_shift() >= -31 && a->input1_shift() <= 31 &&
                          a->input2_shift() >= -31 && a->input2_shift() <= 31 &&
                          a->output_shift() >= -31 && a->output_shift() <= 31,
                      "NPU payload: kernel %u: ADD/SUB parameters missing or out of range",
                      static_cast<unsigned>(n));
      }
      if (k.kind() == fb::KernelKind::Mul) {
        CHECK_PROGRAM(multipliers >= 1, "NPU payload: kernel %u: MUL multiplier missing",
                      static_cast<unsigned>(n));
      }
      return Error::kOk;
    }
    case fb::KernelKind::Softmax:
    case fb::KernelKind::Logistic:
    case fb::KernelKind::Tanh: {
      const fb::FixedPointParams* f = k.fixed_point();
      CHECK_PROGRAM(
          IsInt8(in) && IsInt8(out) && in.elements == out.elements && f != nullptr &&
              f->input_left_shift() >= -31 && f->input_left_shift() <= 31 &&
              (k.kind() != fb::KernelKind::Softmax || (in.rank >= 1 && f->input_left_shift() >= 0)),
          "NPU payload: kernel %u: fixed-point parameters missing or shapes differ",
          static_cast<unsigned>(n));
      return Error::kOk;
    }
    case fb::KernelKind::Relu:
    case fb::KernelKind::Relu6:
    case fb::KernelKind::LeakyRelu:
    case fb::KernelKind::HardSwish:
      CHECK_PROGRAM(IsInt8(in) && IsInt8(out) && in.elements == out.elements &&
                        multipliers >= (k.kind() == fb::KernelKind::LeakyRelu ? 2u : 0u) &&
                        (k.kind() == fb::KernelKind::HardSwish || multipliers >= 1),
                    "NPU payload: kernel %u: activation shapes or multipliers wrong",
                    static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::Quantize:
      CHECK_PROGRAM(in.elements == out.elements && multipliers >= 1 &&
                        (IsInt8(in) || in.type == fb::ElementType::UInt8 ||
                         in.type == fb::ElementType::Float32) &&
                        (IsInt8(out) || out.type == fb::ElementType::UInt8 ||
                         out.type == fb::ElementType::Int16),
                    "NPU payload: kernel %u: QUANTIZE types or shapes unsupported",
                    static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::Dequantize:
      CHECK_PROGRAM(in.elements == out.elements &&
                        (IsInt8(in) || in.type == fb::ElementType::UInt8) &&
                        out.type == fb::ElementType::Float32,
                    "NPU payload: kernel %u: DEQUANTIZE types or shapes unsupported",
                    static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::Reshape:
    case fb::KernelKind::Squeeze:
      CHECK_PROGRAM(in.type == out.type && in.elements == out.elements,
                    "NPU payload: kernel %u: reshape changes the element count or type",
                    static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::Concatenation: {
      CHECK_PROGRAM(out.rank >= 1 && k.axis() >= -out.rank && k.axis() < out.rank,
                    "NPU payload: kernel %u: concatenation axis %d out of range",
                    static_cast<unsigned>(n), static_cast<int>(k.axis()));
      const int32_t axis = k.axis() < 0 ? k.axis() + out.rank : k.axis();
      int64_t total = 0;
      for (uint32_t i = 0; i < k.inputs()->size(); ++i) {
        Shape s;
        RT_RETURN_IF_ERROR(Operand(k, i, n, &s));
        CHECK_PROGRAM(s.rank == out.rank && s.type == out.type,
                      "NPU payload: kernel %u: concatenation input %u rank/type differs",
                      static_cast<unsigned>(n), static_cast<unsigned>(i));
        for (int32_t d = 0; d < out.rank; ++d) {
          CHECK_PROGRAM(d == axis || s.dims[d] == out.dims[d],
                        "NPU payload: kernel %u: concatenation input %u dim %d differs",
                        static_cast<unsigned>(n), static_cast<unsigned>(i), static_cast<int>(d));
        }
        total += s.dims[axis];
      }
      CHECK_PROGRAM(total == out.dims[axis],
                    "NPU payload: kernel %u: concatenated sizes do not add up",
                    static_cast<unsigned>(n));
      return Error::kOk;
    }
    case fb::KernelKind::Pad:
    case fb::KernelKind::PadV2: {
      Shape pads, value;
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &pads));
      CHECK_PROGRAM(in.type == out.type && in.rank == out.rank && IsIndexType(pads) &&
                        pads.elements == 2 * int64_t{in.rank} && ElementBytes(out.type) <= 8,
                    "NPU payload: kernel %u: PAD operands malformed", static_cast<unsigned>(n));
      for (int32_t d = 0; d < in.rank; ++d) {
        const int64_t before = ConstIndex(pads, 2 * d), after = ConstIndex(pads, 2 * d + 1);
        CHECK_PROGRAM(before >= 0 && after >= 0 && in.dims[d] + before + after == out.dims[d],
                      "NPU payload: kernel %u: paddings do not produce the output shape",
                      static_cast<unsigned>(n));
      }
      if (k.kind() == fb::KernelKind::PadV2) {
        RT_RETURN_IF_ERROR(Operand(k, 2, n, &value, /*optional=*/true));
        CHECK_PROGRAM(value.tensor == nullptr || (value.type == out.type && value.elements >= 1),
                      "NPU payload: kernel %u: PADV2 value malformed", static_cast<unsigned>(n));
      }
      return Error::kOk;
    }
    case fb::KernelKind::Transpose: {
      Shape perm;
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &perm));
      CHECK_PROGRAM(in.type == out.type && in.rank == out.rank && IsIndexType(perm) &&
                        perm.elements == in.rank,
                    "NPU payload: kernel %u: TRANSPOSE operands malformed",
                    static_cast<unsigned>(n));
      bool seen[kMaxRank] = {};
      for (int32_t d = 0; d < in.rank; ++d) {
        const int64_t from = ConstIndex(perm, d);
        CHECK_PROGRAM(from >= 0 && from < in.rank && !seen[from] && in.dims[from] == out.dims[d],
                      "NPU payload: kernel %u: permutation invalid", static_cast<unsigned>(n));
        seen[from] = true;
      }
      return Error::kOk;
    }
    case fb::KernelKind::Mean: {
      Shape axes;
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &axes));
      CHECK_PROGRAM(IsInt8(in) && IsInt8(out) && IsIndexType(axes) && multipliers >= 1,
                    "NPU payload: kernel %u: MEAN operands malformed", static_cast<unsigned>(n));
      bool reduced[kMaxRank] = {};
      int64_t count = 1;
      for (int64_t i = 0; i < axes.elements; ++i) {
        int64_t a = ConstIndex(axes, i);
        if (a < 0) a += in.rank;
        CHECK_PROGRAM(a >= 0 && a < in.rank, "NPU payload: kernel %u: MEAN axis out of range",
                      static_cast<unsigned>(n));
        if (!reduced[a]) count *= in.dims[a];
        reduced[a] = true;
      }
      CHECK_PROGRAM(count > 0 && in.elements == out.elements * count,
                    "NPU payload: kernel %u: MEAN output size wrong", static_cast<unsigned>(n));
      return Error::kOk;
    }
    case fb::KernelKind::Slice:
    case fb::KernelKind::StridedSlice: {
      const bool strided = k.kind() == fb::KernelKind::StridedSlice;
      Shape begin, size_or_end, strides;
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &begin));
      RT_RETURN_IF_ERROR(Operand(k, 2, n, &size_or_end));
      if (strided) RT_RETURN_IF_ERROR(Operand(k, 3, n, &strides));
      CHECK_PROGRAM(in.type == out.type && IsIndexType(begin) && begin.elements == in.rank &&
                        (!strided ||
                         (IsIndexType(strides) && strides.elements == in.rank && int_params >= 6)),
                    "NPU payload: kernel %u: slice operands malformed", static_cast<unsigned>(n));
      if (strided) {
        RT_CHECK_OR_RETURN_ERROR(k.int_params()->Get(2) == 0 && k.int_params()->Get(3) == 0,
                                 kNotSupported,
                                 "NPU payload: kernel %u: STRIDED_SLICE ellipsis/new-axis masks",
                                 static_cast<unsigned>(n));
      }
      // Memory safety: every output coordinate maps inside the input.
      const int32_t begin_mask = strided ? k.int_params()->Get(0) : 0;
      const int32_t shrink = strided ? k.int_params()->Get(4) : 0;
      int32_t od = 0;
      for (int32_t d = 0; d < in.rank; ++d) {
        const int64_t st = strided ? ConstIndex(strides, d) : 1;
        CHECK_PROGRAM(st != 0, "NPU payload: kernel %u: zero stride", static_cast<unsigned>(n));
        int64_t b = ConstIndex(begin, d);
        if (strided) {
          if ((begin_mask & ~shrink) & (1 << d)) {
            b = st > 0 ? 0 : in.dims[d] - 1;
          } else {
            if (b < 0) b += in.dims[d];
            const int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? in.dims[d] : in.dims[d] - 1;
            b = b < lo ? lo : (b > hi ? hi : b);
          }
        }
        int64_t extent = 1;
        if (!(shrink & (1 << d))) {
          CHECK_PROGRAM(od < out.rank, "NPU payload: kernel %u: slice output rank too small",
                        static_cast<unsigned>(n));
          extent = out.dims[od++];
        }
        if (extent == 0) continue;
        const int64_t last = b + (extent - 1) * st;
        CHECK_PROGRAM(b >= 0 && b < in.dims[d] && last >= 0 && last < in.dims[d],
                      "NPU payload: kernel %u: slice reads outside the input on dim %d",
                      static_cast<unsigned>(n), static_cast<int>(d));
      }
      CHECK_PROGRAM(od == out.rank, "NPU payload: kernel %u: slice output rank mismatch",
                    static_cast<unsigned>(n));
      return Error::kOk;
    }
    case fb::KernelKind::ResizeNearestNeighbor:
      CHECK_PROGRAM(in.type == out.type && in.rank == 4 && out.rank == 4 &&
                        in.dims[0] == out.dims[0] && in.dims[3] == out.dims[3] && int_params >= 2 &&
                        (out.elements == 0 || (in.dims[1] > 0 && in.dims[2] > 0)),
                    "NPU payload: kernel %u: RESIZE operands malformed", static_cast<unsigned>(n));
      return Error::kOk;
    case fb::KernelKind::BatchMatMul: {
      RT_RETURN_IF_ERROR(Operand(k, 1, n, &in2));
      CHECK_PROGRAM(IsInt8(in) && IsInt8(in2) && IsInt8(out) && in.rank == 3 && in2.rank == 3 &&
                        out.rank == 3 && int_params >= 2 && multipliers >= 1,
                    "NPU payload: kernel %u: BATCH_MATMUL needs rank-3 int8 operands",
                    static_cast<unsigned>(n));
      const bool adj_x = k.int_params()->Get(0) != 0, adj_y = k.int_params()->Get(1) != 0;
      const int32_t rows = adj_x ? in.dims[2] : in.dims[1];
      const int32_t depth = adj_x ? in.dims[1] : in.dims[2];
      const int32_t depth2 = adj_y ? in2.dims[2] : in2.dims[1];
      const int32_t cols = adj_y ? in2.dims[1] : in2.dims[2];
      CHECK_PROGRAM(rows == out.dims[1] && cols == out.dims[2] && depth == depth2 &&
                        (in.dims[0] == out.dims[0] || in.dims[0] == 1) &&
                        (in2.dims[0] == out.dims[0] || in2.dims[0] == 1),
                    "NPU payload: kernel %u: BATCH_MATMUL shapes do not match",
                    static_cast<unsigned>(n));
      return Error::kOk;
    }
    default:
      break;
  }
  CHECK_PROGRAM(false, "NPU payload: kernel %u has unknown kind %d", static_cast<unsigned>(n),
                static_cast<int>(k.kind()));
}

Error Verifier::VerifyKernel(uint32_t n) {
  const fb::NpuKernel* k = p_.kernels()->Get(n);
  CHECK_PROGRAM(k != nullptr && k->inputs() != nullptr && k->outputs() != nullptr &&
                    k->inputs()->size() >= 1 && k->outputs()->size() >= 1,
                "NPU payload: kernel %u has no operands", static_cast<unsigned>(n));
  const uint32_t num_tensors = p_.tensors()->size();
  for (int32_t t : *k->inputs()) {
    CHECK_PROGRAM(t >= -1 && t < static_cast<int32_t>(num_tensors),
                  "NPU payload: kernel %u input tensor %d out of range", static_cast<unsigned>(n),
                  static_cast<int>(t));
  }
  for (int32_t t : *k->outputs()) {
    CHECK_PROGRAM(t >= 0 && t < static_cast<int32_t>(num_tensors),
                  "NPU payload: kernel %u output tensor %d out of range", static_cast<unsigned>(n),
                  static_cast<int>(t));
    const fb::TensorKind kind = p_.tensors()->Get(static_cast<uint32_t>(t))->kind();
    CHECK_PROGRAM(kind == fb::TensorKind::Output || kind == fb::TensorKind::Intermediate,
                  "NPU payload: kernel %u writes a constant or input tensor",
                  static_cast<unsigned>(n));
  }
  auto int8_value = [](int32_t v) { return v >= -128 && v <= 127; };
  CHECK_PROGRAM(int8_value(k->input_zero_point()) && int8_value(k->input2_zero_point()) &&
                    int8_value(k->output_zero_point()) && int8_value(k->activation_min()) &&
                    int8_value(k->activation_max()) && k->activation_min() <= k->activation_max(),
                "NPU payload: kernel %u has zero points or an activation range outside int8",
                static_cast<unsigned>(n));
  const uint32_t m = k->output_multipliers() ? k->output_multipliers()->size() : 0;
  const uint32_t s = k->output_shifts() ? k->output_shifts()->size() : 0;
  CHECK_PROGRAM(m == s, "NPU payload: kernel %u has %u multipliers and %u shifts",
                static_cast<unsigned>(n), static_cast<unsigned>(m), static_cast<unsigned>(s));
  for (uint32_t i = 0; i < s; ++i) {
    const int32_t shift = k->output_shifts()->Get(i);
    CHECK_PROGRAM(shift >= -31 && shift <= 31, "NPU payload: kernel %u shift %d out of range",
                  static_cast<unsigned>(n), static_cast<int>(shift));
  }
  // Weight-section ranges; with a slot, everything the kernel reads must lie in its constants
  // (the bytes the Prefetch copied) and the constants must fit the slot.
  const uint64_t section = weights_.size();
  const fb::Range* ranges[3] = {k->weights(), k->bias(), k->constants()};
  for (const fb::Range* r : ranges) {
    CHECK_PROGRAM(r == nullptr || RangeInside(r->offset(), r->size(), section),
                  "NPU payload: kernel %u has a weight range past the section end (%lu bytes)",
                  static_cast<unsigned>(n), static_cast<unsigned long>(weights_.size()));
  }
  if (k->weight_slot() != -1) {
    const fb::Range* c = k->constants();
    CHECK_PROGRAM(c != nullptr && (k->weight_slot() == 0 || k->weight_slot() == 1) &&
                      c->size() <= p_.slot_size() &&
                      (static_cast<uint64_t>(k->weight_slot()) + 1) * p_.slot_size() <=
                          p_.sram_weight_scratch_size() &&
                      p_.slot_size() <= p_.sram_weight_scratch_size(),
                  "NPU payload: kernel %u slot %d does not fit the weight scratch",
                  static_cast<unsigned>(n), static_cast<int>(k->weight_slot()));
    auto inside = [c](uint64_t offset, uint64_t size) {
      return offset >= c->offset() && RangeInside(offset - c->offset(), size, c->size());
    };
    for (int i = 0; i < 2; ++i) {
      const fb::Range* r = ranges[i];
      CHECK_PROGRAM(r == nullptr || r->size() == 0 || inside(r->offset(), r->size()),
                    "NPU payload: kernel %u reads weights outside its prefetched constants",
                    static_cast<unsigned>(n));
    }
    for (int32_t t : *k->inputs()) {
      if (t < 0) continue;
      const fb::Tensor* tensor = p_.tensors()->Get(static_cast<uint32_t>(t));
      if (tensor->kind() != fb::TensorKind::Constant) continue;
      CHECK_PROGRAM(inside(static_cast<uint64_t>(tensor->weights_offset()),
                           static_cast<uint64_t>(tensor->weights_size())),
                    "NPU payload: kernel %u reads a constant outside its prefetched range",
                    static_cast<unsigned>(n));
    }
  }
  return VerifyKernelShapes(*k, n);
}

Error Verifier::VerifyCommands() {
  const auto* types = p_.commands_type();
  const auto* commands = p_.commands();
  CHECK_PROGRAM(types != nullptr && commands != nullptr && types->size() == commands->size(),
                "NPU payload: command stream missing");
  // What each slot holds: the Prefetch last issued into it (offset, size), so a RunKernel can be
  // checked to read the constants it expects.
  uint64_t slot_offset[2] = {~uint64_t{0}, ~uint64_t{0}}, slot_size[2] = {0, 0};
  for (uint32_t i = 0; i < commands->size(); ++i) {
    switch (static_cast<fb::Command>(types->Get(i))) {
      case fb::Command::RunKernel: {
        const auto* run = static_cast<const fb::RunKernel*>(commands->Get(i));
        CHECK_PROGRAM(run != nullptr && run->kernel() < p_.kernels()->size(),
                      "NPU payload: command %u runs kernel %u of %u", static_cast<unsigned>(i),
                      static_cast<unsigned>(run ? run->kernel() : 0u),
                      static_cast<unsigned>(p_.kernels()->size()));
        const fb::NpuKernel* k = p_.kernels()->Get(run->kernel());
        if (k->weight_slot() >= 0) {
          const uint32_t slot = static_cast<uint32_t>(k->weight_slot());
          CHECK_PROGRAM(slot_offset[slot] == k->constants()->offset() &&
                            slot_size[slot] == k->constants()->size(),
                        "NPU payload: command %u runs kernel %u before its constants are "
                        "prefetched into slot %u",
                        static_cast<unsigned>(i), static_cast<unsigned>(run->kernel()),
                        static_cast<unsigned>(slot));
        }
        break;
      }
      case fb::Command::Prefetch: {
        const auto* pf = static_cast<const fb::Prefetch*>(commands->Get(i));
        CHECK_PROGRAM(
            pf != nullptr && pf->slot() < 2 && pf->size() <= p_.slot_size() &&
                (uint64_t{pf->slot()} + 1) * p_.slot_size() <= p_.sram_weight_scratch_size() &&
                RangeInside(pf->weights_offset(), pf->size(), weights_.size()),
            "NPU payload: command %u prefetches outside the weight section or scratch",
            static_cast<unsigned>(i));
        slot_offset[pf->slot()] = pf->weights_offset();
        slot_size[pf->slot()] = pf->size();
        break;
      }
      default:
        CHECK_PROGRAM(false, "NPU payload: command %u has unknown type %u",
                      static_cast<unsigned>(i), static_cast<unsigned>(types->Get(i)));
    }
  }
  return Error::kOk;
}

Error Verifier::Run(uint32_t* num_inputs, uint32_t* num_outputs) {
  RT_CHECK_OR_RETURN_ERROR(p_.version() == kPayloadVersion, kIncompatibleVersion,
                           "NPU payload: program version %u, runtime reads %u",
                           static_cast<unsigned>(p_.version()),
                           static_cast<unsigned>(kPayloadVersion));
  CHECK_PROGRAM(p_.kernels() != nullptr && p_.tensors() != nullptr && p_.inputs() != nullptr &&
                    p_.outputs() != nullptr,
                "NPU payload: program lacks kernels, tensors or IO lists");
  CHECK_PROGRAM(p_.weights_size() == weights_.size(),
                "NPU payload: program says %llu weight bytes, blob has %lu",
                static_cast<unsigned long long>(p_.weights_size()),
                static_cast<unsigned long>(weights_.size()));
  CHECK_PROGRAM(p_.weight_block_out() >= 1 && p_.weight_block_out() <= 64 &&
                    p_.weight_block_in() >= 1 && p_.weight_block_in() <= 64,
                "NPU payload: weight blocking %dx%d unsupported",
                static_cast<int>(p_.weight_block_out()), static_cast<int>(p_.weight_block_in()));
  CHECK_PROGRAM(p_.sram_weight_scratch_size() <= (uint64_t{1} << 31) &&
                    p_.slot_size() <= p_.sram_weight_scratch_size(),
                "NPU payload: weight scratch sizes inconsistent");
  *num_inputs = p_.inputs()->size();
  *num_outputs = p_.outputs()->size();
  const uint32_t num_args = *num_inputs + *num_outputs;
  RT_RETURN_IF_ERROR(VerifyTensors(num_args));
  // IO lists: tensor i of `inputs` is argument i, output j is argument nIn + j.
  for (uint32_t i = 0; i < num_args; ++i) {
    const bool is_input = i < *num_inputs;
    const int32_t t = is_input ? p_.inputs()->Get(i) : p_.outputs()->Get(i - *num_inputs);
    CHECK_PROGRAM(t >= 0 && static_cast<uint32_t>(t) < p_.tensors()->size(),
                  "NPU payload: IO entry %u names tensor %d", static_cast<unsigned>(i),
                  static_cast<int>(t));
    const fb::Tensor* tensor = p_.tensors()->Get(static_cast<uint32_t>(t));
    CHECK_PROGRAM(tensor->arg_index() == static_cast<int32_t>(i) &&
                      tensor->kind() == (is_input ? fb::TensorKind::Input : fb::TensorKind::Output),
                  "NPU payload: IO entry %u (tensor %d) has argument index %d",
                  static_cast<unsigned>(i), static_cast<int>(t),
                  static_cast<int>(tensor->arg_index()));
  }
  for (uint32_t i = 0; i < p_.kernels()->size(); ++i) RT_RETURN_IF_ERROR(VerifyKernel(i));
  return VerifyCommands();
}

}  // namespace

int ElementBytes(fb::ElementType type) {
  switch (type) {
    case fb::ElementType::Int8:
    case fb::ElementType::UInt8:
    case fb::ElementType::Bool:
      return 1;
    case fb::ElementType::Int16:
      return 2;
    case fb::ElementType::Int32:
    case fb::ElementType::Float32:
      return 4;
    case fb::ElementType::Int64:
      return 8;
  }
  return 1;
}

int64_t TensorBytes(const fb::Tensor& t) {
  int64_t bytes = ElementBytes(t.type());
  for (int32_t d : *t.shape()) bytes *= d;
  return bytes;
}

Result<NpuPayload> VerifyNpuPayload(Span<const uint8_t> blob) {
  CHECK_PROGRAM(blob.size() >= kPayloadHeaderBytes && std::memcmp(blob.data(), "BLNP", 4) == 0,
                "NPU payload: missing BLNP header (%lu bytes)",
                static_cast<unsigned long>(blob.size()));
  const uint32_t version = ReadU32(blob.data() + 4);
  RT_CHECK_OR_RETURN_ERROR(version == kPayloadVersion, kIncompatibleVersion,
                           "NPU payload: blob version %u, runtime reads %u",
                           static_cast<unsigned>(version), static_cast<unsigned>(kPayloadVersion));
  const uint64_t fb_size = ReadU32(blob.data() + 8);
  const uint64_t weights_size = ReadU32(blob.data() + 12);
  const uint64_t weights_begin = kPayloadHeaderBytes + (fb_size + kPayloadAlignment - 1) /
                                                           kPayloadAlignment * kPayloadAlignment;
  CHECK_PROGRAM(weights_begin <= blob.size() && weights_size <= blob.size() - weights_begin,
                "NPU payload: sections (flatbuffer %llu, weights %llu) exceed the blob (%lu)",
                static_cast<unsigned long long>(fb_size),
                static_cast<unsigned long long>(weights_size),
                static_cast<unsigned long>(blob.size()));
  const uint8_t* fb_data = blob.data() + kPayloadHeaderBytes;
  flatbuffers::Verifier verifier(fb_data, fb_size);
  CHECK_PROGRAM(fb::VerifyNpuProgramBuffer(verifier),
                "NPU payload: the NpuProgram flatbuffer fails verification");
  NpuPayload payload;
  payload.program = fb::GetNpuProgram(fb_data);
  payload.weights = Span<const uint8_t>(blob.data() + weights_begin, weights_size);
  Verifier v(*payload.program, payload.weights);
  const Error err = v.Run(&payload.num_inputs, &payload.num_outputs);
  if (err != Error::kOk) return err;
  return payload;
}

}  // namespace boardlab::runtime::npu
