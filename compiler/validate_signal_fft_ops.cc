// Operand checks of TFLite Micro's signal library real FFTs (signal/micro/kernels/rfft.cc,
// irfft.cc), which boardlab runs on the CPU with kissfft's arithmetic
// (runtime/kernels/reference/signal_fft.h). TFLite Micro's Prepare checks only the types and the
// ranks; what its Eval would do past a tensor's end with (rows longer than fft_length, bins
// fewer than fft_length / 2 + 1) is refused here, each with its reason, and so are the lengths
// TFLite Micro's kissfft cannot run (runtime/kernels/reference/signal_fft.h IsRealFftLength: odd
// ones, which kiss_fftr_alloc refuses; fft_length 2, and half lengths with a prime factor above
// 5, whose radix 1 or generic butterfly writes through the null scratch pointer its build
// allocates) and those above boardlab's 4096.

#include <algorithm>
#include <string>

#include "compiler/op_checker.h"
#include "runtime/kernels/reference/signal_fft.h"

namespace boardlab::compiler {
namespace {

// TFLite's TensorType codes, which the converter writes as 'T'.
constexpr int32_t kTflFloat32 = 0, kTflInt32 = 2, kTflInt16 = 7;

absl::StatusOr<DataType> TypeOfT(const OpChecker& c, int32_t t) {
  switch (t) {
    case kTflFloat32:
      return DataType::kFloat32;
    case kTflInt32:
      return DataType::kInt32;
    case kTflInt16:
      return DataType::kInt16;
    default:
      return c.Unsupported(absl::StrCat("option T is TFLite type ", t, "; TFLite Micro's ",
                                        std::string(CustomCodeOf(c.op().type)),
                                        " takes int16 (7), int32 (2) or float32 (0)"));
  }
}

// Where TFLite Micro's positional read of fft_length disagrees with the "fft_length" key, every
// message about the length says so.
std::string PositionNote(const SignalOptions& o) {
  if (o.fft_length == o.fft_length_key) return "";
  return absl::StrCat(
      " (TFLite Micro takes fft_length from the options map's second value in "
      "key order: ",
      o.fft_length, ", where key 'fft_length' holds ", o.fft_length_key, ")");
}

absl::Status ValidFftLength(const OpChecker& c, const SignalOptions& o) {
  const int32_t n = o.fft_length;
  if (runtime::kernels::IsRealFftLength(n)) return absl::OkStatus();
  const int32_t max = runtime::kernels::kMaxRealFftLength;
  if (n < 4 || n > max || n % 2 != 0) {
    return c.Unsupported(absl::StrCat("fft_length ", n, " is not an even length in 4..", max,
                                      " (kissfft's real FFT takes an even length; boardlab's "
                                      "tables stay within 64 KiB)",
                                      PositionNote(o)));
  }
  return c.Unsupported(absl::StrCat(
      "fft_length ", n, ": its half ", n / 2,
      " has a prime factor above 5; TFLite Micro's kissfft runs stages of radix 2, 3, 4 and 5 "
      "only (its generic butterfly writes through the null scratch pointer its build "
      "allocates)",
      PositionNote(o)));
}

// Every dimension but the last equal: TFLite Micro's Eval steps through the input and the output
// row by row.
absl::Status SameRows(const OpChecker& c, const Tensor& in, const Tensor& out) {
  if (in.shape.size() == out.shape.size() &&
      std::equal(in.shape.begin(), in.shape.end() - 1, out.shape.begin())) {
    return absl::OkStatus();
  }
  return c.Invalid(absl::StrCat(
      "input '", in.name, "' ", ShapeString(in.shape), " and output '", out.name, "' ",
      ShapeString(out.shape), " differ before their last dimension (rows of one transform each)"));
}

absl::Status ValidateFft(const OpChecker& c, bool inverse) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  const Tensor& out = c.Out();
  const SignalOptions& o = c.op().opts<SignalOptions>();
  absl::StatusOr<DataType> type = TypeOfT(c, o.tensor_type);
  if (!type.ok()) return type.status();
  if (in.type != *type || out.type != *type) {
    return c.Invalid(absl::StrCat("option T says ", DataTypeName(*type), " but input '", in.name,
                                  "' is ", DataTypeName(in.type), " and output '", out.name, "' ",
                                  DataTypeName(out.type)));
  }
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 5));
  RETURN_IF_ERROR(SameRows(c, in, out));
  RETURN_IF_ERROR(ValidFftLength(c, o));
  const int32_t bins = o.fft_length + 2;  // fft_length / 2 + 1 (real, imaginary) pairs
  const int32_t in_last = in.shape.back();
  if (inverse ? in_last != bins : (in_last < 1 || in_last > o.fft_length)) {
    return c.Invalid(absl::StrCat(
        "input '", in.name, "' ", ShapeString(in.shape), " rows hold ", in_last, " values; ",
        inverse ? absl::StrCat("fft_length ", o.fft_length, " reads ", bins,
                               " (fft_length / 2 + 1 real, imaginary pairs)")
                : absl::StrCat("fft_length ", o.fft_length,
                               " takes 1..fft_length samples (zero padded)"),
        PositionNote(o)));
  }
  const int32_t out_last = inverse ? o.fft_length : bins;
  if (out.shape.back() != out_last) {
    return c.Invalid(absl::StrCat("output '", out.name, "' ", ShapeString(out.shape), " rows hold ",
                                  out.shape.back(), " values; fft_length ", o.fft_length,
                                  " writes ", out_last, PositionNote(o)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSignalFftOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kSignalRfft:
      return ValidateFft(c, false);
    case OpType::kSignalIrfft:
      return ValidateFft(c, true);
    default:
      return c.Invalid("not a real FFT op");
  }
}

}  // namespace boardlab::compiler
