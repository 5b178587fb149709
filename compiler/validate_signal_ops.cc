// Operand checks of TFLite Micro's signal library ops (signal/micro/kernels), which boardlab runs
// on the CPU with TFLite Micro's arithmetic (runtime/kernels/reference/signal.h). What TFLite
// Micro's Prepare refuses is refused here, and so is what its Eval would read or write past a
// tensor's end (a shape Prepare does not check).

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

constexpr const char* kInt16Only = "TFLite Micro's signal kernels take int16 here";

// SignalWindow (window.cc): input [..., n] times int16 weights [n], each product shifted right
// by `shift` and saturated to int16; output shaped as the input.
absl::Status ValidateWindow(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  const Tensor& weights = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(weights, "weights", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 6));
  RETURN_IF_ERROR(c.Rank(weights, "weights", 1, 1));
  // TFLite Micro steps through the input one window length at a time: a last dimension other
  // than the window's would read the weights past their end.
  if (in.shape.back() != weights.shape[0]) {
    return c.Invalid(absl::StrCat("input '", in.name, "' has shape ", ShapeString(in.shape),
                                  " but weights '", weights.name, "' have ", weights.shape[0],
                                  " entries; the last dimension must equal them"));
  }
  const int32_t shift = c.op().opts<SignalOptions>().shift;
  if (shift < 0 || shift > 31) {
    return c.Invalid(
        absl::StrCat("shift ", shift, " is outside 0..31 (an int32 product shifts right by it)"));
  }
  return c.OutputShape(in.shape);
}

// SignalFftAutoScale (fft_auto_scale_kernel.cc): int16 [n] shifted left as far as its largest
// magnitude allows, int16 [n] and the shift, an int32 scalar.
absl::Status ValidateFftAutoScale(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1, 2));
  const Tensor& in = c.In(0);
  const Tensor& out = c.Out(0);
  const Tensor& scale_bits = c.Out(1);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(out, "output", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(scale_bits, "scale_bits output", {DataType::kInt32},
                           "TFLite Micro's SignalFftAutoScale writes the shift as int32"));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  RETURN_IF_ERROR(c.Rank(scale_bits, "scale_bits output", 0, 0));
  return c.OutputShape(in.shape);
}

// The most history samples one SignalDelay keeps (rows x delay_length): the history lives in the
// runtime's persistent memory, of which the firmware has 128 KiB for everything a load builds;
// 64 KiB leaves the rest to the model (every shared model loads in under 8 KiB).
constexpr int64_t kMaxDelayHistory = 32768;

// SignalDelay (delay.cc): each row of int16 [..., n] delayed by `delay_length` samples across
// inferences (the first ones read zeros); output shaped as the input.
absl::Status ValidateDelay(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 6));
  const int32_t delay = c.op().opts<SignalOptions>().delay_length;
  if (delay < 0) return c.Invalid(absl::StrCat("delay_length ", delay, " is negative"));
  const int64_t history = in.NumElements() / in.shape.back() * delay;
  if (history > kMaxDelayHistory) {
    return c.Unsupported(absl::StrCat("delay_length ", delay, " over ",
                                      in.NumElements() / in.shape.back(), " rows keeps ", history,
                                      " samples of history, more than boardlab's ",
                                      kMaxDelayHistory, " (64 KiB of persistent memory)"));
  }
  return c.OutputShape(in.shape);
}

}  // namespace

absl::Status ValidateSignalOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kSignalWindow:
      return ValidateWindow(c);
    case OpType::kSignalFftAutoScale:
      return ValidateFftAutoScale(c);
    case OpType::kSignalDelay:
      return ValidateDelay(c);
    default:
      return c.Invalid("not a signal op");
  }
}

}  // namespace boardlab::compiler
