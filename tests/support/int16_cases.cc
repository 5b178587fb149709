// The 16x8 cases of op_cases.h (int16 activations with zero point 0, int8 weights, int64 bias):
// the conv-like ops with and without bias, per-channel and per-tensor weights, every fused
// activation, grouped and strided windows; ADD, SUB and MUL with broadcasting; QUANTIZE and
// DEQUANTIZE between float32, int8 and int16; SOFTMAX, LOGISTIC, TANH (power-of-two and general
// input scales) and LEAKY_RELU; the data movement and pooling ops. Activations take random values
// over all of int16, so outputs reach both ends of the range and saturate.

#include <cmath>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using compiler::OpType;

// Per-channel weight scales around 0.008 (one scale for per-tensor weights), zero point 0, along
// `axis` (0 for CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV, 3 for DEPTHWISE_CONV_2D).
QuantParams WeightQuantization(int32_t channels, bool per_channel, int32_t axis) {
  QuantParams q;
  q.axis = axis;
  for (int32_t c = 0; c < (per_channel ? channels : 1); ++c) {
    q.scales.push_back(0.005f + 0.0015f * static_cast<float>(c % 7));
    q.zero_points.push_back(0);
  }
  return q;
}

// The bias quantization TFLite expects: scale[c] = input scale * weight scale[c], zero point 0.
QuantParams BiasQuantization(float in_scale, const QuantParams& w, int32_t channels) {
  QuantParams q;
  for (int32_t c = 0; c < channels; ++c) {
    q.scales.push_back(in_scale * w.scales[w.scales.size() == 1 ? 0 : c]);
    q.zero_points.push_back(0);
  }
  return q;
}

// Bias values spread over +-2^22, with one channel far outside int32's product range so that
// the int64 accumulator matters.
std::vector<int64_t> Bias64(int32_t channels) {
  std::vector<int64_t> v;
  for (int32_t c = 0; c < channels; ++c) v.push_back((int64_t{c} * 1234567) % 8388607 - 4194303);
  if (channels > 2) v[2] = (int64_t{1} << 33) + 12345;
  return v;
}

// An output scale that keeps a window of `taps` int16 x int8 products mostly inside int16 (the
// largest ones saturate).
float ConvOutputScale(float in_scale, float w_scale, int32_t taps) {
  return in_scale * w_scale * 80.0f * std::sqrt(static_cast<float>(taps));
}

struct Conv {
  const char* name;
  OpType type;
  std::vector<int32_t> in;      // NHWC
  std::vector<int32_t> filter;  // CONV_2D: O, H, W (I from the groups); DEPTHWISE: H, W, M
  Padding padding;
  int32_t stride, dilation;
  int32_t groups;
  enum class Bias { kNone, kInt64, kInt32 } bias;
  bool per_channel;
  Activation activation;
  float in_scale;
  const char* no_oracle = "";
};

int32_t OutSize(Padding p, int32_t in, int32_t k, int32_t stride, int32_t dilation) {
  const int32_t ef = (k - 1) * dilation + 1;
  return p == Padding::kSame ? (in + stride - 1) / stride : (in + stride - ef) / stride;
}

