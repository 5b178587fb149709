#include "tests/support/op_cases.h"

#include "tests/support/case_writer.h"

namespace boardlab::testing {
namespace {

using cases::Body;
using cases::CaseList;
using cases::CaseWriter;
using cases::kQ;
using cases::kQHigh;
using cases::kQLow;
using compiler::OpType;

// What the interpreter build the oracle uses (tfjs-tflite 0.0.1-alpha.10) cannot run.
constexpr const char* kNoBroadcastTo = "the interpreter build has no BROADCAST_TO";
constexpr const char* kNoInt8ZerosLike = "the interpreter's ZEROS_LIKE has no int8";
constexpr const char* kSumOfRawValues =
    "with one quantization in and out the interpreter adds raw values, ignoring the zero point; "
    "TFLite Micro requantizes";
constexpr const char* kSumInIntegers =
    "the interpreter's SUM requantizes in float and wraps; TFLite Micro with an integer "
    "multiplier, clamped";
constexpr const char* kPadsWithRawZero =
    "TFLite Micro pads with raw 0, the interpreter with the output zero point";
constexpr const char* kNoScalarOutput = "the interpreter's JavaScript binding drops rank-0 outputs";

// The ops whose output is the input moved around: one input, one output, constant operands.
void AddShapeCases(CaseList& l) {
  l.Add(OpType::kExpandDims, "axis 0", [](CaseWriter& w) {
    const int in = w.Int8({2, 3}, kQ);
    w.Op(OpType::kExpandDims, {in, w.Const32({1}, {0})}, {w.Int8Output({1, 2, 3}, kQ)});
  });
  l.Add(OpType::kExpandDims, "axis -1 int64", [](CaseWriter& w) {
    const int in = w.Int8({2, 3}, kQLow);
    w.Op(OpType::kExpandDims, {in, w.Const64({}, {-1})}, {w.Int8Output({2, 3, 1}, kQLow)});
  });
  l.Add(OpType::kExpandDims, "float middle", [](CaseWriter& w) {
    const int in = w.Float({4, 5});
    w.Op(OpType::kExpandDims, {in, w.Const32({1}, {1})}, {w.Output({4, 1, 5}, TflType::kFloat32)});
  });
  l.Add(OpType::kShape, "int32", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 4}, kQ);
    w.Op(OpType::kShape, {in}, {w.Output({3}, TflType::kInt32)}, ShapeOpts{TflType::kInt32});
  });
  l.Add(OpType::kShape, "int64", [](CaseWriter& w) {
    const int in = w.Float({5, 1});
    w.Op(OpType::kShape, {in}, {w.Output({2}, TflType::kInt64)}, ShapeOpts{TflType::kInt64});
  });
  l.Add(OpType::kFill, "int8", [](CaseWriter& w) {
    const int value = w.Int8({}, kQ);
    w.Op(OpType::kFill, {w.Const32({3}, {2, 3, 4}), value}, {w.Int8Output({2, 3, 4}, kQ)});
  });
  l.Add(OpType::kFill, "float", [](CaseWriter& w) {
    const int value = w.Float({});
    w.Op(OpType::kFill, {w.Const32({2}, {3, 5}), value}, {w.Output({3, 5}, TflType::kFloat32)});
  });
  l.Add(OpType::kFill, "int32", [](CaseWriter& w) {
    const int value = w.Int32({}, {-70000});
    w.Op(OpType::kFill, {w.Const64({1}, {7}), value}, {w.Output({7}, TflType::kInt32)});
  });
  l.Add(
      OpType::kZerosLike, "int8 zp -128",
      [](CaseWriter& w) {
        const int in = w.Int8({3, 5}, kQLow);
        w.Op(OpType::kZerosLike, {in}, {w.Int8Output({3, 5}, kQLow)});
      },
      kNoInt8ZerosLike);
  l.Add(OpType::kZerosLike, "float", [](CaseWriter& w) {
    const int in = w.Float({2, 4});
    w.Op(OpType::kZerosLike, {in}, {w.Output({2, 4}, TflType::kFloat32)});
  });
  l.Add(
      OpType::kBroadcastTo, "[3,1] to [2,3,4]",
      [](CaseWriter& w) {
        const int in = w.Int8({3, 1}, kQHigh);
        w.Op(OpType::kBroadcastTo, {in, w.Const32({3}, {2, 3, 4})},
             {w.Int8Output({2, 3, 4}, kQHigh)});
      },
      kNoBroadcastTo);
  l.Add(
      OpType::kBroadcastTo, "[1] to [5] float",
      [](CaseWriter& w) {
        const int in = w.Float({1});
        w.Op(OpType::kBroadcastTo, {in, w.Const64({1}, {5})}, {w.Output({5}, TflType::kFloat32)});
      },
      kNoBroadcastTo);
}

