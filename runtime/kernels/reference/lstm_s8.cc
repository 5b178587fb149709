#include "runtime/kernels/reference/lstm_s8.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// sigmoid(i / 24) in unsigned 0.16 fixed point, i = 0..255: the table TFLite's int16 LOGISTIC
// and TANH interpolate (tanh(x) = 2 sigmoid(2x) - 1). Its entries are within one unit of
// 65536 / (1 + exp(-i / 24)) (tests/runtime/lstm_kernel_test.cc checks that).
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

int16_t Clamp16(int32_t x) {
  return static_cast<int16_t>(x < -32768 ? -32768 : (x > 32767 ? 32767 : x));
}

uint32_t Abs32(int32_t x) {
  return x < 0 ? static_cast<uint32_t>(0) - static_cast<uint32_t>(x) : static_cast<uint32_t>(x);
}

// One fully connected layer of a gate for one row: clamp16(MBQM(dot + bias)).
void GateFc(const int8_t* weights, int32_t weights_offset, const int32_t* bias, const int8_t* x,
            int32_t x_offset, int32_t depth, int32_t rows, int32_t multiplier, int32_t shift,
            int16_t* out) {
  for (int32_t c = 0; c < rows; ++c) {
    const int8_t* w = weights + static_cast<int64_t>(c) * depth;
    uint32_t acc = 0;  // wraps like the reference's int32 sum
    for (int32_t d = 0; d < depth; ++d) {
      acc += static_cast<uint32_t>((w[d] + weights_offset) * (x[d] + x_offset));
    }
    if (bias != nullptr) acc += static_cast<uint32_t>(bias[c]);
    out[c] = Clamp16(MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), multiplier, shift));
  }
}

// mul16 / the hidden-state multiplication: MBQM(a * b) + offset, clamped to [lo, hi].
int32_t Mul(int16_t a, int16_t b, int32_t multiplier, int32_t shift, int32_t offset, int32_t lo,
            int32_t hi) {
  const int32_t v = offset + MultiplyByQuantizedMultiplier(int32_t{a} * b, multiplier, shift);
  return v < lo ? lo : (v > hi ? hi : v);
}

// Pointers of one step's row.
struct Row {
  const int8_t* x;
  int8_t* hidden;
  int16_t* cell;
  int8_t* out;
};

struct Buffers {
  int16_t *forget, *input, *cell_gate, *tmp;
};

// CalculateLstmGate for one row: both FCs, their saturating sum, the activation.
void Gate(const LstmParams& p, const LstmGate& g, const Row& r, bool tanh, int16_t* gate,
          int16_t* tmp) {
  GateFc(g.input_weights, g.input_weights_offset, g.bias, r.x, p.input_offset, p.input_size,
         p.state_size, g.input_multiplier, g.input_shift, gate);
  GateFc(g.recurrent_weights, g.recurrent_weights_offset, nullptr, r.hidden, p.hidden_offset,
         p.state_size, p.state_size, g.recurrent_multiplier, g.recurrent_shift, tmp);
  for (int32_t c = 0; c < p.state_size; ++c) {
    const int16_t sum = Clamp16(int32_t{gate[c]} + tmp[c]);
    gate[c] = tanh ? Tanh16(sum, 0, 0) : Sigmoid16(sum);  // tanh: Q3.12 in, no shift
  }
}

void Step(const LstmParams& p, const Row& r, const Buffers& b) {
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
    r.hidden[c] = static_cast<int8_t>(Mul(t, output_gate[c], p.hidden_multiplier, p.hidden_shift,
                                          p.hidden_zero_point, -128, 127));
  }
  for (int32_t c = 0; c < p.state_size; ++c) r.out[c] = r.hidden[c];
}

}  // namespace

int16_t Sigmoid16(int16_t x) {
  const int32_t input = x * 3;  // Q3.12 scaled by 3/4 so that the table spans [-10.7, 10.7]
  const uint32_t abs_input = Abs32(input);
  const uint32_t uh = abs_input >> 9;
  uint32_t result;
  if (uh >= 255) {
    result = 0x7FFFu << 10;
  } else {
    const uint32_t ua = kSigmoidTable[uh], ub = kSigmoidTable[uh + 1];
    result = (ua << 9) + (abs_input & 0x1FF) * (ub - ua);
  }
  result = input >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1;
  return static_cast<int16_t>(result >> 10);
}

int16_t Tanh16(int16_t x, int32_t input_multiplier, int32_t input_left_shift) {
  if (input_multiplier == 0) {  // a power-of-two input scale
    input_multiplier = 3 << input_left_shift;
    input_left_shift = 0;
  }
  const int32_t round = input_left_shift > 0 ? 1 << (input_left_shift - 1) : 0;
  const int32_t input = (x * input_multiplier + round) >> input_left_shift;
  const uint32_t abs_input = Abs32(input);
  const uint32_t uh = abs_input >> 8;
  int32_t result;
  if (uh >= 255) {
    result = 0xFFFF << 8;
  } else {
    const uint32_t ua = kSigmoidTable[uh], ub = kSigmoidTable[uh + 1];
    const uint32_t ut = abs_input & 0xFF;
    result = static_cast<int32_t>((ua << 8) + ut * (ub - ua));
  }
  result = input >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
  return static_cast<int16_t>(result >> 8);
}

size_t lstm_s8_get_buffer_size(const LstmParams& params) {
  return 4 * static_cast<size_t>(params.state_size) * sizeof(int16_t);
}

Error lstm_s8(const LstmParams& p, const int8_t* input, int8_t* hidden, int16_t* cell,
              int8_t* output, void* scratch, size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && hidden != nullptr && cell != nullptr &&
                               output != nullptr && scratch != nullptr &&
                               scratch_bytes >= lstm_s8_get_buffer_size(p),
                           kInvalidArgument, "lstm_s8: null tensor or too little scratch");
  RT_CHECK_OR_RETURN_ERROR(p.batch > 0 && p.time > 0 && p.input_size > 0 && p.state_size > 0,
                           kInvalidArgument, "lstm_s8: empty shape");
  int16_t* s = static_cast<int16_t*>(scratch);
  const Buffers buffers{s, s + p.state_size, s + 2 * p.state_size, s + 3 * p.state_size};
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t t = 0; t < p.time; ++t) {
      const int64_t step = p.time_major ? static_cast<int64_t>(t) * p.batch + b
                                        : static_cast<int64_t>(b) * p.time + t;
      const Row row{input + step * p.input_size, hidden + static_cast<int64_t>(b) * p.state_size,
                    cell + static_cast<int64_t>(b) * p.state_size, output + step * p.state_size};
      Step(p, row, buffers);
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