void AddConv(CaseList& l, const Conv& g) {
  l.Add(
      g.type, g.name,
      [g](CaseWriter& w) {
        const bool depthwise = g.type == OpType::kDepthwiseConv2D;
        const int32_t in_c = g.in[3];
        const int32_t out_c = depthwise ? in_c * g.filter[2] : g.filter[0];
        const int32_t kh = depthwise ? g.filter[0] : g.filter[1];
        const int32_t kw = depthwise ? g.filter[1] : g.filter[2];
        const int32_t depth = depthwise ? 1 : in_c / g.groups;
        const QuantParams wq = WeightQuantization(out_c, g.per_channel, depthwise ? 3 : 0);
        const std::vector<int32_t> w_shape = depthwise ? std::vector<int32_t>{1, kh, kw, out_c}
                                                       : std::vector<int32_t>{out_c, kh, kw, depth};
        const int in = w.Int16(g.in, PerTensor(g.in_scale, 0));
        const int weights = w.ConstInt8(w_shape, wq);
        int bias = -1;
        if (g.bias == Conv::Bias::kInt64) {
          bias = w.Const64({out_c}, Bias64(out_c), BiasQuantization(g.in_scale, wq, out_c));
        } else if (g.bias == Conv::Bias::kInt32) {
          std::vector<int32_t> values;
          for (int64_t v : Bias64(out_c)) values.push_back(static_cast<int32_t>(v % 1000000));
          bias = w.Const32({out_c}, values, BiasQuantization(g.in_scale, wq, out_c));
        }
        const int32_t oh = OutSize(g.padding, g.in[1], kh, g.stride, g.dilation);
        const int32_t ow = OutSize(g.padding, g.in[2], kw, g.stride, g.dilation);
        const float out_scale = ConvOutputScale(g.in_scale, wq.scales[0], kh * kw * depth);
        const int out = w.Int16Output({g.in[0], oh, ow, out_c}, PerTensor(out_scale, 0));
        if (depthwise) {
          w.Op(g.type, {in, weights, bias}, {out},
               DepthwiseConv2DOpts{g.padding, g.stride, g.stride, g.dilation, g.dilation,
                                   g.filter[2], g.activation});
        } else {
          w.Op(g.type, {in, weights, bias}, {out},
               Conv2DOpts{g.padding, g.stride, g.stride, g.dilation, g.dilation, g.activation});
        }
      },
      g.no_oracle);
}

// TFLite's interpreter build (tfjs-tflite) predates TFLite Micro's int32 accumulation for 16x8
// CONV_2D without an int64 bias: it requires a bias and reads it as int64.
constexpr const char* kConvAcc32 =
    "the interpreter's 16x8 CONV_2D requires an int64 bias; TFLite Micro accumulates in int32 "
    "with an int32 bias or none";

void AddConvCases(CaseList& l) {
  using B = Conv::Bias;
  const Conv kConvs[] = {
      {"16x8 3x3 same int64 bias relu",
       OpType::kConv2D,
       {1, 6, 5, 3},
       {4, 3, 3},
       Padding::kSame,
       1,
       1,
       1,
       B::kInt64,
       true,
       Activation::kRelu,
       1.0f / 1024},
      {"16x8 3x3 valid stride 2 int64 bias",
       OpType::kConv2D,
       {2, 7, 7, 4},
       {3, 3, 3},
       Padding::kValid,
       2,
       1,
       1,
       B::kInt64,
       true,
       Activation::kNone,
       0.0007f},
      {"16x8 2x2 dilation 2 same int64 bias relu6",
       OpType::kConv2D,
       {1, 5, 6, 2},
       {5, 2, 2},
       Padding::kSame,
       1,
       2,
       1,
       B::kInt64,
       false,
       Activation::kRelu6,
       0.0004f},
      {"16x8 grouped 1x1 int64 bias relu_n1_to_1",
       OpType::kConv2D,
       {1, 3, 3, 6},
       {4, 1, 1},
       Padding::kValid,
       1,
       1,
       2,
       B::kInt64,
       true,
       Activation::kReluN1To1,
       0.00006f},
      {"16x8 3x3 same no bias",
       OpType::kConv2D,
       {1, 4, 4, 3},
       {3, 3, 3},
       Padding::kSame,
       1,
       1,
       1,
       B::kNone,
       true,
       Activation::kNone,
       0.0005f,
       kConvAcc32},
      {"16x8 1x1 int32 bias",
       OpType::kConv2D,
       {1, 3, 4, 5},
       {6, 1, 1},
       Padding::kValid,
       1,
       1,
       1,
       B::kInt32,
       true,
       Activation::kRelu,
       0.0003f,
       kConvAcc32},
      {"16x8 3x3 same int64 bias",
       OpType::kDepthwiseConv2D,
       {1, 5, 5, 4},
       {3, 3, 1},
       Padding::kSame,
       1,
       1,
       1,
       B::kInt64,
       true,
       Activation::kNone,
       0.0009f},
      {"16x8 multiplier 2 stride 2 int64 bias relu6",
       OpType::kDepthwiseConv2D,
       {2, 6, 5, 3},
       {3, 2, 2},
       Padding::kValid,
       2,
       1,
       1,
       B::kInt64,
       true,
       Activation::kRelu6,
       0.0003f},
      {"16x8 dilation 2 no bias relu",
       OpType::kDepthwiseConv2D,
       {1, 6, 6, 2},
       {2, 2, 3},
       Padding::kSame,
       1,
       2,
       1,
       B::kNone,
       false,
       Activation::kRelu,
       0.002f},
  };
  for (const Conv& g : kConvs) AddConv(l, g);
}