void AddJoinSplitCases(CaseList& l) {
  l.Add(OpType::kPack, "3 x [2,4] axis 0", [](CaseWriter& w) {
    std::vector<int32_t> ins;
    for (int i = 0; i < 3; ++i) ins.push_back(w.Int8({2, 4}, kQ));
    w.Op(OpType::kPack, ins, {w.Int8Output({3, 2, 4}, kQ)}, PackOpts{3, 0});
  });
  l.Add(OpType::kPack, "2 x [2,3] axis -1", [](CaseWriter& w) {
    std::vector<int32_t> ins = {w.Int8({2, 3}, kQLow), w.Int8({2, 3}, kQLow)};
    w.Op(OpType::kPack, ins, {w.Int8Output({2, 3, 2}, kQLow)}, PackOpts{2, -1});
  });
  l.Add(OpType::kPack, "int32 axis 1", [](CaseWriter& w) {
    std::vector<int32_t> ins = {w.Int32Random({4}, -1000, 1000), w.Int32Random({4}, -5, 5)};
    w.Op(OpType::kPack, ins, {w.Output({4, 2}, TflType::kInt32)}, PackOpts{2, 1});
  });
  l.Add(OpType::kUnpack, "axis 0", [](CaseWriter& w) {
    const int in = w.Int8({3, 2, 4}, kQ);
    std::vector<int32_t> outs;
    for (int i = 0; i < 3; ++i) outs.push_back(w.Int8Output({2, 4}, kQ));
    w.Op(OpType::kUnpack, {in}, outs, UnpackOpts{3, 0});
  });
  l.Add(OpType::kUnpack, "axis -1", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 2}, kQHigh);
    std::vector<int32_t> outs = {w.Int8Output({2, 3}, kQHigh), w.Int8Output({2, 3}, kQHigh)};
    w.Op(OpType::kUnpack, {in}, outs, UnpackOpts{2, -1});
  });
  l.Add(OpType::kSplit, "axis 1 in 3", [](CaseWriter& w) {
    const int axis = w.Const32({}, {1});
    const int in = w.Int8({2, 6, 4}, kQ);
    std::vector<int32_t> outs;
    for (int i = 0; i < 3; ++i) outs.push_back(w.Int8Output({2, 2, 4}, kQ));
    w.Op(OpType::kSplit, {axis, in}, outs, SplitOpts{3});
  });
  l.Add(OpType::kSplit, "axis -1 in 2 float", [](CaseWriter& w) {
    const int axis = w.Const32({1}, {-1});
    const int in = w.Float({3, 4});
    std::vector<int32_t> outs = {w.Output({3, 2}, TflType::kFloat32),
                                 w.Output({3, 2}, TflType::kFloat32)};
    w.Op(OpType::kSplit, {axis, in}, outs, SplitOpts{2});
  });
  l.Add(OpType::kSplitV, "sizes 2,-1,1 axis 1", [](CaseWriter& w) {
    const int in = w.Int8({2, 7, 3}, kQLow);
    const int sizes = w.Const32({3}, {2, -1, 1});
    std::vector<int32_t> outs = {w.Int8Output({2, 2, 3}, kQLow), w.Int8Output({2, 4, 3}, kQLow),
                                 w.Int8Output({2, 1, 3}, kQLow)};
    w.Op(OpType::kSplitV, {in, sizes, w.Const32({}, {1})}, outs, SplitOpts{3});
  });
  l.Add(OpType::kSplitV, "sizes 1,2 axis -1", [](CaseWriter& w) {
    const int in = w.Int8({4, 3}, kQ);
    std::vector<int32_t> outs = {w.Int8Output({4, 1}, kQ), w.Int8Output({4, 2}, kQ)};
    w.Op(OpType::kSplitV, {in, w.Const32({2}, {1, 2}), w.Const32({1}, {-1})}, outs, SplitOpts{2});
  });
}

