#include "runtime/kernels/reference/lstm.h"

#include <limits>
#include <type_traits>

#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

int16_t Clamp16(int32_t x) {
  return static_cast<int16_t>(x < -32768 ? -32768 : (x > 32767 ? 32767 : x));
}

// The FC accumulator of each form is its bias type.
template <typename T>
struct LstmForm;
template <>
struct LstmForm<int8_t> {
  using Bias = int32_t;
};
template <>
struct LstmForm<int16_t> {
  using Bias = int64_t;
};

int32_t Requantize(int32_t acc, int32_t multiplier, int32_t shift) {
  return MultiplyByQuantizedMultiplier(acc, multiplier, shift);
}
int32_t Requantize(int64_t acc, int32_t multiplier, int32_t shift) {
  return MultiplyByQuantizedMultiplier64(acc, multiplier, shift);
}

// One fully connected layer of a gate for one row: clamp16(MBQM(dot + bias)).
template <typename Acc, typename T>
void GateFc(const int8_t* weights, int32_t weights_offset, const Acc* bias, const T* x,
            int32_t x_offset, int32_t depth, int32_t rows, int32_t multiplier, int32_t shift,
            int16_t* out) {
  using Wrapping = std::make_unsigned_t<Acc>;  // wraps like the reference's sum, without UB
  for (int32_t c = 0; c < rows; ++c) {
    const int8_t* w = weights + static_cast<int64_t>(c) * depth;
    Wrapping acc = 0;
    for (int32_t d = 0; d < depth; ++d) {
      acc += static_cast<Wrapping>(static_cast<Acc>((w[d] + weights_offset) * (x[d] + x_offset)));
    }
    if (bias != nullptr) acc += static_cast<Wrapping>(bias[c]);
    out[c] = Clamp16(Requantize(static_cast<Acc>(acc), multiplier, shift));
  }
}

// mul16 / the hidden-state multiplication: MBQM(a * b) + offset, clamped to [lo, hi].
int32_t Mul(int16_t a, int16_t b, int32_t multiplier, int32_t shift, int32_t offset, int32_t lo,
            int32_t hi) {
  const int32_t v = offset + MultiplyByQuantizedMultiplier(int32_t{a} * b, multiplier, shift);
  return v < lo ? lo : (v > hi ? hi : v);
}

// Pointers of one step's row.
template <typename T>
struct Row {
  const T* x;
  T* hidden;
  int16_t* cell;
  T* out;
};

struct Buffers {
  int16_t *forget, *input, *cell_gate, *tmp;
};

// CalculateLstmGate for one row: both FCs, their saturating sum, the activation.
template <typename T>
void Gate(const LstmParams& p, const LstmGate& g, const Row<T>& r, bool tanh, int16_t* gate,
          int16_t* tmp) {
  using Bias = typename LstmForm<T>::Bias;
  GateFc(g.input_weights, g.input_weights_offset, static_cast<const Bias*>(g.bias), r.x,
         p.input_offset, p.input_size, p.state_size, g.input_multiplier, g.input_shift, gate);
  GateFc(g.recurrent_weights, g.recurrent_weights_offset, static_cast<const Bias*>(nullptr),
         r.hidden, p.hidden_offset, p.state_size, p.state_size, g.recurrent_multiplier,
         g.recurrent_shift, tmp);
  for (int32_t c = 0; c < p.state_size; ++c) {
    const int16_t sum = Clamp16(int32_t{gate[c]} + tmp[c]);
    gate[c] = tanh ? Tanh16(sum, 0, 0) : Sigmoid16(sum);  // tanh: Q3.12 in, no shift
  }
}