void AddFullyConnectedCases(CaseList& l) {
  struct Fc {
    const char* name;
    std::vector<int32_t> in;
    int32_t units;
    bool bias;
    Activation activation;
    float in_scale;
  };
  const Fc kCases[] = {
      {"16x8 int64 bias", {3, 20}, 7, true, Activation::kNone, 0.0008f},
      {"16x8 no bias relu", {2, 9}, 4, false, Activation::kRelu, 0.003f},
      {"16x8 4-D input int64 bias relu6", {1, 2, 2, 6}, 5, true, Activation::kRelu6, 0.0002f},
  };
  for (const Fc& f : kCases) {
    l.Add(OpType::kFullyConnected, f.name, [f](CaseWriter& w) {
      const int32_t depth = f.in.back();
      const int32_t rows = static_cast<int32_t>(cases::Count(f.in) / depth);
      const QuantParams wq = WeightQuantization(f.units, false, 0);
      const int in = w.Int16(f.in, PerTensor(f.in_scale, 0));
      const int weights = w.ConstInt8({f.units, depth}, wq);
      const int bias =
          f.bias ? w.Const64({f.units}, Bias64(f.units), BiasQuantization(f.in_scale, wq, f.units))
                 : -1;
      const float out_scale = ConvOutputScale(f.in_scale, wq.scales[0], depth);
      const int out = w.Int16Output({rows, f.units}, PerTensor(out_scale, 0));
      w.Op(OpType::kFullyConnected, {in, weights, bias}, {out},
           FullyConnectedOpts{f.activation, false});
    });
  }
}

void AddTransposeConvCases(CaseList& l) {
  struct Tc {
    const char* name;
    std::vector<int32_t> in, filter, out;  // filter: O, H, W
    Padding padding;
    int32_t stride;
    bool bias;
    float in_scale;
  };
  const Tc kCases[] = {
      {"16x8 3x3 stride 2 same int64 bias",
       {1, 3, 3, 3},
       {4, 3, 3},
       {1, 6, 6, 4},
       Padding::kSame,
       2,
       true,
       0.0006f},
      {"16x8 2x2 stride 2 valid no bias",
       {1, 2, 3, 2},
       {3, 2, 2},
       {1, 4, 6, 3},
       Padding::kValid,
       2,
       false,
       0.001f},
  };
  for (const Tc& t : kCases) {
    l.Add(OpType::kTransposeConv, t.name, [t](CaseWriter& w) {
      const int32_t channels = t.filter[0];
      const QuantParams wq = WeightQuantization(channels, true, 0);
      const int shape = w.Const32({4}, t.out);
      const int weights = w.ConstInt8({channels, t.filter[1], t.filter[2], t.in[3]}, wq);
      const int in = w.Int16(t.in, PerTensor(t.in_scale, 0));
      std::vector<int32_t> inputs = {shape, weights, in};
      if (t.bias) {
        inputs.push_back(
            w.Const64({channels}, Bias64(channels), BiasQuantization(t.in_scale, wq, channels)));
      }
      const float out_scale = ConvOutputScale(t.in_scale, wq.scales[0], 4 * t.in[3]);
      w.Op(OpType::kTransposeConv, inputs, {w.Int16Output(t.out, PerTensor(out_scale, 0))},
           TransposeConvOpts{t.padding, t.stride, t.stride, Activation::kNone});
    });
  }
}