void AddGatherCases(CaseList& l) {
  l.Add(OpType::kGather, "axis 1", [](CaseWriter& w) {
    const int params = w.Int8({4, 5, 3}, kQ);
    const int idx = w.Const32({2, 3}, {4, 0, 2, 2, 1, 3});
    w.Op(OpType::kGather, {params, idx}, {w.Int8Output({4, 2, 3, 3}, kQ)}, GatherOpts{1, 0});
  });
  l.Add(OpType::kGather, "axis 0 run-time indices", [](CaseWriter& w) {
    const int params = w.Int8({6, 4}, kQHigh);
    const int idx = w.Int32({5}, {5, 0, 3, 3, 1});
    w.Op(OpType::kGather, {params, idx}, {w.Int8Output({5, 4}, kQHigh)}, GatherOpts{0, 0});
  });
  l.Add(OpType::kGather, "batch_dims 1", [](CaseWriter& w) {
    const int params = w.Int8({2, 5, 3}, kQLow);
    const int idx = w.Const32({2, 4}, {0, 4, 4, 1, 2, 2, 3, 0});
    w.Op(OpType::kGather, {params, idx}, {w.Int8Output({2, 4, 3}, kQLow)}, GatherOpts{1, 1});
  });
  l.Add(OpType::kGather, "float axis -1 scalar index", [](CaseWriter& w) {
    const int params = w.Float({3, 4});
    const int idx = w.Const32({}, {2});
    w.Op(OpType::kGather, {params, idx}, {w.Output({3}, TflType::kFloat32)}, GatherOpts{-1, 0});
  });
  l.Add(OpType::kGatherNd, "slices", [](CaseWriter& w) {
    const int params = w.Int8({3, 4, 5}, kQ);
    const int idx = w.Const32({2, 2}, {2, 3, 0, 1});
    w.Op(OpType::kGatherNd, {params, idx}, {w.Int8Output({2, 5}, kQ)});
  });
  l.Add(OpType::kGatherNd, "elements", [](CaseWriter& w) {
    const int params = w.Int8({3, 4, 5}, kQLow);
    const int idx = w.Const32({2, 3}, {2, 3, 4, 0, 1, 2});
    w.Op(OpType::kGatherNd, {params, idx}, {w.Int8Output({2}, kQLow)});
  });
  l.Add(OpType::kGatherNd, "nested run-time indices", [](CaseWriter& w) {
    const int params = w.Int8({3, 4, 5}, kQHigh);
    const int idx = w.Int32({1, 2, 1}, {2, 0});
    w.Op(OpType::kGatherNd, {params, idx}, {w.Int8Output({1, 2, 4, 5}, kQHigh)});
  });
  l.Add(OpType::kBroadcastArgs, "int32 run-time shapes", [](CaseWriter& w) {
    const int a = w.Int32({4}, {2, 1, 3, 1});
    const int b = w.Int32({3}, {5, 1, 4});
    w.Op(OpType::kBroadcastArgs, {a, b}, {w.Output({4}, TflType::kInt32)});
  });
  l.Add(
      OpType::kBroadcastArgs, "int64 constant and run-time",
      [](CaseWriter& w) {
        const int a = w.Const64({2}, {6, 1});
        const int b = w.Int64({4}, {1, 7, 1, 9});
        w.Op(OpType::kBroadcastArgs, {a, b}, {w.Output({4}, TflType::kInt64)});
      },
      "the interpreter build hands no int64 output to JavaScript, and BROADCAST_ARGS's output has "
      "its inputs' type");
  l.Add(OpType::kEmbeddingLookup, "float rows run-time ids", [](CaseWriter& w) {
    const int ids = w.Int32({5}, {5, 0, 3, 3, 1});
    const int table = w.Float({6, 4});
    w.Op(OpType::kEmbeddingLookup, {ids, table}, {w.Output({5, 4}, TflType::kFloat32)});
  });
  l.Add(OpType::kEmbeddingLookup, "int8 rows of rank 3", [](CaseWriter& w) {
    const int ids = w.Const32({3}, {4, 0, 2});
    const int table = w.Int8({5, 3, 2}, kQLow);
    w.Op(OpType::kEmbeddingLookup, {ids, table}, {w.Int8Output({3, 3, 2}, kQLow)});
  });
  l.Add(OpType::kEmbeddingLookup, "int8 table dequantized", [](CaseWriter& w) {
    const int ids = w.Int32({4}, {1, 3, 3, 0});
    const int table = w.ConstInt8({4, 6}, PerTensor(0.05f, 0));
    w.Op(OpType::kEmbeddingLookup, {ids, table}, {w.Output({4, 6}, TflType::kFloat32)});
  });
}

