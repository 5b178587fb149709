#include "runtime/npu/npu_timing.h"

#include "runtime/npu/npu_payload.h"

namespace boardlab::runtime::npu {
namespace {

namespace fb = ::boardlab::npu;
using timing::NpuKernelClass;

// Same classes as compiler/cost_model.cc NpuClassOf.
NpuKernelClass ClassOf(fb::KernelKind kind) {
  switch (kind) {
    case fb::KernelKind::Conv2D:
    case fb::KernelKind::FullyConnected:
      return NpuKernelClass::kConv;
    case fb::KernelKind::DepthwiseConv2D:
      return NpuKernelClass::kDepthwise;
    case fb::KernelKind::BatchMatMul:
      return NpuKernelClass::kMatMul;
    case fb::KernelKind::AveragePool2D:
    case fb::KernelKind::MaxPool2D:
    case fb::KernelKind::Mean:
      return NpuKernelClass::kPool;
    case fb::KernelKind::Add:
    case fb::KernelKind::Sub:
    case fb::KernelKind::Mul:
    case fb::KernelKind::Maximum:
    case fb::KernelKind::Minimum:
    case fb::KernelKind::Relu:
    case fb::KernelKind::Relu6:
    case fb::KernelKind::LeakyRelu:
    case fb::KernelKind::Logistic:
    case fb::KernelKind::Tanh:
    case fb::KernelKind::HardSwish:
    case fb::KernelKind::Quantize:
    case fb::KernelKind::Dequantize:
      return NpuKernelClass::kElementwise;
    case fb::KernelKind::Softmax:
      return NpuKernelClass::kSoftmax;
    default:
      return NpuKernelClass::kDataMovement;
  }
}

int64_t Elements(const fb::Tensor& t) {
  int64_t n = 1;
  for (int32_t d : *t.shape()) n *= d;
  return n;
}

}  // namespace

timing::NpuKernelShape NpuShapeForKernel(const fb::NpuProgram& program, const fb::NpuKernel& k) {
  timing::NpuKernelShape shape;
  shape.kind = ClassOf(k.kind());
  const auto* tensors = program.tensors();
  const fb::Tensor& out = *tensors->Get(static_cast<uint32_t>(k.outputs()->Get(0)));
  const auto& s = *out.shape();
  if (s.size() == 4) {
    shape.out_rows = int64_t{s.Get(0)} * s.Get(1);
    shape.out_cols = s.Get(2);
    shape.out_channels = s.Get(3);
  } else if (s.size() > 0) {
    shape.out_channels = s.Get(s.size() - 1);
    for (uint32_t i = 0; i + 1 < s.size(); ++i) shape.out_rows *= s.Get(i);
  }
  const fb::Tensor& in = *tensors->Get(static_cast<uint32_t>(k.inputs()->Get(0)));
  const int64_t out_elements = Elements(out);
  const fb::Geometry* g = k.geometry();
  const int64_t taps = g ? int64_t{g->kernel_h()} * g->kernel_w() : 1;
  const int64_t out_c = shape.out_channels;
  switch (k.kind()) {
    case fb::KernelKind::Conv2D: {
      const int64_t in_c = in.shape()->Get(in.shape()->size() - 1);
      shape.in_channels = in_c;
      shape.kernel_taps = taps;
      shape.weight_bytes = out_c * taps * in_c + 4 * out_c;
      break;
    }
    case fb::KernelKind::DepthwiseConv2D:
      shape.kernel_taps = taps;
      shape.weight_bytes = taps * out_c + 4 * out_c;
      break;
    case fb::KernelKind::FullyConnected: {
      const int64_t batches = out_c > 0 ? out_elements / out_c : 0;
      shape.in_channels = batches > 0 ? Elements(in) / batches : 0;
      shape.weight_bytes = out_c * shape.in_channels + 4 * out_c;
      break;
    }
    case fb::KernelKind::BatchMatMul: {
      // MACs / output elements = the reduction depth.
      const auto& a = *in.shape();
      const bool adj_x = k.int_params() && k.int_params()->size() > 0 && k.int_params()->Get(0);
      shape.in_channels = a.size() == 3 ? (adj_x ? a.Get(1) : a.Get(2)) : 0;
      break;
    }
    case fb::KernelKind::AveragePool2D:
    case fb::KernelKind::MaxPool2D:
      shape.kernel_taps = taps;
      break;
    case fb::KernelKind::Mean:
      shape.kernel_taps = out_elements > 0 ? Elements(in) / out_elements : 1;
      break;
    default:
      break;
  }
  for (int32_t t : *k.inputs()) {
    if (t < 0) continue;
    const fb::Tensor& tensor = *tensors->Get(static_cast<uint32_t>(t));
    (tensor.kind() == fb::TensorKind::Constant ? shape.weight_bytes : shape.input_bytes) +=
        TensorBytes(tensor);
  }
  for (int32_t t : *k.outputs()) {
    shape.output_bytes += TensorBytes(*tensors->Get(static_cast<uint32_t>(t)));
  }
  shape.weights_in_flash = program.sram_weight_scratch_size() > 0 && shape.weight_bytes > 0;
  return shape;
}

}  // namespace boardlab::runtime::npu
