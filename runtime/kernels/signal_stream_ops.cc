// TFLite Micro's streaming ops (reference/signal_stream.h): each keeps state in persistent
// memory, allocated and zeroed in Prepare, so it carries over between Executes and a new load
// starts it over as TFLite Micro's Reset does.
// Args: SIGNAL_FRAMER input 0, frame_size Int 1, frame_step Int 2, prefill Bool 3,
// zero_points 4, scales 5, output 6, output valid 7 (bool scalar);
// SIGNAL_STACKER input 0, num_channels 1, left_context 2, right_context 3, step 4 (Ints),
// zero_points 5, scales 6, output 7, output valid 8;
// SIGNAL_OVERLAP_ADD input 0, frame_step Int 1, zero_points 2, scales 3, output 4;
// CIRCULAR_BUFFER input 0, period Int 1 (cycles_max as the compiler resolved it), zero_points 2,
// scales 3, output 4, optional output valid 5 (bool [1]).

#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/signal_stream.h"

namespace boardlab::runtime::kernels {
namespace {

// `count` zeroed elements of T from persistent memory.
template <typename T>
Error AllocateState(KernelContext& ctx, const char* op, int64_t count, T** out) {
  const size_t bytes = static_cast<size_t>(count) * sizeof(T);
  RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kMemoryAllocationFailed,
                           "%s: no persistent memory for its state", op);
  *out = static_cast<T*>(ctx.persistent->Allocate(bytes, alignof(T)));
  RT_CHECK_OR_RETURN_ERROR(*out != nullptr, kMemoryAllocationFailed, "%s: %lu bytes of state", op,
                           static_cast<unsigned long>(bytes));
  std::memset(*out, 0, bytes);
  return Error::kOk;
}

bool IsBoolScalar(const TensorView& t) { return t.NumElements() == 1; }

}  // namespace

Error SignalFramerPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_framer";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 8));
  TensorView *in, *out, *valid;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 6, ScalarType::kShort, &out));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 7, ScalarType::kBool, &valid));
  auto* d = static_cast<OpDataSignalFramer*>(ctx.op_data);
  bool prefill = false;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->frame_size));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->step));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 3, &prefill));
  RT_CHECK_OR_RETURN_ERROR(d->frame_size > 0 && d->step > 0 && in->rank >= 1 &&
                               out->rank == in->rank + 1 && in->Dim(-1) % d->step == 0 &&
                               in->Dim(-1) >= d->step && out->Dim(-1) == d->frame_size &&
                               out->Dim(-2) == in->Dim(-1) / d->step && IsBoolScalar(*valid) &&
                               (!prefill || d->frame_size >= d->step),
                           kInvalidProgram,
                           "%s: input [..., frames x step], output [..., frames, frame_size], "
                           "valid a scalar",
                           op);
  d->frames = in->Dim(-1) / d->step;
  d->rows = in->NumElements() / in->Dim(-1);
  RT_CHECK_OR_RETURN_ERROR(out->NumElements() == d->rows * d->frames * d->frame_size,
                           kInvalidProgram, "%s: output rows differ from the input's", op);
  // Room for frame_size rounded up to whole steps, as TFLite Micro sizes its ring.
  d->state.capacity = (d->frame_size + d->step - 1) / d->step * d->step;
  RT_RETURN_IF_ERROR(AllocateState(ctx, op, d->rows * d->state.capacity, &d->state.unread));
  // Primed zeros are unread samples: the first frame is full after one step.
  d->state.filled = prefill ? d->frame_size - d->step : 0;
  return Error::kOk;
}

Error SignalFramerEval(KernelContext& ctx, Args args) {
  auto* d = static_cast<OpDataSignalFramer*>(ctx.op_data);
  return framer_s16(args[0]->tensor->As<const int16_t>(), d->rows, d->frames, d->frame_size,
                    d->step, d->state, args[6]->tensor->As<int16_t>(), args[7]->tensor->As<bool>());
}

Error SignalStackerPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_stacker";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 9));
  TensorView *in, *out, *valid;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 7, ScalarType::kShort, &out));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 8, ScalarType::kBool, &valid));
  auto* d = static_cast<OpDataSignalStacker*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->channels));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->left));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->right));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &d->step));
  const int64_t window = (int64_t{d->left} + d->right + 1) * d->channels;
  RT_CHECK_OR_RETURN_ERROR(d->channels > 0 && d->left >= 0 && d->right >= 0 && d->step > 0 &&
                               d->step <= d->left + d->right + 1 &&
                               in->NumElements() == d->channels && out->NumElements() == window &&
                               IsBoolScalar(*valid) && window <= INT32_MAX,
                           kInvalidProgram,
                           "%s: input [channels], output [(left + right + 1) x channels], step <= "
                           "left + right + 1, valid a scalar",
                           op);
  d->state.capacity = static_cast<int32_t>(window);
  return AllocateState(ctx, op, window, &d->state.unread);
}