void AddRearrangeCases(CaseList& l) {
  l.Add(OpType::kReverseV2, "axis 1", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 4}, kQ);
    w.Op(OpType::kReverseV2, {in, w.Const32({1}, {1})}, {w.Int8Output({2, 3, 4}, kQ)});
  });
  l.Add(OpType::kReverseV2, "axis -1 float", [](CaseWriter& w) {
    const int in = w.Float({3, 5});
    w.Op(OpType::kReverseV2, {in, w.Const32({1}, {-1})}, {w.Output({3, 5}, TflType::kFloat32)});
  });
  l.Add(OpType::kMirrorPad, "REFLECT", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 4}, kQ);
    const int pads = w.Const32({3, 2}, {1, 1, 2, 0, 0, 3});
    w.Op(OpType::kMirrorPad, {in, pads}, {w.Int8Output({4, 5, 7}, kQ)}, MirrorPadOpts{0});
  });
  l.Add(OpType::kMirrorPad, "SYMMETRIC int64 paddings", [](CaseWriter& w) {
    const int in = w.Int8({1, 3, 2, 2}, kQHigh);
    const int pads = w.Const64({4, 2}, {0, 0, 3, 2, 1, 2, 0, 0});
    w.Op(OpType::kMirrorPad, {in, pads}, {w.Int8Output({1, 8, 5, 2}, kQHigh)}, MirrorPadOpts{1});
  });
  l.Add(OpType::kDepthToSpace, "block 2", [](CaseWriter& w) {
    const int in = w.Int8({1, 2, 3, 8}, kQ);
    w.Op(OpType::kDepthToSpace, {in}, {w.Int8Output({1, 4, 6, 2}, kQ)}, BlockSizeOpts{2});
  });
  l.Add(OpType::kDepthToSpace, "block 3 batch 2", [](CaseWriter& w) {
    const int in = w.Int8({2, 1, 2, 9}, kQLow);
    w.Op(OpType::kDepthToSpace, {in}, {w.Int8Output({2, 3, 6, 1}, kQLow)}, BlockSizeOpts{3});
  });
  l.Add(OpType::kSpaceToDepth, "block 2", [](CaseWriter& w) {
    const int in = w.Int8({1, 4, 6, 2}, kQ);
    w.Op(OpType::kSpaceToDepth, {in}, {w.Int8Output({1, 2, 3, 8}, kQ)}, BlockSizeOpts{2});
  });
  l.Add(OpType::kSpaceToDepth, "block 3 batch 2", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 3, 1}, kQHigh);
    w.Op(OpType::kSpaceToDepth, {in}, {w.Int8Output({2, 1, 1, 9}, kQHigh)}, BlockSizeOpts{3});
  });
  l.Add(OpType::kBatchToSpaceNd, "block 2x2", [](CaseWriter& w) {
    const int in = w.Int8({4, 2, 2, 3}, kQ);
    w.Op(OpType::kBatchToSpaceNd, {in, w.Const32({2}, {2, 2}), w.Const32({2, 2}, {0, 0, 0, 0})},
         {w.Int8Output({1, 4, 4, 3}, kQ)});
  });
  l.Add(OpType::kBatchToSpaceNd, "block 2x3 cropped", [](CaseWriter& w) {
    const int in = w.Int8({12, 2, 3, 2}, kQLow);
    w.Op(OpType::kBatchToSpaceNd, {in, w.Const32({2}, {2, 3}), w.Const32({2, 2}, {0, 1, 2, 1})},
         {w.Int8Output({2, 3, 6, 2}, kQLow)});
  });
  l.Add(OpType::kBatchToSpaceNd, "3-D cropped", [](CaseWriter& w) {
    const int in = w.Int8({4, 3, 2}, kQ);
    w.Op(OpType::kBatchToSpaceNd, {in, w.Const32({1}, {2}), w.Const32({1, 2}, {1, 0})},
         {w.Int8Output({2, 5, 2}, kQ)});
  });
  l.Add(OpType::kSpaceToBatchNd, "block 2x2", [](CaseWriter& w) {
    const int in = w.Int8({1, 4, 4, 3}, kQHigh);
    w.Op(OpType::kSpaceToBatchNd, {in, w.Const32({2}, {2, 2}), w.Const32({2, 2}, {0, 0, 0, 0})},
         {w.Int8Output({4, 2, 2, 3}, kQHigh)});
  });
  // Padding with zero point 0: TFLite Micro pads with raw 0, the interpreter with the zero point
  // (see the hand-derived case in the oracle test), and both agree only there.
  l.Add(OpType::kSpaceToBatchNd, "block 2x3 padded", [](CaseWriter& w) {
    const QuantParams q = PerTensor(0.05f, 0);
    const int in = w.Int8({2, 3, 5, 2}, q);
    w.Op(OpType::kSpaceToBatchNd, {in, w.Const32({2}, {2, 3}), w.Const32({2, 2}, {1, 0, 0, 1})},
         {w.Int8Output({12, 2, 2, 2}, q)});
  });
  l.Add(
      OpType::kSpaceToBatchNd, "block 2 padded zp 5",
      [](CaseWriter& w) {
        const QuantParams q = PerTensor(0.05f, 5);
        const int in = w.Int8({1, 3, 2, 1}, q);
        w.Op(OpType::kSpaceToBatchNd, {in, w.Const32({2}, {2, 1}), w.Const32({2, 2}, {1, 0, 0, 0})},
             {w.Int8Output({2, 2, 2, 1}, q)});
      },
      kPadsWithRawZero);
  l.Add(OpType::kSpaceToBatchNd, "3-D padded float", [](CaseWriter& w) {
    const int in = w.Float({1, 5, 2});
    w.Op(OpType::kSpaceToBatchNd, {in, w.Const32({1}, {2}), w.Const32({1, 2}, {1, 0})},
         {w.Output({2, 3, 2}, TflType::kFloat32)});
  });
}

