// The filter bank stage of TFLite Micro's signal library (reference/signal_filter_bank.h): power
// spectrum, mel filter bank, square root, log and per-channel gain control, custom ops of audio
// front ends. Args (tensors without quantization: their zero points and scales are unused):
//   SIGNAL_ENERGY                  input 0, start_index Int 1, end_index Int 2, zp 3, scales 4,
//                                  output 5
//   SIGNAL_FILTER_BANK             input 0, weights 1, unweights 2, channel_frequency_starts 3,
//                                  channel_weight_starts 4, channel_widths 5, num_channels Int 6,
//                                  zp 7, scales 8, output 9
//   SIGNAL_FILTER_BANK_SQUARE_ROOT input 0, scale_bits 1, zp 2, scales 3, output 4
//   SIGNAL_FILTER_BANK_LOG         input 0, input_correction_bits Int 1, output_scale Int 2,
//                                  zp 3, scales 4, output 5
//   SIGNAL_PCAN                    input 0, noise_estimate 1, gain_lut 2, snr_shift Int 3, zp 4,
//                                  scales 5, output 6

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/signal_filter_bank.h"

namespace boardlab::runtime::kernels {
namespace {

bool IsVector(const TensorView& t) { return t.rank == 1 && t.dims[0] > 0; }

// The most entries SIGNAL_PCAN's gain table is read at (a noise estimate of 2^31 or more).
constexpr int32_t kPcanGainLutEntries = 125;

}  // namespace

Error SignalEnergyPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_energy";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kUInt32, &out));
  auto* d = static_cast<OpDataSignalEnergy*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->start));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->end));
  RT_CHECK_OR_RETURN_ERROR(IsVector(*in) && IsVector(*out), kInvalidProgram,
                           "%s: input int16 [2n], output uint32 [n]", op);
  d->bins = out->dims[0];
  RT_CHECK_OR_RETURN_ERROR(
      d->start >= 0 && d->start <= d->end && d->end <= d->bins && d->end <= in->dims[0] / 2,
      kInvalidProgram, "%s: bins [%d, %d) outside the tensors", op, static_cast<int>(d->start),
      static_cast<int>(d->end));
  return Error::kOk;
}

Error SignalEnergyEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalEnergy*>(ctx.op_data);
  return energy_s16(args[0]->tensor->As<const int16_t>(), d->start, d->end, d->bins,
                    args[5]->tensor->As<uint32_t>());
}

Error SignalFilterBankPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_filter_bank";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 10));
  TensorView *in, *out, *table;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kUInt32, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 9, ScalarType::kUInt64, &out));
  auto* d = static_cast<OpDataSignalFilterBank*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 6, &d->channels));
  RT_CHECK_OR_RETURN_ERROR(
      IsVector(*in) && IsVector(*out) && d->channels >= 1 && out->dims[0] <= d->channels,
      kInvalidProgram, "%s: input uint32 [bins], output uint64 [<= %d]", op,
      static_cast<int>(d->channels));
  for (size_t i = 1; i <= 5; ++i) {
    RT_RETURN_IF_ERROR(TensorArg(op, args, i, ScalarType::kShort, &table));
    RT_CHECK_OR_RETURN_ERROR(IsVector(*table) && (i < 3 || table->dims[0] > d->channels),
                             kInvalidProgram, "%s: argument %d must be int16 [%s]", op,
                             static_cast<int>(i), i < 3 ? "n" : "num_channels + 1");
  }
  d->outputs = out->dims[0];
  return Error::kOk;
}

Error SignalFilterBankEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalFilterBank*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  FilterBankTables t;
  t.weights = args[1]->tensor->As<const int16_t>();
  t.unweights = args[2]->tensor->As<const int16_t>();
  t.weight_count = args[1]->tensor->dims[0] < args[2]->tensor->dims[0] ? args[1]->tensor->dims[0]
                                                                       : args[2]->tensor->dims[0];
  t.frequency_starts = args[3]->tensor->As<const int16_t>();
  t.weight_starts = args[4]->tensor->As<const int16_t>();
  t.widths = args[5]->tensor->As<const int16_t>();
  t.channels = d->channels;
  return filter_bank_u32(in.As<const uint32_t>(), in.dims[0], t, d->outputs,
                         args[9]->tensor->As<uint64_t>());
}

Error SignalFilterBankSquareRootPrepare(KernelContext&, Args args) {
  constexpr const char* op = "signal_filter_bank_square_root";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *bits, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kUInt64, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kInt, &bits));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kUInt32, &out));
  RT_CHECK_OR_RETURN_ERROR(
      IsVector(*in) && bits->NumElements() == 1 && out->rank == 1 && out->dims[0] == in->dims[0],
      kInvalidProgram,
      "%s: input uint64 [n], scale_bits int32 scalar, "
      "output uint32 [n]",
      op);
  return Error::kOk;
}

// scale_bits may be a run-time input: filter_bank_sqrt_u64 refuses a shift outside 0..31.
Error SignalFilterBankSquareRootEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  return filter_bank_sqrt_u64(in.As<const uint64_t>(), in.dims[0], *args[1]->tensor->As<int32_t>(),
                              args[4]->tensor->As<uint32_t>());
}

Error SignalFilterBankLogPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_filter_bank_log";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kUInt32, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kShort, &out));
  auto* d = static_cast<OpDataSignalFilterBankLog*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->correction_bits));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->output_scale));
  RT_CHECK_OR_RETURN_ERROR(IsVector(*in) && out->rank == 1 && out->dims[0] == in->dims[0],
                           kInvalidProgram, "%s: input uint32 [n], output int16 [n]", op);
  RT_CHECK_OR_RETURN_ERROR(d->correction_bits >= 0 && d->correction_bits <= 31, kInvalidProgram,
                           "%s: input_correction_bits %d is outside 0..31", op,
                           static_cast<int>(d->correction_bits));
  return Error::kOk;
}

Error SignalFilterBankLogEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalFilterBankLog*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  return filter_bank_log_u32(in.As<const uint32_t>(), in.dims[0], d->correction_bits,
                             d->output_scale, args[5]->tensor->As<int16_t>());
}

Error SignalPcanPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_pcan";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 7));
  TensorView *in, *noise, *lut, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kUInt32, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kUInt32, &noise));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 2, ScalarType::kShort, &lut));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 6, ScalarType::kUInt32, &out));
  auto* d = static_cast<OpDataSignalPcan*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->snr_shift));
  RT_CHECK_OR_RETURN_ERROR(IsVector(*in) && SameTypeAndShape(*in, *noise) &&
                               SameTypeAndShape(*in, *out) && lut->rank == 1 &&
                               lut->dims[0] >= kPcanGainLutEntries,
                           kInvalidProgram,
                           "%s: input, noise_estimate and output uint32 [n], gain_lut int16 "
                           "[>= %d]",
                           op, static_cast<int>(kPcanGainLutEntries));
  RT_CHECK_OR_RETURN_ERROR(d->snr_shift >= 0 && d->snr_shift <= 63, kInvalidProgram,
                           "%s: snr_shift %d is outside 0..63", op, static_cast<int>(d->snr_shift));
  return Error::kOk;
}

Error SignalPcanEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalPcan*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  return pcan_u32(in.As<const uint32_t>(), args[1]->tensor->As<const uint32_t>(),
                  args[2]->tensor->As<const int16_t>(), in.dims[0], d->snr_shift,
                  args[6]->tensor->As<uint32_t>());
}

}  // namespace boardlab::runtime::kernels
