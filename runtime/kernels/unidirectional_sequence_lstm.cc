// UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite Micro's integer LSTM in int8 or 16x8 (reference/lstm.h).
// Args: the 24 TFLite inputs 0-23 (input int8, or int16 for 16x8; weights 1-8 int8; peephole
// 9-11, projection 16-17 and layer norm 20-23 Null; biases 12-15 int32, int64 in 16x8; hidden
// state 18 of the input's type and cell state 19 int16, variable tensors updated in place), then
// Ints: input_zp 24, hidden_zp 25, per gate (input, forget, cell, output) from 26 + 6 * gate:
// input FC multiplier and shift, recurrent FC multiplier and shift, input and recurrent weight
// zero points; forget x cell 50-51, input x cell gate 52-53 and output x tanh(cell) 54-55
// multipliers and shifts; cell_scale_power 56, quantized cell clip 57; Bools clip_cell 58 and
// time_major 59; output 60 (the input's type and layout, state size last).

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/lstm.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr size_t kArgs = 61;
constexpr size_t kHidden = 18, kCell = 19, kFirstParam = 24, kOutput = 60;

bool ShiftOk(int32_t shift) { return shift >= -31 && shift <= 31; }

// The 16x8 FCs requantize with TFLite's int64 MBQM, which takes shifts below 8 only.
bool FcShiftOk(int32_t shift, bool int16) { return ShiftOk(shift) && (!int16 || shift <= 7); }

Error ReadGate(const char* op, Args args, size_t first, bool int16, LstmGate& g) {
  int32_t* fields[] = {&g.input_multiplier, &g.input_shift,          &g.recurrent_multiplier,
                       &g.recurrent_shift,  &g.input_weights_offset, &g.recurrent_weights_offset};
  for (size_t i = 0; i < 6; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, first + i, fields[i]));
  RT_CHECK_OR_RETURN_ERROR(FcShiftOk(g.input_shift, int16) && FcShiftOk(g.recurrent_shift, int16) &&
                               g.input_weights_offset >= -128 && g.input_weights_offset <= 127 &&
                               g.recurrent_weights_offset >= -128 &&
                               g.recurrent_weights_offset <= 127,
                           kInvalidProgram, "%s: bad gate shift or weight zero point", op);
  // The arguments carry zero points; the kernel adds offsets (-zero point).
  g.input_weights_offset = -g.input_weights_offset;
  g.recurrent_weights_offset = -g.recurrent_weights_offset;
  return Error::kOk;
}

// Zero points of the activations: inside int8, or 0 in 16x8 (symmetric int16, as TFLite Micro's
// int16 kernels assume).
bool ActivationZeroPointOk(int32_t zp, bool int16) {
  return int16 ? zp == 0 : zp >= -128 && zp <= 127;
}

Error ReadParams(const char* op, Args args, bool int16, LstmParams& p) {
  int32_t input_zp = 0, clip = 0;
  RT_RETURN_IF_ERROR(IntArg(op, args, kFirstParam, &input_zp));
  RT_RETURN_IF_ERROR(IntArg(op, args, kFirstParam + 1, &p.hidden_zero_point));
  LstmGate* gates[] = {&p.input, &p.forget, &p.cell, &p.output};
  for (size_t k = 0; k < 4; ++k) {
    RT_RETURN_IF_ERROR(ReadGate(op, args, kFirstParam + 2 + 6 * k, int16, *gates[k]));
  }
  int32_t* fields[] = {&p.forget_cell_multiplier, &p.forget_cell_shift,
                       &p.input_cell_multiplier,  &p.input_cell_shift,
                       &p.hidden_multiplier,      &p.hidden_shift,
                       &p.cell_scale_power,       &clip};
  for (size_t i = 0; i < 8; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, 50 + i, fields[i]));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 58, &p.clip_cell));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 59, &p.time_major));
  RT_CHECK_OR_RETURN_ERROR(
      ActivationZeroPointOk(input_zp, int16) && ActivationZeroPointOk(p.hidden_zero_point, int16) &&
          ShiftOk(p.forget_cell_shift) && ShiftOk(p.input_cell_shift) && ShiftOk(p.hidden_shift) &&
          p.cell_scale_power <= 0 && p.cell_scale_power >= -31 && clip >= 0 && clip <= 32767,
      kInvalidProgram, "%s: bad zero point, shift, cell scale power or clip", op);
  p.input_offset = -input_zp;
  p.hidden_offset = -p.hidden_zero_point;
  p.cell_clip = static_cast<int16_t>(clip);
  return Error::kOk;
}

bool Is2D(const TensorView* t, int32_t rows, int32_t cols) {
  return t->rank == 2 && t->dims[0] == rows && t->dims[1] == cols;
}