void AddReductionCases(CaseList& l) {
  for (OpType type : {OpType::kArgMax, OpType::kArgMin}) {
    l.Add(type, "axis 1 int32 ties", [type](CaseWriter& w) {
      const int in = w.Int8({2, 5, 3}, kQ, -2, 2);
      w.Op(type, {in, w.Const32({1}, {1})}, {w.Output({2, 3}, TflType::kInt32)}, ArgMinMaxOpts{});
    });
    l.Add(type, "axis -1 int64", [type](CaseWriter& w) {
      const int in = w.Int8({3, 4, 6}, kQLow);
      w.Op(type, {in, w.Const32({}, {-1})}, {w.Output({3, 4}, TflType::kInt64)},
           ArgMinMaxOpts{TflType::kInt64});
    });
    l.Add(type, "float axis 0", [type](CaseWriter& w) {
      const int in = w.Float({4, 3}, -1.0f, 1.0f);
      w.Op(type, {in, w.Const32({1}, {0})}, {w.Output({3}, TflType::kInt32)}, ArgMinMaxOpts{});
    });
  }
  for (OpType type : {OpType::kReduceMax, OpType::kReduceMin}) {
    l.Add(type, "axis 1", [type](CaseWriter& w) {
      const int in = w.Int8({2, 3, 4}, kQ);
      w.Op(type, {in, w.Const32({1}, {1})}, {w.Int8Output({2, 4}, kQ)}, ReducerOpts{false});
    });
    l.Add(type, "axes 0,2 keep_dims", [type](CaseWriter& w) {
      const int in = w.Int8({3, 2, 5}, kQLow);
      w.Op(type, {in, w.Const32({2}, {0, -1})}, {w.Int8Output({1, 2, 1}, kQLow)},
           ReducerOpts{true});
    });
    l.Add(type, "all axes float keep_dims", [type](CaseWriter& w) {
      const int in = w.Float({2, 3});
      w.Op(type, {in, w.Const32({2}, {0, 1})}, {w.Output({1, 1}, TflType::kFloat32)},
           ReducerOpts{true});
    });
    l.Add(
        type, "all axes to a scalar",
        [type](CaseWriter& w) {
          const int in = w.Int8({3, 4}, kQHigh);
          w.Op(type, {in, w.Const32({2}, {1, 0})}, {w.Int8Output({}, kQHigh)}, ReducerOpts{false});
        },
        kNoScalarOutput);
  }
  l.Add(
      OpType::kSum, "axis 1 requantized",
      [](CaseWriter& w) {
        const int in = w.Int8({2, 3, 4}, kQ);
        w.Op(OpType::kSum, {in, w.Const32({1}, {1})}, {w.Int8Output({2, 4}, PerTensor(0.2f, 10))},
             ReducerOpts{false});
      },
      kSumInIntegers);
  l.Add(
      OpType::kSum, "axes 0,2 keep_dims zp extremes",
      [](CaseWriter& w) {
        const int in = w.Int8({3, 2, 5}, kQLow);
        w.Op(OpType::kSum, {in, w.Const32({2}, {0, 2})},
             {w.Int8Output({1, 2, 1}, PerTensor(1.5f, 127))}, ReducerOpts{true});
      },
      kSumInIntegers);
  l.Add(OpType::kSum, "same quantization zp 0", [](CaseWriter& w) {
    const QuantParams q = PerTensor(0.05f, 0);
    const int in = w.Int8({4, 6}, q, -10, 10);
    w.Op(OpType::kSum, {in, w.Const32({1}, {-1})}, {w.Int8Output({4}, q)}, ReducerOpts{false});
  });
  l.Add(
      OpType::kSum, "same quantization zp -3",
      [](CaseWriter& w) {
        const int in = w.Int8({4, 6}, kQ, -10, 10);
        w.Op(OpType::kSum, {in, w.Const32({1}, {-1})}, {w.Int8Output({4}, kQ)}, ReducerOpts{false});
      },
      kSumOfRawValues);
  l.Add(OpType::kSum, "float", [](CaseWriter& w) {
    const int in = w.Float({3, 4});
    w.Op(OpType::kSum, {in, w.Const32({1}, {0})}, {w.Output({4}, TflType::kFloat32)},
         ReducerOpts{false});
  });
}

