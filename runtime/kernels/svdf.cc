// SVDF int8 (reference/svdf_s8.h). Args: input 0 (int8 [batch, input_size]), weights_feature 1
// (int8 [filters, input_size]), weights_time 2 (int16 or int8 [filters, memory]), bias 3 (int32
// [filters / rank] or Null), activation_state 4 (weights_time's type, [batch, memory * filters],
// a variable tensor the kernel updates in place), rank 5, input_zp 6, state_zp 7, output_zp 8,
// feature multiplier 9 and shift 10, time multiplier 11 and shift 12, output 13 (int8 [batch,
// filters / rank]).

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/svdf_s8.h"

namespace boardlab::runtime::kernels {
namespace {

Error ReadParams(const char* op, Args args, SvdfParams& p) {
  int32_t* fields[] = {&p.rank,
                       &p.input_zero_point,
                       &p.state_zero_point,
                       &p.output_zero_point,
                       &p.feature_multiplier,
                       &p.feature_shift,
                       &p.time_multiplier,
                       &p.time_shift};
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); ++i) {
    RT_RETURN_IF_ERROR(IntArg(op, args, 5 + i, fields[i]));
  }
  RT_CHECK_OR_RETURN_ERROR(p.rank > 0 && p.feature_shift <= 31 && p.feature_shift >= -31 &&
                               p.time_shift <= 31 && p.time_shift >= -31 &&
                               p.input_zero_point >= -128 && p.input_zero_point <= 127 &&
                               p.output_zero_point >= -128 && p.output_zero_point <= 127,
                           kInvalidProgram, "%s: bad rank, zero point or shift", op);
  return Error::kOk;
}

bool Is2D(const TensorView* t, int32_t rows, int32_t cols) {
  return t->rank == 2 && t->dims[0] == rows && t->dims[1] == cols;
}

}  // namespace

Error SvdfPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "svdf";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 14));
  TensorView *in, *feature, *time, *bias, *state, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &feature));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 2, &time));
  RT_RETURN_IF_ERROR(OptionalTensorArg(op, args, 3, ScalarType::kInt, &bias));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &state));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 13, ScalarType::kChar, &out));
  RT_CHECK_OR_RETURN_ERROR((time->type == ScalarType::kShort || time->type == ScalarType::kChar) &&
                               state->type == time->type,
                           kInvalidProgram,
                           "%s: weights_time and state must both be int16 or both int8", op);
  auto* d = static_cast<OpDataSvdf*>(ctx.op_data);
  RT_RETURN_IF_ERROR(ReadParams(op, args, d->params));
  RT_CHECK_OR_RETURN_ERROR(in->rank == 2 && feature->rank == 2 && time->rank == 2, kInvalidProgram,
                           "%s: input and weights must be 2-D", op);
  SvdfDims& dims = d->dims;
  dims = {in->dims[0], in->dims[1], feature->dims[0], time->dims[1]};
  const int32_t units = dims.filters / d->params.rank;
  RT_CHECK_OR_RETURN_ERROR(
      dims.filters % d->params.rank == 0 && Is2D(feature, dims.filters, dims.input_size) &&
          Is2D(time, dims.filters, dims.memory) &&
          Is2D(state, dims.batch, dims.memory * dims.filters) && Is2D(out, dims.batch, units) &&
          (bias == nullptr || (bias->rank == 1 && bias->dims[0] == units)),
      kInvalidProgram, "%s: input, weights, bias, state and output shapes do not match", op);
  d->int16_state = state->type == ScalarType::kShort;
  return Error::kOk;
}

Error SvdfEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSvdf*>(ctx.op_data);
  const int8_t* in = args[0]->tensor->As<const int8_t>();
  const int8_t* feature = args[1]->tensor->As<const int8_t>();
  const int32_t* bias = args[3]->is_tensor() ? args[3]->tensor->As<const int32_t>() : nullptr;
  int8_t* out = args[13]->tensor->As<int8_t>();
  if (d->int16_state) {
    return svdf_s8_s16(d->params, d->dims, in, feature, args[2]->tensor->As<const int16_t>(), bias,
                       args[4]->tensor->As<int16_t>(), out);
  }
  return svdf_s8_s8(d->params, d->dims, in, feature, args[2]->tensor->As<const int8_t>(), bias,
                    args[4]->tensor->As<int8_t>(), out);
}

}  // namespace boardlab::runtime::kernels