template <typename T>
void Step(const LstmParams& p, const Row<T>& r, const Buffers& b) {
  Gate(p, p.forget, r, false, b.forget, b.tmp);
  Gate(p, p.input, r, false, b.input, b.tmp);
  Gate(p, p.cell, r, true, b.cell_gate, b.tmp);
  for (int32_t c = 0; c < p.state_size; ++c) {
    const int32_t kept = Mul(b.forget[c], r.cell[c], p.forget_cell_multiplier, p.forget_cell_shift,
                             0, -32768, 32767);
    const int32_t added = Mul(b.input[c], b.cell_gate[c], p.input_cell_multiplier,
                              p.input_cell_shift, 0, -32768, 32767);
    int16_t cell = Clamp16(kept + added);
    if (p.clip_cell) {
      const int16_t hi = p.cell_clip;
      const int16_t lo = static_cast<int16_t>(-p.cell_clip);
      cell = cell > hi ? hi : (cell < lo ? lo : cell);  // std::max(std::min(hi, v), lo)
    }
    r.cell[c] = cell;
  }
  int16_t* output_gate = b.input;  // the input gate is used up
  Gate(p, p.output, r, false, output_gate, b.tmp);
  // Tanh of the cell state: its Q format comes from the cell scale's power of two.
  int32_t shift = 15 + p.cell_scale_power - 3;
  int32_t multiplier = 0;
  if (shift < 0) {
    shift = -shift;
    multiplier = 3;
  }
  for (int32_t c = 0; c < p.state_size; ++c) {
    const int16_t t = Tanh16(r.cell[c], multiplier, shift);
    r.hidden[c] = static_cast<T>(Mul(t, output_gate[c], p.hidden_multiplier, p.hidden_shift,
                                     p.hidden_zero_point, std::numeric_limits<T>::min(),
                                     std::numeric_limits<T>::max()));
  }
  for (int32_t c = 0; c < p.state_size; ++c) r.out[c] = r.hidden[c];
}

}  // namespace

int16_t Sigmoid16(int16_t x) { return Logistic16Value(x, Sigmoid16Params{}); }

int16_t Tanh16(int16_t x, int32_t input_multiplier, int32_t input_left_shift) {
  return Tanh16Value(x, Sigmoid16Params{input_multiplier, input_left_shift});
}

size_t lstm_get_buffer_size(const LstmParams& params) {
  return 4 * static_cast<size_t>(params.state_size) * sizeof(int16_t);
}

namespace {

template <typename T>
Error RunLstm(const char* name, const LstmParams& p, const T* input, T* hidden, int16_t* cell,
              T* output, void* scratch, size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && hidden != nullptr && cell != nullptr &&
                               output != nullptr && scratch != nullptr &&
                               scratch_bytes >= lstm_get_buffer_size(p),
                           kInvalidArgument, "%s: null tensor or too little scratch", name);
  RT_CHECK_OR_RETURN_ERROR(p.batch > 0 && p.time > 0 && p.input_size > 0 && p.state_size > 0,
                           kInvalidArgument, "%s: empty shape", name);
  int16_t* s = static_cast<int16_t*>(scratch);
  const Buffers buffers{s, s + p.state_size, s + 2 * p.state_size, s + 3 * p.state_size};
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t t = 0; t < p.time; ++t) {
      const int64_t step = p.time_major ? static_cast<int64_t>(t) * p.batch + b
                                        : static_cast<int64_t>(b) * p.time + t;
      const Row<T> row{input + step * p.input_size, hidden + static_cast<int64_t>(b) * p.state_size,
                       cell + static_cast<int64_t>(b) * p.state_size, output + step * p.state_size};
      Step(p, row, buffers);
    }
  }
  return Error::kOk;
}

}  // namespace

Error lstm_s8(const LstmParams& p, const int8_t* input, int8_t* hidden, int16_t* cell,
              int8_t* output, void* scratch, size_t scratch_bytes) {
  return RunLstm("lstm_s8", p, input, hidden, cell, output, scratch, scratch_bytes);
}

Error lstm_s16(const LstmParams& p, const int16_t* input, int16_t* hidden, int16_t* cell,
               int16_t* output, void* scratch, size_t scratch_bytes) {
  return RunLstm("lstm_s16", p, input, hidden, cell, output, scratch, scratch_bytes);
}

}  // namespace boardlab::runtime::kernels
