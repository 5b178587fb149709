// The kernels the compiler's control-flow lowering calls (docs/artifact-format.md, "Control
// flow"): IF, WHILE and CALL_ONCE turn their bool condition tensor into the chain's jump flag, a
// Bool value that the JumpFalseCall after them reads (CALL_ONCE's condition is its "not run yet"
// flag, a variable tensor); COPY moves a tensor's bytes into another of the same type and size
// (IF and WHILE handing tensors to and from the subgraphs they call), and so do READ_VARIABLE
// and ASSIGN_VARIABLE, out of and into a resource variable's state (the compiler resolved which
// variable when compiling).

#include "runtime/kernels/copy_bytes.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace boardlab::runtime::kernels {
namespace {

// Arguments: the condition (a bool tensor of one element, as TFLite Micro requires), then the
// Bool value to set.
Error PrepareCondition(const char* op, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 2));
  TensorView* cond = nullptr;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kBool, &cond));
  RT_CHECK_OR_RETURN_ERROR(cond->NumElements() == 1, kInvalidProgram,
                           "%s: the condition has %lld elements, expected 1", op,
                           static_cast<long long>(cond->NumElements()));
  RT_CHECK_OR_RETURN_ERROR(args[1] != nullptr && args[1]->tag == ValueTag::kBool, kInvalidProgram,
                           "%s: argument 1 must be the Bool jump flag", op);
  return Error::kOk;
}

Error EvalCondition(Args args) {
  args[1]->bool_value = *static_cast<const uint8_t*>(args[0]->tensor->data) != 0;
  return Error::kOk;
}

}  // namespace

Error IfPrepare(KernelContext&, Args args) { return PrepareCondition("if", args); }
Error IfEval(KernelContext&, Args args) { return EvalCondition(args); }
Error WhilePrepare(KernelContext&, Args args) { return PrepareCondition("while", args); }
Error WhileEval(KernelContext&, Args args) { return EvalCondition(args); }
Error CallOncePrepare(KernelContext&, Args args) { return PrepareCondition("call_once", args); }
Error CallOnceEval(KernelContext&, Args args) { return EvalCondition(args); }

namespace {

// Arguments: the source tensor, then the destination, of the same type and byte count.
Error PrepareCopy(const char* op, Args args) {
  TensorView* in = nullptr;
  TensorView* out = nullptr;
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 2));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &out));
  RT_CHECK_OR_RETURN_ERROR(in->type == out->type && in->NumBytes() == out->NumBytes(),
                           kInvalidProgram, "%s: %lld bytes of type %d into %lld of type %d", op,
                           static_cast<long long>(in->NumBytes()), static_cast<int>(in->type),
                           static_cast<long long>(out->NumBytes()), static_cast<int>(out->type));
  return Error::kOk;
}

Error EvalCopy(Args args) {
  CopyTensorBytes(*args[0]->tensor, *args[1]->tensor);
  return Error::kOk;
}

}  // namespace

Error CopyPrepare(KernelContext&, Args args) { return PrepareCopy("copy", args); }
Error CopyEval(KernelContext&, Args args) { return EvalCopy(args); }
Error ReadVariablePrepare(KernelContext&, Args args) { return PrepareCopy("read_variable", args); }
Error ReadVariableEval(KernelContext&, Args args) { return EvalCopy(args); }
Error AssignVariablePrepare(KernelContext&, Args args) {
  return PrepareCopy("assign_variable", args);
}
Error AssignVariableEval(KernelContext&, Args args) { return EvalCopy(args); }

Error VarHandlePrepare(KernelContext&, Args) {
  RT_CHECK_OR_RETURN_ERROR(false, kInvalidProgram,
                           "var_handle: resource handles are resolved when compiling; a program "
                           "never calls this kernel");
  return Error::kInvalidProgram;
}
Error VarHandleEval(KernelContext&, Args) { return Error::kInvalidProgram; }

}  // namespace boardlab::runtime::kernels
