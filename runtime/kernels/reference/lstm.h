#pragma once

// UNIDIRECTIONAL_SEQUENCE_LSTM in TFLite Micro's two integer forms, bit-exact with its integer
// LSTM (lstm_eval.h EvalLstm, lstm_eval_common.cc): lstm_s8 with int8 activations and int32
// biases (EvalLstm<int8_t, int8_t, int16_t, int32_t>), lstm_s16 the 16x8 form with int16
// activations and int64 biases (EvalLstm<int16_t, int8_t, int16_t, int64_t>); both take int8
// weights and an int16 cell state, and run the standard LSTM without peephole, projection, layer
// norm or CIFG. Per time step and batch row, in TFLite Micro's order:
//
//   gate(x, h) = act(sat16(FC_in(x) + FC_rec(h)))    for the forget, input, cell gates
//     FC_in(x)[c]  = clamp16(MBQM(sum_d (w[c,d] + w_off) * (x[d] + x_off) + bias[c], m_in, s_in))
//     FC_rec(h)[c] = clamp16(MBQM(sum_d (r[c,d] + r_off) * (h[d] + h_off), m_rec, s_rec))
//     (the gate's FC outputs are Q3.12: multipliers = input or hidden scale x weight scale /
//     2^-12); act = the int16 sigmoid (Q3.12 -> Q0.15), or for the cell gate the int16 tanh;
//     both from TFLite's 256-entry sigmoid table with linear interpolation
//   cell = sat16(mul16(forget, cell) + mul16(input, cell_gate)), then clipped to
//     +-quantized_clip when the model asks for a cell clip
//   output gate as above, after the cell update
//   hidden = clamp_T(mul(tanh16(cell), output) + hidden_zp), copied to the step's output
//
// where mul16(a, b) = clamp16(MBQM(a * b, m, s)) with TFLite's ArithmeticParams of
// CreateInterGateMulParams. The two forms differ only in the FCs' accumulator, which is the bias
// type: lstm_s8 sums in int32 (wrapping like the reference) and requantizes with the 32-bit
// MBQM; lstm_s16 sums in int64 and requantizes with TFLite's int64 MultiplyByQuantizedMultiplier
// (the multiplier rounded to 16 bits first, so its shifts must stay below 8); and in the clamp of
// the hidden state (int8 or int16). Rows are independent, so time-major and batch-major sequences
// differ only in where a step's input and output sit.

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// One gate's two fully connected layers.
struct LstmGate {
  const int8_t* input_weights = nullptr;      // [state, input_size]
  const int8_t* recurrent_weights = nullptr;  // [state, state]
  // [state], on the input FC: int32_t for lstm_s8, int64_t for lstm_s16 (the accumulator type).
  const void* bias = nullptr;
  int32_t input_weights_offset = 0;  // -zero point
  int32_t recurrent_weights_offset = 0;
  int32_t input_multiplier = 0, input_shift = 0;
  int32_t recurrent_multiplier = 0, recurrent_shift = 0;
};

struct LstmParams {
  LstmGate forget, input, cell, output;
  int32_t input_offset = 0;   // -input zero point
  int32_t hidden_offset = 0;  // -hidden state zero point (input of the recurrent FCs)
  int32_t hidden_zero_point = 0;
  // The element-wise multiplications between gates.
  int32_t forget_cell_multiplier = 0, forget_cell_shift = 0;  // 2^-15 x cell / cell
  int32_t input_cell_multiplier = 0, input_cell_shift = 0;    // 2^-15 x 2^-15 / cell
  int32_t hidden_multiplier = 0, hidden_shift = 0;            // 2^-15 x 2^-15 / hidden
  int32_t cell_scale_power = -11;  // cell state scale = 2^cell_scale_power
  bool clip_cell = false;
  int16_t cell_clip = 0;  // quantized; applied when clip_cell
  bool time_major = false;
  int32_t batch = 1, time = 1, input_size = 1, state_size = 1;
};

/// Scratch bytes lstm_s8 and lstm_s16 need: four int16 vectors of one step's state.
size_t lstm_get_buffer_size(const LstmParams& params);

/// Runs the whole sequence: `input` [time, batch, input] (time_major) or [batch, time, input],
/// `output` in the same layout with the state size last; `hidden` [batch, state] (the activation
/// type) and `cell` [batch, state] int16 hold the state before and after. `scratch` must hold
/// lstm_get_buffer_size() bytes, 2-byte aligned.
[[nodiscard]] Error lstm_s8(const LstmParams& params, const int8_t* input, int8_t* hidden,
                            int16_t* cell, int8_t* output, void* scratch, size_t scratch_bytes);
/// The 16x8 form: int16 activations, int64 biases; its FC shifts must lie in [-31, 7].
[[nodiscard]] Error lstm_s16(const LstmParams& params, const int16_t* input, int16_t* hidden,
                             int16_t* cell, int16_t* output, void* scratch, size_t scratch_bytes);

/// TFLite's int16 sigmoid of a Q3.12 input (Q0.15 result) and int16 tanh with its input
/// multiplier and left shift (reference_integer_ops::Logistic / Tanh): the 16x8 LOGISTIC and
/// TANH elements of activations_s16.h with the LSTM's input formats.
int16_t Sigmoid16(int16_t x);
int16_t Tanh16(int16_t x, int32_t input_multiplier, int32_t input_left_shift);

}  // namespace boardlab::runtime::kernels