void AddComparisonCases(CaseList& l) {
  const OpType kComparisons[] = {OpType::kEqual,        OpType::kNotEqual, OpType::kGreater,
                                 OpType::kGreaterEqual, OpType::kLess,     OpType::kLessEqual};
  for (OpType type : kComparisons) {
    l.Add(type, "same quantization", [type](CaseWriter& w) {
      const int a = w.Int8({2, 3, 4}, kQ, -4, 4);
      const int b = w.Int8({2, 3, 4}, kQ, -4, 4);
      w.Op(type, {a, b}, {w.Output({2, 3, 4}, TflType::kBool)});
    });
    l.Add(type, "broadcast rescaled", [type](CaseWriter& w) {
      const int a = w.Int8({2, 3, 4}, kQLow);
      const int b = w.Int8({4}, kQHigh);
      w.Op(type, {a, b}, {w.Output({2, 3, 4}, TflType::kBool)});
    });
    l.Add(type, "int32 broadcast", [type](CaseWriter& w) {
      const int a = w.Int32Random({3, 1}, -3, 3);
      const int b = w.Int32Random({1, 4}, -3, 3);
      w.Op(type, {a, b}, {w.Output({3, 4}, TflType::kBool)});
    });
    l.Add(type, "float", [type](CaseWriter& w) {
      const int a = w.Float({6}, -1.0f, 1.0f);
      const int b = w.Float({6}, -1.0f, 1.0f);
      w.Op(type, {a, b}, {w.Output({6}, TflType::kBool)});
    });
  }
  l.Add(OpType::kEqual, "bool", [](CaseWriter& w) {
    const int a = w.Bool({2, 3});
    const int b = w.Bool({3});
    w.Op(OpType::kEqual, {a, b}, {w.Output({2, 3}, TflType::kBool)});
  });
  for (OpType type : {OpType::kLogicalAnd, OpType::kLogicalOr}) {
    l.Add(type, "broadcast", [type](CaseWriter& w) {
      const int a = w.Bool({2, 3, 4});
      const int b = w.Bool({3, 1});
      w.Op(type, {a, b}, {w.Output({2, 3, 4}, TflType::kBool)});
    });
  }
  l.Add(OpType::kLogicalNot, "rank 3", [](CaseWriter& w) {
    const int a = w.Bool({2, 3, 4});
    w.Op(OpType::kLogicalNot, {a}, {w.Output({2, 3, 4}, TflType::kBool)});
  });
  l.Add(OpType::kSelectV2, "same shapes", [](CaseWriter& w) {
    const int c = w.Bool({2, 3});
    const int x = w.Int8({2, 3}, kQ);
    const int y = w.Int8({2, 3}, kQ);
    w.Op(OpType::kSelectV2, {c, x, y}, {w.Int8Output({2, 3}, kQ)});
  });
  l.Add(OpType::kSelectV2, "broadcast", [](CaseWriter& w) {
    const int c = w.Bool({4});
    const int x = w.Int8({3, 1}, kQLow);
    const int y = w.Int8({2, 3, 4}, kQLow);
    w.Op(OpType::kSelectV2, {c, x, y}, {w.Int8Output({2, 3, 4}, kQLow)});
  });
  l.Add(OpType::kSelectV2, "float", [](CaseWriter& w) {
    const int c = w.Bool({2, 1});
    const int x = w.Float({2, 5});
    const int y = w.Float({5});
    w.Op(OpType::kSelectV2, {c, x, y}, {w.Output({2, 5}, TflType::kFloat32)});
  });
}

