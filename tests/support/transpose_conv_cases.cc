// The TRANSPOSE_CONV cases of op_cases.h: int8 with per-channel (and one per-tensor) weights,
// with and without bias, SAME and VALID padding (an odd SAME split too), strides 1 to 3 and
// unequal ones, the activation zero points at the ends of int8.

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::kQ;
using cases::kQHigh;
using cases::kQLow;
using compiler::OpType;

struct Geometry {
  const char* name;
  std::vector<int32_t> in;      // NHWC
  std::vector<int32_t> filter;  // O, H, W (I is the input's channels)
  std::vector<int32_t> out;     // NHWC
  Padding padding;
  int32_t stride_h, stride_w;
  bool bias;
  bool per_channel;
  QuantParams in_q, out_q;
};

// Per-channel scales around 0.01 (one scale when `per_channel` is false), zero point 0.
QuantParams WeightQuantization(int32_t channels, bool per_channel) {
  QuantParams q;
  for (int32_t c = 0; c < (per_channel ? channels : 1); ++c) {
    q.scales.push_back(0.006f + 0.002f * static_cast<float>(c % 5));
    q.zero_points.push_back(0);
  }
  return q;
}

}  // namespace

const std::vector<OpCase>& TransposeConvCases() {
  static const std::vector<OpCase> cases = [] {
    const Geometry kGeometries[] = {
        {"int8 2x2 stride 2 valid",
         {1, 3, 3, 4},
         {5, 2, 2},
         {1, 6, 6, 5},
         Padding::kValid,
         2,
         2,
         false,
         true,
         kQ,
         PerTensor(0.08f, 4)},
        {"int8 3x3 stride 2 same bias",
         {1, 4, 4, 3},
         {6, 3, 3},
         {1, 8, 8, 6},
         Padding::kSame,
         2,
         2,
         true,
         true,
         kQ,
         PerTensor(0.1f, -7)},
        {"int8 3x3 stride 1 same bias zp extremes",
         {2, 5, 4, 2},
         {3, 3, 3},
         {2, 5, 4, 3},
         Padding::kSame,
         1,
         1,
         true,
         true,
         kQLow,
         kQHigh},
        {"int8 3x2 stride 2x1 valid bias",
         {1, 3, 4, 2},
         {4, 3, 2},
         {1, 7, 5, 4},
         Padding::kValid,
         2,
         1,
         true,
         true,
         kQHigh,
         kQLow},
        {"int8 1x1 stride 3 same per-tensor weights",
         {1, 2, 2, 8},
         {2, 1, 1},
         {1, 6, 6, 2},
         Padding::kSame,
         3,
         3,
         false,
         false,
         kQ,
         PerTensor(0.05f, 0)},
        {"int8 3x3 stride 2 same odd output",
         {1, 3, 3, 2},
         {2, 3, 3},
         {1, 5, 5, 2},
         Padding::kSame,
         2,
         2,
         true,
         true,
         kQ,
         PerTensor(0.06f, 10)},
        // More output channels than the kernel accumulates at once (64): the last block is
        // partial, per-channel and per-tensor.
        {"int8 2x2 stride 2 valid bias 70 channels",
         {1, 2, 2, 3},
         {70, 2, 2},
         {1, 4, 4, 70},
         Padding::kValid,
         2,
         2,
         true,
         true,
         kQ,
         PerTensor(0.07f, -3)},
        {"int8 1x1 stride 2 same per-tensor weights 66 channels",
         {1, 2, 2, 4},
         {66, 1, 1},
         {1, 4, 4, 66},
         Padding::kSame,
         2,
         2,
         false,
         false,
         kQ,
         PerTensor(0.05f, 2)},
    };
    CaseList l;
    for (const Geometry& g : kGeometries) {
      l.Add(OpType::kTransposeConv, g.name, [g](CaseWriter& w) {
        const int32_t channels = g.filter[0];
        const int shape = w.Const32({4}, g.out);
        const int weights = w.ConstInt8({channels, g.filter[1], g.filter[2], g.in[3]},
                                        WeightQuantization(channels, g.per_channel));
        const int in = w.Int8(g.in, g.in_q);
        std::vector<int32_t> inputs = {shape, weights, in};
        if (g.bias) {
          std::vector<int32_t> values;
          for (int32_t c = 0; c < channels; ++c) values.push_back((c * 733) % 4001 - 2000);
          inputs.push_back(w.Const32({channels}, values));
        }
        w.Op(OpType::kTransposeConv, inputs, {w.Int8Output(g.out, g.out_q)},
             TransposeConvOpts{g.padding, g.stride_w, g.stride_h, Activation::kNone});
      });
    }
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
