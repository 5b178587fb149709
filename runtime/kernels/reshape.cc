// RESHAPE and SQUEEZE: the output shape is the compiler's; the bytes do not change. The copy is
// skipped when the memory planner aliased input and output.

#include "runtime/kernels/copy_bytes.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace boardlab::runtime::kernels {
namespace {

Error PrepareCopy(const char* op, Args args) {
  RT_CHECK_OR_RETURN_ERROR(args.size() >= 4 && args[0] != nullptr && args[0]->is_tensor() &&
                               args[args.size() - 1] != nullptr &&
                               args[args.size() - 1]->is_tensor(),
                           kInvalidProgram, "%s: expects input ..., output tensors", op);
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[args.size() - 1]->tensor;
  RT_CHECK_OR_RETURN_ERROR(in.type == out.type && in.NumBytes() == out.NumBytes(), kInvalidProgram,
                           "%s: %lld bytes in, %lld out", op, static_cast<long long>(in.NumBytes()),
                           static_cast<long long>(out.NumBytes()));
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count >= 2 && q.zero_point[0] == q.zero_point[q.count - 1] &&
                               q.scale[0] == q.scale[q.count - 1],
                           kInvalidProgram, "%s: input and output quantization differ", op);
  return Error::kOk;
}

Error EvalCopy(Args args) {
  CopyTensorBytes(*args[0]->tensor, *args[args.size() - 1]->tensor);
  return Error::kOk;
}

}  // namespace

Error ReshapePrepare(KernelContext&, Args args) { return PrepareCopy("reshape", args); }
Error ReshapeEval(KernelContext&, Args args) { return EvalCopy(args); }
Error SqueezePrepare(KernelContext&, Args args) { return PrepareCopy("squeeze", args); }
Error SqueezeEval(KernelContext&, Args args) { return EvalCopy(args); }

}  // namespace boardlab::runtime::kernels