Error SignalStackerEval(KernelContext& ctx, Args args) {
  auto* d = static_cast<OpDataSignalStacker*>(ctx.op_data);
  return stacker_s16(args[0]->tensor->As<const int16_t>(), d->channels, d->left, d->right, d->step,
                     d->state, args[7]->tensor->As<int16_t>(), args[8]->tensor->As<bool>());
}

Error SignalOverlapAddPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_overlap_add";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  auto* d = static_cast<OpDataSignalOverlapAdd*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->step));
  d->int16 = in->type == ScalarType::kShort;
  RT_CHECK_OR_RETURN_ERROR((d->int16 || in->type == ScalarType::kFloat) && out->type == in->type,
                           kInvalidProgram, "%s: int16 or float32 in and out", op);
  RT_CHECK_OR_RETURN_ERROR(
      in->rank >= 2 && out->rank == in->rank - 1 && d->step > 0 && d->step <= in->Dim(-1),
      kInvalidProgram, "%s: input [..., frames, frame_size], step in 1..frame_size", op);
  d->frame_size = in->Dim(-1);
  d->frames = in->Dim(-2);
  d->rows = in->NumElements() / (int64_t{d->frame_size} * d->frames);
  RT_CHECK_OR_RETURN_ERROR(out->NumElements() == d->rows * d->frames * d->step, kInvalidProgram,
                           "%s: output [..., frames x step]", op);
  const int64_t count = d->rows * d->frame_size;
  if (d->int16) {
    int16_t* buffer = nullptr;
    RT_RETURN_IF_ERROR(AllocateState(ctx, op, count, &buffer));
    d->buffer = buffer;
  } else {
    float* buffer = nullptr;
    RT_RETURN_IF_ERROR(AllocateState(ctx, op, count, &buffer));
    d->buffer = buffer;
  }
  return Error::kOk;
}

Error SignalOverlapAddEval(KernelContext& ctx, Args args) {
  auto* d = static_cast<OpDataSignalOverlapAdd*>(ctx.op_data);
  if (d->int16) {
    return overlap_add_s16(args[0]->tensor->As<const int16_t>(), d->rows, d->frames, d->frame_size,
                           d->step, static_cast<int16_t*>(d->buffer),
                           args[4]->tensor->As<int16_t>());
  }
  return overlap_add_f32(args[0]->tensor->As<const float>(), d->rows, d->frames, d->frame_size,
                         d->step, static_cast<float*>(d->buffer), args[4]->tensor->As<float>());
}

Error CircularBufferPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "circular_buffer";
  RT_CHECK_OR_RETURN_ERROR(args.size() == 5 || args.size() == 6, kInvalidProgram,
                           "%s: expected 5 or 6 arguments, got %lu", op,
                           static_cast<unsigned long>(args.size()));
  TensorView *in, *out, *valid = nullptr;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kChar, &out));
  if (args.size() == 6) RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kBool, &valid));
  auto* d = static_cast<OpDataCircularBuffer*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->period));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank == 4 && out->rank == 4 && in->dims[0] == 1 && out->dims[0] == 1 &&
          in->dims[1] == 1 && out->dims[1] > 0 && in->dims[2] == out->dims[2] &&
          in->dims[3] == out->dims[3] && in->NumElements() > 0 && d->period > 0 &&
          (valid == nullptr || IsBoolScalar(*valid)),
      kInvalidProgram, "%s: input [1, 1, h, d], output [1, slots, h, d], period >= 1", op);
  d->slots = out->dims[1];
  d->depth = static_cast<int32_t>(in->NumElements());
  d->runs_until_output = d->period;
  return AllocateState(ctx, op, out->NumElements(), &d->buffer);
}

// The buffer is the op's own (TFLite Micro keeps it in the output tensor, which boardlab's memory
// plan may share between inferences), copied out every time. Between its runs the inference ends
// here, as TFLite Micro's kTfLiteAbort ends an invoke.
Error CircularBufferEval(KernelContext& ctx, Args args) {
  auto* d = static_cast<OpDataCircularBuffer*>(ctx.op_data);
  RT_RETURN_IF_ERROR(
      circular_buffer_s8(args[0]->tensor->As<const int8_t>(), d->slots, d->depth, d->buffer));
  std::memcpy(args[4]->tensor->As<int8_t>(), d->buffer,
              static_cast<size_t>(d->slots) * static_cast<size_t>(d->depth));
  const bool runs = --d->runs_until_output == 0;
  if (runs) d->runs_until_output = d->period;
  if (args.size() == 6) *args[5]->tensor->As<bool>() = runs;
  ctx.end_inference = !runs;
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