// TFLite's ADD and SUB take a power-of-two shortcut for int16 when every scale is a power of two
// (AddOptions.pot_scale_int16, true by default); TFLite Micro always runs the general path.
constexpr const char* kPotScales =
    "with power-of-two scales the interpreter's int16 ADD takes its pot_scale_int16 shortcut; "
    "TFLite Micro runs the general path";

void AddElementwiseCases(CaseList& l) {
  struct Binary {
    const char* name;
    OpType type;
    std::vector<int32_t> a, b, out;
    float sa, sb, so;
    Activation activation;
    const char* no_oracle = "";
  };
  const Binary kCases[] = {
      {"16x8 same shape",
       OpType::kAdd,
       {2, 3, 5},
       {2, 3, 5},
       {2, 3, 5},
       0.0011f,
       0.0007f,
       0.0015f,
       Activation::kNone},
      {"16x8 broadcast relu",
       OpType::kAdd,
       {1, 4, 1, 3},
       {2, 1, 5, 1},
       {2, 4, 5, 3},
       0.0003f,
       0.0009f,
       0.0008f,
       Activation::kRelu},
      {"16x8 power-of-two scales",
       OpType::kAdd,
       {3, 4},
       {3, 4},
       {3, 4},
       1.0f / 4096,
       1.0f / 2048,
       1.0f / 1024,
       Activation::kNone,
       kPotScales},
      {"16x8 same shape relu6",
       OpType::kSub,
       {4, 6},
       {4, 6},
       {4, 6},
       0.0002f,
       0.0003f,
       0.0004f,
       Activation::kRelu6},
      {"16x8 broadcast scalar",
       OpType::kSub,
       {2, 2, 3},
       {1},
       {2, 2, 3},
       0.0006f,
       0.0005f,
       0.0007f,
       Activation::kNone},
      {"16x8 same shape",
       OpType::kMul,
       {3, 7},
       {3, 7},
       {3, 7},
       0.001f,
       0.0013f,
       0.03f,
       Activation::kNone},
      {"16x8 broadcast relu_n1_to_1",
       OpType::kMul,
       {2, 1, 4},
       {3, 1},
       {2, 3, 4},
       0.0001f,
       0.0002f,
       0.00004f,
       Activation::kReluN1To1},
  };
  for (const Binary& c : kCases) {
    l.Add(
        c.type, c.name,
        [c](CaseWriter& w) {
          const int a = w.Int16(c.a, PerTensor(c.sa, 0));
          const int b = w.Int16(c.b, PerTensor(c.sb, 0));
          w.Op(c.type, {a, b}, {w.Int16Output(c.out, PerTensor(c.so, 0))},
               ElementwiseOpts{c.activation});
        },
        c.no_oracle);
  }
}

