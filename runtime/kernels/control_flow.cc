// The kernels the compiler's control-flow lowering calls (docs/artifact-format.md, "Control
// flow"): IF, WHILE and CALL_ONCE turn their bool condition tensor into the chain's jump flag, a
// Bool value that the JumpFalseCall after them reads (CALL_ONCE's condition is its "not run yet"
// flag, a variable tensor); COPY moves a tensor's bytes into another of the same type and size
// (IF and WHILE handing tensors to and from the subgraphs they call), and so do READ_VARIABLE
// and ASSIGN_VARIABLE, out of and into a resource variable's state: the variable the compiler
// resolved, or the one the handle's run-time id names among those it lists.

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

// A READ_VARIABLE or ASSIGN_VARIABLE whose handle can name several variables depending on the
// run (IF branches returning different handles, a loop replacing its handle, a handle the caller
// passes in): the compiler keeps the handle as an int32 tensor holding TFLite Micro's resource id
// and lists the candidates. Arguments: READ_VARIABLE (handle, ids, variable..., value out);
// ASSIGN_VARIABLE (handle, value in, ids, variable...). `ids`, a constant int32 tensor, gives each
// listed variable's resource id. The two-argument form is the plain copy the compiler writes when
// the handle names one variable, as every older program does.
struct Dispatch {
  size_t value = 0;           // the value read into or assigned from
  size_t first_variable = 0;  // the candidates follow it, `count` of them
  size_t count = 0;
  size_t ids = 0;
};

Dispatch ReadDispatch(Args args) { return {args.size() - 1, 2, args.size() - 3, 1}; }
Dispatch AssignDispatch(Args args) { return {1, 3, args.size() - 3, 2}; }

Error PrepareDispatch(const char* op, Args args, const Dispatch& d) {
  TensorView* handle = nullptr;
  TensorView* value = nullptr;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kInt, &handle));
  RT_CHECK_OR_RETURN_ERROR(handle->NumElements() == 1, kInvalidProgram,
                           "%s: the resource handle has %lld elements, expected 1", op,
                           static_cast<long long>(handle->NumElements()));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, d.value, &value));
  TensorView* ids = nullptr;
  RT_RETURN_IF_ERROR(TensorArg(op, args, d.ids, ScalarType::kInt, &ids));
  RT_CHECK_OR_RETURN_ERROR(ids->NumElements() == static_cast<int64_t>(d.count), kInvalidProgram,
                           "%s: argument %lu must list the %lu variables' ids", op,
                           static_cast<unsigned long>(d.ids), static_cast<unsigned long>(d.count));
  for (size_t k = 0; k < d.count; ++k) {
    TensorView* variable = nullptr;
    RT_RETURN_IF_ERROR(AnyTensorArg(op, args, d.first_variable + k, &variable));
    RT_CHECK_OR_RETURN_ERROR(
        variable->type == value->type && variable->NumBytes() == value->NumBytes(), kInvalidProgram,
        "%s: variable %lu has %lld bytes of type %d, the value %lld of type %d", op,
        static_cast<unsigned long>(k), static_cast<long long>(variable->NumBytes()),
        static_cast<int>(variable->type), static_cast<long long>(value->NumBytes()),
        static_cast<int>(value->type));
  }
  return Error::kOk;
}

// The candidate the handle's id names. TFLite Micro's MicroResourceVariables fails the same way on
// an id it has no variable for; here also on a variable this op cannot reach (of another type or
// size, or never assigned).
Error FindVariable(const char* op, Args args, const Dispatch& d, TensorView** variable) {
  const int32_t id = *static_cast<const int32_t*>(args[0]->tensor->data);
  const int32_t* ids = static_cast<const int32_t*>(args[d.ids]->tensor->data);
  for (size_t k = 0; k < d.count; ++k) {
    if (ids[k] != id) continue;
    *variable = args[d.first_variable + k]->tensor;
    return Error::kOk;
  }
  RT_CHECK_OR_RETURN_ERROR(false, kInvalidArgument,
                           "%s: the resource handle holds id %ld, which names none of the %lu "
                           "variables this op can reach",
                           op, static_cast<long>(id), static_cast<unsigned long>(d.count));
  return Error::kInvalidArgument;
}

// Copies the value out of (`read`) or into the variable the handle's id names.
Error EvalDispatch(const char* op, Args args, const Dispatch& d, bool read) {
  TensorView* variable = nullptr;
  RT_RETURN_IF_ERROR(FindVariable(op, args, d, &variable));
  const TensorView& value = *args[d.value]->tensor;
  CopyTensorBytes(read ? *variable : value, read ? value : *variable);
  return Error::kOk;
}

bool IsDispatch(Args args) { return args.size() >= 4; }

}  // namespace

Error CopyPrepare(KernelContext&, Args args) { return PrepareCopy("copy", args); }
Error CopyEval(KernelContext&, Args args) { return EvalCopy(args); }

Error ReadVariablePrepare(KernelContext&, Args args) {
  if (IsDispatch(args)) return PrepareDispatch("read_variable", args, ReadDispatch(args));
  return PrepareCopy("read_variable", args);
}

Error ReadVariableEval(KernelContext&, Args args) {
  if (!IsDispatch(args)) return EvalCopy(args);
  return EvalDispatch("read_variable", args, ReadDispatch(args), true);
}

Error AssignVariablePrepare(KernelContext&, Args args) {
  if (IsDispatch(args)) return PrepareDispatch("assign_variable", args, AssignDispatch(args));
  return PrepareCopy("assign_variable", args);
}

Error AssignVariableEval(KernelContext&, Args args) {
  if (!IsDispatch(args)) return EvalCopy(args);
  return EvalDispatch("assign_variable", args, AssignDispatch(args), false);
}

Error VarHandlePrepare(KernelContext&, Args) {
  RT_CHECK_OR_RETURN_ERROR(false, kInvalidProgram,
                           "var_handle: resource handles are resolved when compiling; a program "
                           "never calls this kernel");
  return Error::kInvalidProgram;
}
Error VarHandleEval(KernelContext&, Args) { return Error::kInvalidProgram; }

}  // namespace boardlab::runtime::kernels
