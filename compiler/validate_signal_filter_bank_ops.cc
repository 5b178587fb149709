// Operand checks of the filter bank stage of TFLite Micro's signal library (signal/micro/kernels:
// energy.cc, filter_bank.cc, filter_bank_square_root.cc, filter_bank_log.cc, pcan.cc,
// filter_bank_spectral_subtraction.cc), which
// boardlab runs on the CPU with TFLite Micro's arithmetic
// (runtime/kernels/reference/signal_filter_bank.h). What TFLite Micro's Prepare refuses is refused
// here, and so is what its Eval would read or write past a tensor's end with, or shift by more
// than the width of the value shifted.

#include <algorithm>
#include <cstring>

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

constexpr const char* kTypes = "TFLite Micro's signal kernels take these types only";

// The int32 values of a constant int16 operand.
std::vector<int32_t> Int16Values(const Tensor& t) {
  std::vector<int32_t> out(t.data.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int16_t v;
    std::memcpy(&v, t.data.data() + 2 * i, 2);
    out[i] = v;
  }
  return out;
}

absl::Status ShiftWithin(const OpChecker& c, const char* what, int64_t value, int64_t max) {
  if (value >= 0 && value <= max) return absl::OkStatus();
  return c.Invalid(absl::StrCat(what, " ", value, " is outside 0..", max, " (a shift of a ",
                                max + 1, "-bit value)"));
}

// SignalEnergy: int16 [2n] (real, imaginary pairs) to uint32 [n], bins [start_index, end_index)
// written.
absl::Status ValidateEnergy(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  const Tensor& out = c.Out();
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(out, "output", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  RETURN_IF_ERROR(c.Rank(out, "output", 1, 1));
  const SignalOptions& o = c.op().opts<SignalOptions>();
  const int64_t bins = std::min<int64_t>(in.shape[0] / 2, out.shape[0]);
  if (o.start_index < 0 || o.start_index > o.end_index || o.end_index > bins) {
    return c.Invalid(absl::StrCat("bins [start_index ", o.start_index, ", end_index ", o.end_index,
                                  ") are not within the ", bins, " that input '", in.name, "' ",
                                  ShapeString(in.shape), " (complex pairs) and output '", out.name,
                                  "' ", ShapeString(out.shape), " hold"));
  }
  return absl::OkStatus();
}

// Each channel's bins within the input and its weights within weights and unweights, when the
// channel tables are constants (the runtime checks them again at each Eval otherwise).
absl::Status ValidateChannelTables(const OpChecker& c, int32_t channels) {
  const Tensor& freq_starts = c.In(3);
  const Tensor& weight_starts = c.In(4);
  const Tensor& widths = c.In(5);
  if (!freq_starts.is_constant || !weight_starts.is_constant || !widths.is_constant) {
    return absl::OkStatus();
  }
  const std::vector<int32_t> f = Int16Values(freq_starts);
  const std::vector<int32_t> w = Int16Values(weight_starts);
  const std::vector<int32_t> n = Int16Values(widths);
  const int64_t weights = std::min(c.In(1).shape[0], c.In(2).shape[0]);
  for (int32_t i = 0; i <= channels; ++i) {
    const int32_t width = std::max(n[i], 0);
    if (f[i] < 0 || f[i] + width > c.In(0).shape[0] || w[i] < 0 || w[i] + width > weights) {
      return c.Invalid(absl::StrCat("channel ", i, " (frequency start ", f[i], ", weight start ",
                                    w[i], ", width ", n[i], ") reads past input '", c.In(0).name,
                                    "' ", ShapeString(c.In(0).shape), " or the ", weights,
                                    " weights"));
    }
  }
  return absl::OkStatus();
}

// SignalFilterBank: uint32 [bins] accumulated into uint64 [<= num_channels] with int16 weights
// and unweights and int16 channel tables of num_channels + 1 entries.
absl::Status ValidateFilterBank(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(6, 6));
  RETURN_IF_ERROR(c.TypeIn(c.In(0), "input", {DataType::kUint32}, kTypes));
  const char* roles[] = {
      "input",         "weights", "unweights", "channel_frequency_starts", "channel_weight_starts",
      "channel_widths"};
  for (size_t i = 1; i < 6; ++i) {
    RETURN_IF_ERROR(c.TypeIn(c.In(i), roles[i], {DataType::kInt16}, kTypes));
  }
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kUint64}, kTypes));
  for (size_t i = 0; i < 6; ++i) RETURN_IF_ERROR(c.Rank(c.In(i), roles[i], 1, 1));
  RETURN_IF_ERROR(c.Rank(c.Out(), "output", 1, 1));
  const int32_t channels = c.op().opts<SignalOptions>().num_channels;
  if (channels < 1) return c.Invalid(absl::StrCat("num_channels ", channels, " is not positive"));
  for (size_t i = 3; i < 6; ++i) {
    if (c.In(i).shape[0] < static_cast<int64_t>(channels) + 1) {
      return c.Invalid(absl::StrCat(roles[i], " '", c.In(i).name, "' has ", c.In(i).shape[0],
                                    " entries; num_channels ", channels, " reads ", channels + 1));
    }
  }
  if (c.Out().shape[0] > channels) {
    return c.Invalid(absl::StrCat("output '", c.Out().name, "' has ", c.Out().shape[0],
                                  " entries, more than num_channels ", channels));
  }
  return ValidateChannelTables(c, channels);
}