void AddQuantizeCases(CaseList& l) {
  l.Add(OpType::kQuantize, "float32 to int16", [](CaseWriter& w) {
    const int in = w.Float({3, 11}, -12.0f, 12.0f);
    w.Op(OpType::kQuantize, {in}, {w.Int16Output({3, 11}, PerTensor(0.00031f, 0))});
  });
  l.Add(OpType::kQuantize, "float32 to int16 saturating", [](CaseWriter& w) {
    const int in = w.Float({2, 8}, -40.0f, 40.0f);
    w.Op(OpType::kQuantize, {in}, {w.Int16Output({2, 8}, PerTensor(1.0f / 1024, 0))});
  });
  l.Add(
      OpType::kQuantize, "int8 to int16",
      [](CaseWriter& w) {
        const int in = w.Int8({4, 9}, PerTensor(0.05f, -7));
        w.Op(OpType::kQuantize, {in}, {w.Int16Output({4, 9}, PerTensor(0.00013f, 0))});
      },
      "the interpreter's QUANTIZE takes int8 to int8 or uint8 only; TFLite Micro's to int16 too");
  l.Add(OpType::kQuantize, "int16 to int8", [](CaseWriter& w) {
    const int in = w.Int16({5, 7}, PerTensor(0.0004f, 0));
    w.Op(OpType::kQuantize, {in}, {w.Int8Output({5, 7}, PerTensor(0.06f, 5))});
  });
  l.Add(OpType::kQuantize, "int16 to int16", [](CaseWriter& w) {
    const int in = w.Int16({2, 3, 6}, PerTensor(0.0004f, 0));
    w.Op(OpType::kQuantize, {in}, {w.Int16Output({2, 3, 6}, PerTensor(0.00057f, 0))});
  });
  l.Add(OpType::kDequantize, "int16 to float32", [](CaseWriter& w) {
    const int in = w.Int16({3, 10}, PerTensor(0.00077f, 0));
    w.Op(OpType::kDequantize, {in}, {w.Output({3, 10}, TflType::kFloat32)});
  });
}

// SOFTMAX, LOGISTIC, TANH and LEAKY_RELU: int16 in and out, the output quantization TFLite
// Micro's Prepare requires (2^-15 for SOFTMAX, LOGISTIC and TANH).
void AddActivationCases(CaseList& l) {
  const QuantParams q15 = PerTensor(1.0f / 32768, 0);
  struct Softmax {
    const char* name;
    std::vector<int32_t> shape;
    float in_scale, beta;
  };
  const Softmax kSoftmax[] = {
      {"16x8 rows of 10", {3, 10}, 0.0006f, 1.0f},
      {"16x8 beta 0.5 rows of 33", {1, 2, 33}, 0.0011f, 0.5f},
      {"16x8 one row of 7 wide scale", {1, 7}, 0.004f, 1.0f},
  };
  for (const Softmax& c : kSoftmax) {
    l.Add(OpType::kSoftmax, c.name, [c, q15](CaseWriter& w) {
      const int in = w.Int16(c.shape, PerTensor(c.in_scale, 0));
      w.Op(OpType::kSoftmax, {in}, {w.Int16Output(c.shape, q15)}, SoftmaxOpts{c.beta});
    });
  }
  struct Sigmoid {
    const char* name;
    OpType type;
    float in_scale;
    const char* no_oracle = "";
  };
  // With a power-of-two input scale the interpreter's optimized kernel computes sigmoid in
  // gemmlowp fixed point; TFLite Micro reads its table as for any other scale.
  constexpr const char* kPot =
      "with a power-of-two input scale the interpreter evaluates sigmoid in fixed point; "
      "TFLite Micro reads its table";
  const Sigmoid kSigmoid[] = {
      {"16x8 power-of-two input scale", OpType::kLogistic, 1.0f / 4096, kPot},
      {"16x8 general input scale", OpType::kLogistic, 0.00037f},
      {"16x8 small input scale", OpType::kLogistic, 0.00002f},
      {"16x8 power-of-two input scale 2^-12", OpType::kTanh, 1.0f / 4096, kPot},
      {"16x8 power-of-two input scale 2^-11", OpType::kTanh, 1.0f / 2048, kPot},
      {"16x8 general input scale", OpType::kTanh, 0.00029f},
  };
  for (const Sigmoid& c : kSigmoid) {
    l.Add(
        c.type, c.name,
        [c, q15](CaseWriter& w) {
          const int in = w.Int16({4, 37}, PerTensor(c.in_scale, 0));
          w.Op(c.type, {in}, {w.Int16Output({4, 37}, q15)});
        },
        c.no_oracle);
  }
  l.Add(OpType::kLeakyRelu, "16x8 alpha 0.2", [](CaseWriter& w) {
    const int in = w.Int16({3, 17}, PerTensor(0.0005f, 0));
    w.Op(OpType::kLeakyRelu, {in}, {w.Int16Output({3, 17}, PerTensor(0.0004f, 0))},
         LeakyReluOpts{0.2f});
  });
  l.Add(OpType::kLeakyRelu, "16x8 alpha 1.7 saturating", [](CaseWriter& w) {
    const int in = w.Int16({2, 3, 5}, PerTensor(0.0009f, 0));
    w.Op(OpType::kLeakyRelu, {in}, {w.Int16Output({2, 3, 5}, PerTensor(0.0006f, 0))},
         LeakyReluOpts{1.7f});
  });
}

