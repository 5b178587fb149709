#include "runtime/kernels/reference/fully_connected_s8.h"

#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

size_t fully_connected_s8_get_buffer_size(int32_t depth) {
  return depth > 0 ? static_cast<size_t>(depth) * sizeof(int16_t) : 0;
}

Error fully_connected_s8(const FullyConnectedParams& p, const ChannelQuant& q, int32_t batches,
                         int32_t depth, int32_t units, const int8_t* input, const int8_t* weights,
                         const int32_t* bias, int8_t* output) {
  return fully_connected_s8(p, q, batches, depth, units, input, weights, bias, output, nullptr, 0);
}

Error fully_connected_s8(const FullyConnectedParams& p, const ChannelQuant& q, int32_t batches,
                         int32_t depth, int32_t units, const int8_t* input, const int8_t* weights,
                         const int32_t* bias, int8_t* output, void* scratch, size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && weights != nullptr && output != nullptr,
                           kInvalidArgument, "fully_connected_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(batches >= 0 && depth > 0 && units > 0, kInvalidArgument,
                           "fully_connected_s8: bad sizes");
  RT_CHECK_OR_RETURN_ERROR(
      q.multiplier != nullptr && q.shift != nullptr && (q.count == 1 || q.count == units),
      kInvalidArgument, "fully_connected_s8: %d multipliers for %d units",
      static_cast<int>(q.count), static_cast<int>(units));
  const int32_t input_offset = p.input_offset;
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  // Any int8 zero point keeps input + offset within [-255, 255] (int16).
  const bool small_offset = input_offset >= -127 && input_offset <= 128;
  if (small_offset && scratch != nullptr &&
      scratch_bytes >= fully_connected_s8_get_buffer_size(depth)) {
    int16_t* row = static_cast<int16_t*>(scratch);
    for (int32_t b = 0; b < batches; ++b) {
      WidenWithOffset(input + static_cast<int64_t>(b) * depth, depth, input_offset, row);
      PairQuadsForDot(row, depth);
      int8_t* y = output + static_cast<int64_t>(b) * units;
      int32_t acc[kDotMaxRows];
      for (int32_t u = 0; u < units; u += kDotMaxRows) {
        const int32_t n = units - u < kDotMaxRows ? units - u : kDotMaxRows;
        DotTile(weights + static_cast<int64_t>(u) * depth, depth, 8, n, row, 0, 1, depth, acc,
                kDotMaxRows);
        for (int32_t i = 0; i < n; ++i) {
          int32_t a = acc[i] + (bias != nullptr ? bias[u + i] : 0);
          const int32_t qi = (u + i) * per_channel;
          a = MultiplyByQuantizedMultiplier(a, q.multiplier[qi], q.shift[qi]);
          y[u + i] = ClampToInt8(a + p.out.output_offset, p.out.act_min, p.out.act_max);
        }
      }
    }
    return Error::kOk;
  }
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t* x = input + static_cast<int64_t>(b) * depth;
    int8_t* y = output + static_cast<int64_t>(b) * units;
    for (int32_t u = 0; u < units; ++u) {
      const int8_t* w = weights + static_cast<int64_t>(u) * depth;
      int32_t acc = 0;
      for (int32_t k = 0; k < depth; ++k) {
        acc += static_cast<int32_t>(w[k]) * (static_cast<int32_t>(x[k]) + input_offset);
      }
      if (bias != nullptr) acc += bias[u];
      const int32_t qi = u * per_channel;
      acc = MultiplyByQuantizedMultiplier(acc, q.multiplier[qi], q.shift[qi]);
      y[u] = ClampToInt8(acc + p.out.output_offset, p.out.act_min, p.out.act_max);
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