// SignalFilterBankSquareRoot: uint64 [n] to uint32 [n], each rounded square root shifted right
// by the int32 scalar scale_bits.
absl::Status ValidateFilterBankSquareRoot(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  const Tensor& bits = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kUint64}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(bits, "scale_bits", {DataType::kInt32}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  RETURN_IF_ERROR(c.Rank(bits, "scale_bits", 0, 0));
  if (bits.is_constant && bits.data.size() == 4) {
    int32_t v;
    std::memcpy(&v, bits.data.data(), 4);
    RETURN_IF_ERROR(ShiftWithin(c, "scale_bits", v, 31));
  }
  return c.OutputShape(in.shape);
}

// SignalFilterBankLog: uint32 [n] to int16 [n].
absl::Status ValidateFilterBankLog(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kInt16}, kTypes));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  RETURN_IF_ERROR(ShiftWithin(c, "input_correction_bits",
                              c.op().opts<SignalOptions>().input_correction_bits, 31));
  return c.OutputShape(in.shape);
}

// The most entries SignalPCAN's gain table is read at: a noise estimate with its top bit set
// reads 4 x 32 - 6 + 2.
constexpr int64_t kPcanGainLutEntries = 125;

// SignalPCAN: uint32 [n] and its uint32 noise estimate [n] to uint32 [n] through the int16 gain
// table.
absl::Status ValidatePcan(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 3));
  const Tensor& in = c.In(0);
  const Tensor& noise = c.In(1);
  const Tensor& lut = c.In(2);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(noise, "noise_estimate", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(lut, "gain_lut", {DataType::kInt16}, kTypes));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kUint32}, kTypes));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  RETURN_IF_ERROR(c.Rank(noise, "noise_estimate", 1, 1));
  RETURN_IF_ERROR(c.Rank(lut, "gain_lut", 1, 1));
  if (noise.shape != in.shape) {
    return c.Invalid(absl::StrCat("noise_estimate '", noise.name, "' has shape ",
                                  ShapeString(noise.shape), " but input '", in.name, "' has ",
                                  ShapeString(in.shape)));
  }
  if (lut.shape[0] < kPcanGainLutEntries) {
    return c.Invalid(absl::StrCat("gain_lut '", lut.name, "' has ", lut.shape[0],
                                  " entries; a noise estimate of 2^31 or more reads entry ",
                                  kPcanGainLutEntries - 1));
  }
  RETURN_IF_ERROR(ShiftWithin(c, "snr_shift", c.op().opts<SignalOptions>().snr_shift, 63));
  return c.OutputShape(in.shape);
}

// The most channels one SignalFilterBankSpectralSubtraction keeps a noise estimate of: it lives
// in the runtime's persistent memory (128 KiB on the firmware for everything a load builds), and
// 64 KiB leaves the rest to the model, as SignalDelay's history limit does.
constexpr int64_t kMaxSpectralSubtractionChannels = 16384;

// SignalFilterBankSpectralSubtraction: uint32 [num_channels] to uint32 [num_channels] and its
// noise estimate uint32 [num_channels]. TFLite Micro's Eval walks num_channels entries of the
// input and output and copies the noise estimate tensor's size out of a num_channels buffer, so
// any other size reads or writes past one of them.
absl::Status ValidateSpectralSubtraction(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1, 2));
  const Tensor* operands[] = {&c.In(0), &c.Out(0), &c.Out(1)};
  const char* roles[] = {"input", "output", "noise_estimate output"};
  for (size_t i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(c.TypeIn(*operands[i], roles[i], {DataType::kUint32}, kTypes));
    RETURN_IF_ERROR(c.Rank(*operands[i], roles[i], 1, 1));
  }
  const SignalOptions& o = c.op().opts<SignalOptions>();
  if (o.num_channels < 1) {
    return c.Invalid(absl::StrCat("num_channels ", o.num_channels, " is not positive"));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (operands[i]->shape[0] != o.num_channels) {
      return c.Invalid(absl::StrCat(roles[i], " '", operands[i]->name, "' has ",
                                    operands[i]->shape[0], " entries; num_channels is ",
                                    o.num_channels));
    }
  }
  if (o.num_channels > kMaxSpectralSubtractionChannels) {
    return c.Unsupported(absl::StrCat(
        "num_channels ", o.num_channels, " keeps a noise estimate larger than boardlab's ",
        kMaxSpectralSubtractionChannels, " channels (64 KiB of persistent memory)"));
  }
  RETURN_IF_ERROR(ShiftWithin(c, "smoothing_bits", o.smoothing_bits, 31));
  return ShiftWithin(c, "spectral_subtraction_bits", o.spectral_subtraction_bits, 63);
}

}  // namespace

absl::Status ValidateSignalFilterBankOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kSignalEnergy:
      return ValidateEnergy(c);
    case OpType::kSignalFilterBank:
      return ValidateFilterBank(c);
    case OpType::kSignalFilterBankSquareRoot:
      return ValidateFilterBankSquareRoot(c);
    case OpType::kSignalFilterBankLog:
      return ValidateFilterBankLog(c);
    case OpType::kSignalPcan:
      return ValidatePcan(c);
    case OpType::kSignalSpectralSubtraction:
      return ValidateSpectralSubtraction(c);
    default:
      return c.Invalid("not a filter bank stage op");
  }
}

}  // namespace boardlab::compiler