// The data movement and pooling ops on int16 values (one quantization in and out).
void AddLayoutCases(CaseList& l) {
  const QuantParams q = PerTensor(0.0007f, 0);
  l.Add(OpType::kPad, "16x8", [q](CaseWriter& w) {
    const int in = w.Int16({1, 3, 4, 2}, q);
    const int pads = w.Const32({4, 2}, {0, 0, 1, 2, 2, 0, 0, 1});
    w.Op(OpType::kPad, {in, pads}, {w.Int16Output({1, 6, 6, 3}, q)});
  });
  l.Add(OpType::kPadV2, "16x8 constant value", [q](CaseWriter& w) {
    const int in = w.Int16({2, 3}, q);
    const int pads = w.Const32({2, 2}, {1, 0, 2, 3});
    const int value = w.Const16({1}, {-1234}, q);
    w.Op(OpType::kPadV2, {in, pads, value}, {w.Int16Output({3, 8}, q)});
  });
  l.Add(OpType::kStridedSlice, "16x8 negative stride shrink", [q](CaseWriter& w) {
    const int in = w.Int16({2, 5, 6}, q);
    const int begin = w.Const32({3}, {1, 4, 0});
    const int end = w.Const32({3}, {2, 0, 6});
    const int strides = w.Const32({3}, {1, -2, 2});
    StridedSliceOpts o;
    o.shrink_axis_mask = 1;
    w.Op(OpType::kStridedSlice, {in, begin, end, strides}, {w.Int16Output({2, 3}, q)}, o);
  });
  l.Add(OpType::kSlice, "16x8", [q](CaseWriter& w) {
    const int in = w.Int16({3, 4, 5}, q);
    const int begin = w.Const32({3}, {1, 0, 2});
    const int size = w.Const32({3}, {2, -1, 3});
    w.Op(OpType::kSlice, {in, begin, size}, {w.Int16Output({2, 4, 3}, q)});
  });
  l.Add(OpType::kReshape, "16x8", [q](CaseWriter& w) {
    const int in = w.Int16({2, 3, 4}, q);
    const int shape = w.Const32({2}, {6, 4});
    w.Op(OpType::kReshape, {in, shape}, {w.Int16Output({6, 4}, q)}, ReshapeOpts{{6, 4}});
  });
  l.Add(OpType::kSqueeze, "16x8", [q](CaseWriter& w) {
    const int in = w.Int16({1, 5, 1, 3}, q);
    w.Op(OpType::kSqueeze, {in}, {w.Int16Output({5, 3}, q)}, SqueezeOpts{{0, 2}});
  });
  l.Add(OpType::kTranspose, "16x8", [q](CaseWriter& w) {
    const int in = w.Int16({2, 3, 4}, q);
    const int perm = w.Const32({3}, {2, 0, 1});
    w.Op(OpType::kTranspose, {in, perm}, {w.Int16Output({4, 2, 3}, q)});
  });
  l.Add(OpType::kConcatenation, "16x8 axis 1", [q](CaseWriter& w) {
    const int a = w.Int16({2, 3, 2}, q);
    const int b = w.Int16({2, 1, 2}, q);
    w.Op(OpType::kConcatenation, {a, b}, {w.Int16Output({2, 4, 2}, q)}, ConcatenationOpts{1});
  });
  l.Add(OpType::kResizeNearestNeighbor, "16x8 half pixel centers", [q](CaseWriter& w) {
    const int in = w.Int16({1, 3, 4, 2}, q);
    const int size = w.Const32({2}, {5, 7});
    w.Op(OpType::kResizeNearestNeighbor, {in, size}, {w.Int16Output({1, 5, 7, 2}, q)},
         ResizeNearestNeighborOpts{false, true});
  });
  // The interpreter averages int16 in float; TFLite Micro rescales the integer sum.
  constexpr const char* kMeanInFloat =
      "the interpreter's int16 MEAN divides in float; TFLite Micro folds 1/count into its "
      "integer multiplier";
  l.Add(
      OpType::kMean, "16x8 over H and W keep dims",
      [q](CaseWriter& w) {
        const int in = w.Int16({2, 3, 4, 5}, q);
        const int axes = w.Const32({2}, {1, 2});
        w.Op(OpType::kMean, {in, axes}, {w.Int16Output({2, 1, 1, 5}, PerTensor(0.0004f, 0))},
             ReducerOpts{true});
      },
      kMeanInFloat);
  l.Add(
      OpType::kMean, "16x8 last axis",
      [q](CaseWriter& w) {
        const int in = w.Int16({3, 7}, q);
        const int axes = w.Const32({1}, {-1});
        w.Op(OpType::kMean, {in, axes}, {w.Int16Output({3}, q)}, ReducerOpts{false});
      },
      kMeanInFloat);
  l.Add(OpType::kMaximum, "16x8 broadcast", [q](CaseWriter& w) {
    const int a = w.Int16({2, 3, 4}, q);
    const int b = w.Int16({3, 1}, q);
    w.Op(OpType::kMaximum, {a, b}, {w.Int16Output({2, 3, 4}, q)});
  });
  l.Add(OpType::kMinimum, "16x8 same shape", [q](CaseWriter& w) {
    const int a = w.Int16({5, 6}, q);
    const int b = w.Int16({5, 6}, q);
    w.Op(OpType::kMinimum, {a, b}, {w.Int16Output({5, 6}, q)});
  });
  struct Pool {
    const char* name;
    OpType type;
    Padding padding;
    int32_t stride, filter;
    std::vector<int32_t> in, out;
    Activation activation;
  };
  const Pool kPools[] = {
      {"16x8 3x3 same stride 2",
       OpType::kAveragePool2D,
       Padding::kSame,
       2,
       3,
       {1, 5, 6, 3},
       {1, 3, 3, 3},
       Activation::kNone},
      {"16x8 2x2 valid relu6",
       OpType::kAveragePool2D,
       Padding::kValid,
       2,
       2,
       {2, 4, 4, 2},
       {2, 2, 2, 2},
       Activation::kRelu6},
      {"16x8 3x3 same stride 2",
       OpType::kMaxPool2D,
       Padding::kSame,
       2,
       3,
       {1, 5, 6, 3},
       {1, 3, 3, 3},
       Activation::kNone},
      {"16x8 2x2 valid relu",
       OpType::kMaxPool2D,
       Padding::kValid,
       1,
       2,
       {1, 3, 4, 2},
       {1, 2, 3, 2},
       Activation::kRelu},
  };
  for (const Pool& p : kPools) {
    l.Add(p.type, p.name, [p](CaseWriter& w) {
      const QuantParams pq = PerTensor(0.0009f, 0);
      const int in = w.Int16(p.in, pq);
      w.Op(p.type, {in}, {w.Int16Output(p.out, pq)},
           Pool2DOpts{p.padding, p.stride, p.stride, p.filter, p.filter, p.activation});
    });
  }
}

}  // namespace

const std::vector<OpCase>& Int16Cases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    AddConvCases(l);
    AddFullyConnectedCases(l);
    AddTransposeConvCases(l);
    AddElementwiseCases(l);
    AddQuantizeCases(l);
    AddActivationCases(l);
    AddLayoutCases(l);
    cases::AddInt16ArithmeticCases(l);
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