void AddUnaryCases(CaseList& l) {
  l.Add(OpType::kAbs, "same scale", [](CaseWriter& w) {
    const int in = w.Int8({4, 8}, kQ);
    w.Op(OpType::kAbs, {in}, {w.Int8Output({4, 8}, PerTensor(0.05f, -128))});
  });
  l.Add(OpType::kAbs, "rescaled zp extremes", [](CaseWriter& w) {
    const int in = w.Int8({3, 7}, kQHigh);
    w.Op(OpType::kAbs, {in}, {w.Int8Output({3, 7}, PerTensor(0.013f, -128))});
  });
  l.Add(OpType::kAbs, "float", [](CaseWriter& w) {
    const int in = w.Float({9});
    w.Op(OpType::kAbs, {in}, {w.Output({9}, TflType::kFloat32)});
  });
  l.Add(OpType::kNeg, "float", [](CaseWriter& w) {
    const int in = w.Float({2, 5});
    w.Op(OpType::kNeg, {in}, {w.Output({2, 5}, TflType::kFloat32)});
  });
  const std::pair<TflType, TflType> kCasts[] = {
      {TflType::kInt8, TflType::kInt32},    {TflType::kInt8, TflType::kFloat32},
      {TflType::kFloat32, TflType::kInt8},  {TflType::kFloat32, TflType::kInt32},
      {TflType::kInt32, TflType::kFloat32}, {TflType::kBool, TflType::kInt32},
      {TflType::kInt32, TflType::kInt8}};
  for (const auto& cast : kCasts) {
    // Named copies: clang 14 (the fuzz build's) cannot capture structured bindings.
    const TflType from = cast.first, to = cast.second;
    l.Add(OpType::kCast,
          std::to_string(static_cast<int>(from)) + " to " + std::to_string(static_cast<int>(to)),
          [from, to](CaseWriter& w) {
            int in = 0;
            if (from == TflType::kInt8) in = w.Int8({2, 6}, kQ);
            if (from == TflType::kFloat32) in = w.Float({2, 6}, -100.0f, 100.0f);
            if (from == TflType::kInt32) in = w.Int32Random({2, 6}, -300, 300);
            if (from == TflType::kBool) in = w.Bool({2, 6});
            w.Op(OpType::kCast, {in}, {w.Output({2, 6}, to)});
          });
  }
}

}  // namespace

