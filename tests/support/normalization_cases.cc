// The batch-3 cases of op_cases.h: LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D and
// RESIZE_BILINEAR, with edge shapes (depth 1, rank 1, a 1x1 resize), the zero points at the ends
// of int8, every activation L2_POOL_2D has and every coordinate mode of RESIZE_BILINEAR.

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

// The output quantizations TFLite requires.
const QuantParams kLogSoftmaxOut = PerTensor(16.0f / 256, 127);
const QuantParams kL2NormOut = PerTensor(1.0f / 128, 0);

// One case per shape of a row op (int8 in and out of one shape, a fixed output quantization).
struct RowCase {
  const char* name;
  std::vector<int32_t> shape;
  QuantParams q;
  int lo, hi;
};

void AddRowCases(CaseList& l, OpType type, const std::vector<RowCase>& shapes,
                 const QuantParams& out_q, const BuilderOptions& options) {
  for (const RowCase& s : shapes) {
    l.Add(type, s.name, [s, type, out_q, options](CaseWriter& w) {
      const int in = w.Int8(s.shape, s.q, s.lo, s.hi);
      w.Op(type, {in}, {w.Int8Output(s.shape, out_q)}, options);
    });
  }
}

void AddLogSoftmaxCases(CaseList& l) {
  AddRowCases(l, OpType::kLogSoftmax,
              {
                  {"int8", {4, 16}, kQ, -128, 127},
                  {"int8 zp -128", {2, 3, 24}, kQLow, -128, 127},
                  {"int8 zp 127", {3, 40}, kQHigh, -128, 127},
                  {"int8 ties", {5, 12}, PerTensor(0.2f, 10), 5, 9},
                  {"int8 large scale cut off", {2, 32}, PerTensor(1.5f, 0), -128, 127},
                  {"int8 small scale", {2, 64}, PerTensor(0.001f, -5), -128, 127},
                  {"int8 depth 1", {6, 1}, kQ, -128, 127},
                  {"int8 rank 1", {100}, kQ, -128, 127},
                  {"int8 rank 4", {2, 2, 3, 7}, PerTensor(0.08f, -40), -128, 127},
              },
              kLogSoftmaxOut, std::monostate{});
}

void AddL2NormalizationCases(CaseList& l) {
  AddRowCases(l, OpType::kL2Normalization,
              {
                  {"int8", {3, 16}, kQ, -128, 127},
                  {"int8 zp -128", {2, 3, 10}, kQLow, -128, 127},
                  {"int8 zp 127", {4, 1, 1, 8}, kQHigh, -128, 127},
                  {"int8 at the zero point", {2, 6}, PerTensor(0.1f, 17), 17, 17},
                  {"int8 near the zero point", {4, 5}, PerTensor(0.1f, -2), -3, -1},
                  {"int8 depth 1", {6, 1}, kQ, -128, 127},
                  {"int8 rank 1", {64}, PerTensor(0.3f, 90), -128, 127},
              },
              kL2NormOut, ElementwiseOpts{});
}

void AddL2PoolCases(CaseList& l) {
  const Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kReluN1To1,
                                     Activation::kRelu6};
  for (Activation act : kActivations) {
    const std::string suffix = " act " + std::to_string(static_cast<int>(act));
    l.Add(OpType::kL2Pool2D, "float 2x2 stride 2 valid" + suffix, [act](CaseWriter& w) {
      const int in = w.Float({1, 4, 6, 3}, -4.0f, 4.0f);
      Pool2DOpts o{Padding::kValid, 2, 2, 2, 2, act};
      w.Op(OpType::kL2Pool2D, {in}, {w.Output({1, 2, 3, 3}, TflType::kFloat32)}, o);
    });
  }
  l.Add(OpType::kL2Pool2D, "float 3x3 stride 1 same", [](CaseWriter& w) {
    const int in = w.Float({2, 5, 5, 2});
    Pool2DOpts o{Padding::kSame, 1, 1, 3, 3, Activation::kNone};
    w.Op(OpType::kL2Pool2D, {in}, {w.Output({2, 5, 5, 2}, TflType::kFloat32)}, o);
  });
  l.Add(OpType::kL2Pool2D, "float 2x3 stride 2x1 same", [](CaseWriter& w) {
    const int in = w.Float({1, 5, 4, 1});
    Pool2DOpts o{Padding::kSame, 1, 2, 3, 2, Activation::kNone};
    w.Op(OpType::kL2Pool2D, {in}, {w.Output({1, 3, 4, 1}, TflType::kFloat32)}, o);
  });
}

void AddResizeBilinearCases(CaseList& l) {
  struct Resize {
    const char* name;
    std::vector<int32_t> in;
    int32_t out_h, out_w;
    bool align_corners, half_pixel_centers;
    QuantParams q;
  };
  const Resize kResizes[] = {
      {"int8 2x", {1, 3, 4, 5}, 6, 8, false, false, kQ},
      {"int8 align_corners", {1, 4, 4, 3}, 7, 5, true, false, kQLow},
      {"int8 half_pixel_centers", {2, 3, 5, 4}, 8, 7, false, true, kQHigh},
      {"int8 downscale", {1, 8, 6, 2}, 3, 4, false, false, kQ},
      {"int8 half_pixel_centers downscale", {1, 7, 9, 3}, 2, 4, false, true, kQ},
      {"int8 to 1x1", {1, 5, 5, 3}, 1, 1, false, false, kQ},
      {"int8 align_corners to 1x1", {1, 3, 4, 2}, 1, 1, true, false, kQLow},
      {"int8 align_corners from 1x1", {2, 1, 1, 6}, 3, 2, true, false, kQHigh},
  };
  for (const Resize& r : kResizes) {
    l.Add(OpType::kResizeBilinear, r.name, [r](CaseWriter& w) {
      const int in = w.Int8(r.in, r.q);
      const int size = w.Const32({2}, {r.out_h, r.out_w});
      w.Op(OpType::kResizeBilinear, {in, size},
           {w.Int8Output({r.in[0], r.out_h, r.out_w, r.in[3]}, r.q)},
           ResizeNearestNeighborOpts{r.align_corners, r.half_pixel_centers});
    });
  }
}

}  // namespace

const std::vector<OpCase>& NormalizationCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    AddLogSoftmaxCases(l);
    AddL2NormalizationCases(l);
    AddL2PoolCases(l);
    AddResizeBilinearCases(l);
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