// The 24 TFLite inputs: the used ones typed and shaped, the variants' slots Null.
Error CheckOperands(const char* op, Args args, bool int16, const LstmParams& p) {
  constexpr size_t kVariantSlots[] = {9, 10, 11, 16, 17, 20, 21, 22, 23};
  for (size_t i : kVariantSlots) {
    RT_CHECK_OR_RETURN_ERROR(args[i] != nullptr && args[i]->tag == ValueTag::kNone, kInvalidProgram,
                             "%s: argument %d (an LSTM variant's) must be Null", op,
                             static_cast<int>(i));
  }
  for (size_t i = 1; i <= 8; ++i) {
    TensorView* w;
    RT_RETURN_IF_ERROR(TensorArg(op, args, i, ScalarType::kChar, &w));
    RT_CHECK_OR_RETURN_ERROR(Is2D(w, p.state_size, i <= 4 ? p.input_size : p.state_size),
                             kInvalidProgram, "%s: weights %d have the wrong shape", op,
                             static_cast<int>(i));
  }
  for (size_t i = 12; i <= 15; ++i) {
    TensorView* bias;
    RT_RETURN_IF_ERROR(TensorArg(op, args, i, int16 ? ScalarType::kLong : ScalarType::kInt, &bias));
    RT_CHECK_OR_RETURN_ERROR(bias->rank == 1 && bias->dims[0] == p.state_size, kInvalidProgram,
                             "%s: bias %d has the wrong shape", op, static_cast<int>(i));
  }
  TensorView *cell, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, kCell, ScalarType::kShort, &cell));
  RT_RETURN_IF_ERROR(TensorArg(op, args, kOutput, QuantizedTypeOf(args, 0), &out));
  const int32_t outer = p.time_major ? p.time : p.batch;
  const int32_t inner = p.time_major ? p.batch : p.time;
  RT_CHECK_OR_RETURN_ERROR(cell->NumElements() == int64_t{p.batch} * p.state_size &&
                               out->rank == 3 && out->dims[0] == outer && out->dims[1] == inner &&
                               out->dims[2] == p.state_size,
                           kInvalidProgram, "%s: cell state or output shape does not match", op);
  return Error::kOk;
}

}  // namespace

Error UnidirectionalSequenceLstmPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "unidirectional_sequence_lstm";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, kArgs));
  auto* d = static_cast<OpDataLstm*>(ctx.op_data);
  LstmParams& p = d->params;
  const ScalarType type = QuantizedTypeOf(args, 0);
  d->int16 = type == ScalarType::kShort;
  RT_RETURN_IF_ERROR(ReadParams(op, args, d->int16, p));
  TensorView *in, *hidden;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, kHidden, type, &hidden));
  RT_CHECK_OR_RETURN_ERROR(in->rank == 3 && hidden->rank == 2, kInvalidProgram,
                           "%s: input must be 3-D and the hidden state 2-D", op);
  p.time = p.time_major ? in->dims[0] : in->dims[1];
  p.batch = p.time_major ? in->dims[1] : in->dims[0];
  p.input_size = in->dims[2];
  p.state_size = hidden->dims[1];
  RT_CHECK_OR_RETURN_ERROR(hidden->dims[0] == p.batch && p.time > 0 && p.batch > 0 &&
                               p.input_size > 0 && p.state_size > 0,
                           kInvalidProgram, "%s: empty sequence or hidden state shape mismatch",
                           op);
  RT_RETURN_IF_ERROR(CheckOperands(op, args, d->int16, p));
  // The gate buffers come from the temp pool at every Eval: a pool too small is a load error.
  d->scratch_bytes = lstm_get_buffer_size(p);
  RT_CHECK_OR_RETURN_ERROR(
      ctx.temp != nullptr && ctx.temp->size() >= d->scratch_bytes + 16, kMemoryAllocationFailed,
      "%s: needs %lu bytes of temp memory for a state of %d, the pool has %lu", op,
      static_cast<unsigned long>(d->scratch_bytes), static_cast<int>(p.state_size),
      static_cast<unsigned long>(ctx.temp == nullptr ? 0 : ctx.temp->size()));
  return Error::kOk;
}

Error UnidirectionalSequenceLstmEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataLstm*>(ctx.op_data);
  LstmParams p = d->params;
  LstmGate* gates[] = {&p.input, &p.forget, &p.cell, &p.output};
  for (size_t k = 0; k < 4; ++k) {
    gates[k]->input_weights = args[1 + k]->tensor->As<const int8_t>();
    gates[k]->recurrent_weights = args[5 + k]->tensor->As<const int8_t>();
    gates[k]->bias = args[12 + k]->tensor->data;
  }
  void* scratch = ctx.temp->Allocate(d->scratch_bytes, 16);
  const size_t scratch_bytes = scratch != nullptr ? d->scratch_bytes : 0;
  if (d->int16) {
    return lstm_s16(p, args[0]->tensor->As<const int16_t>(), args[kHidden]->tensor->As<int16_t>(),
                    args[kCell]->tensor->As<int16_t>(), args[kOutput]->tensor->As<int16_t>(),
                    scratch, scratch_bytes);
  }
  return lstm_s8(p, args[0]->tensor->As<const int8_t>(), args[kHidden]->tensor->As<int8_t>(),
                 args[kCell]->tensor->As<int16_t>(), args[kOutput]->tensor->As<int8_t>(), scratch,
                 scratch_bytes);
}

}  // namespace boardlab::runtime::kernels