int TflTypeSize(int8_t type) {
  switch (static_cast<TflType>(type)) {
    case TflType::kInt8:
    case TflType::kUint8:
    case TflType::kBool:
      return 1;
    case TflType::kInt16:
      return 2;
    case TflType::kInt32:
    case TflType::kUint32:
    case TflType::kFloat32:
      return 4;
    case TflType::kInt64:
    case TflType::kUint64:
      return 8;
    default:
      return 0;
  }
}

const std::vector<OpCase>& LayoutAndSelectionCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    AddShapeCases(l);
    AddJoinSplitCases(l);
    AddGatherCases(l);
    AddRearrangeCases(l);
    AddReductionCases(l);
    AddComparisonCases(l);
    AddUnaryCases(l);
    return l.cases;
  }();
  return cases;
}

const std::vector<OpCase>& AllOpCases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all = LayoutAndSelectionCases();
    for (const std::vector<OpCase>* list :
         {&MathCases(), &NormalizationCases(), &TransposeConvCases(), &SvdfCases(),
          &DetectionPostprocessCases(), &LstmCases(), &SignalCases(), &SignalFilterBankCases(),
          &SignalFftCases(), &StreamCases(), &CircularBufferCases(), &Int16Cases()}) {
      all.insert(all.end(), list->begin(), list->end());
    }
    return all;
  }();
  return cases;
}

std::vector<OpCase> CasesOf(OpType type) {
  std::vector<OpCase> out;
  const size_t int8_cases = AllOpCases().size() - Int16Cases().size();
  for (size_t i = 0; i < int8_cases; ++i) {
    if (AllOpCases()[i].type == type) out.push_back(AllOpCases()[i]);
  }
  return out;
}

CaseModel CombinedCaseModel(const std::vector<OpCase>& cases) {
  CaseModel m;
  std::vector<int32_t> inputs, outputs;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseIo io = cases[i].add(m.builder, "case" + std::to_string(i) + "/", false);
    inputs.insert(inputs.end(), io.inputs.begin(), io.inputs.end());
    outputs.insert(outputs.end(), io.outputs.begin(), io.outputs.end());
    for (auto& bytes : io.input_bytes) m.inputs.push_back(std::move(bytes));
  }
  m.builder.SetInputs(inputs);
  m.builder.SetOutputs(outputs);
  m.input_tensors.assign(inputs.begin(), inputs.end());
  m.output_tensors.assign(outputs.begin(), outputs.end());
  m.model = m.builder.Finish();
  return m;
}

CaseModel SingleCaseModel(const OpCase& c) { return CombinedCaseModel({c}); }

CaseModel ConstantInputsModel(const std::vector<OpCase>& cases) {
  CaseModel m;
  const int unused = m.builder.AddTensor("unused_input", {1}, TflType::kInt8, kQ);
  std::vector<int32_t> outputs;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseIo io = cases[i].add(m.builder, "case" + std::to_string(i) + "/", true);
    outputs.insert(outputs.end(), io.outputs.begin(), io.outputs.end());
  }
  m.builder.SetInputs({unused});
  m.builder.SetOutputs(outputs);
  m.input_tensors = {unused};
  m.inputs = {{0}};
  m.output_tensors.assign(outputs.begin(), outputs.end());
  m.model = m.builder.Finish();
  return m;
}

}  // namespace boardlab::testing
