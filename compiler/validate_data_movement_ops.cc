// Operand checks of the layout and data movement ops. Their kernels copy values without
// arithmetic, so every element type is accepted that TFLite Micro's kernel accepts or that a raw
// copy serves equally; index, shape and axis operands must be constant (boardlab plans every
// shape when compiling). The rules follow TFLite Micro's Prepare functions.

#include <algorithm>
#include <numeric>

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

constexpr std::initializer_list<DataType> kCopyTypes = {
    DataType::kInt8,  DataType::kUint8,   DataType::kInt16, DataType::kInt32,
    DataType::kInt64, DataType::kFloat32, DataType::kBool};
constexpr const char* kCopyTypesText =
    "boardlab copies int8, uint8, int16, int32, int64, "
    "float32 and bool tensors";

// Input 0 and output 0 have one type, a copyable one.
absl::Status CopyTypes(const OpChecker& c) {
  RETURN_IF_ERROR(c.TypeIn(c.In(0), "input", kCopyTypes, kCopyTypesText));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  c.WarnIfRequantized(c.In(0), c.Out());
  return absl::OkStatus();
}

// A constant operand holding one axis (a scalar or a one-element vector).
absl::Status ScalarAxis(const OpChecker& c, size_t input, size_t rank, int32_t& axis) {
  std::vector<int64_t> values;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(input), "axis", values));
  if (values.size() != 1) {
    return c.Invalid(absl::StrCat("axis '", c.In(input).name, "' holds ", values.size(),
                                  " values, expected one"));
  }
  return c.Axis(values[0], rank, "axis", axis);
}

absl::Status ValidateExpandDims(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  std::vector<int32_t> shape = c.In(0).shape;
  int32_t axis = 0;
  RETURN_IF_ERROR(ScalarAxis(c, 1, shape.size() + 1, axis));
  shape.insert(shape.begin() + axis, 1);
  return c.OutputShape(shape);
}

absl::Status ValidateShape(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kInt32, DataType::kInt64},
                           "SHAPE writes int32 or int64"));
  return c.OutputShape({static_cast<int32_t>(c.In(0).shape.size())});
}

absl::Status ValidateFill(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& value = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(value, "value", {DataType::kInt8, DataType::kInt32, DataType::kFloat32},
                           "TFLite Micro's FILL takes float32, int32 or int8"));
  RETURN_IF_ERROR(c.SameType(value, c.Out()));
  if (!value.shape.empty()) {
    return c.Invalid(absl::StrCat("value '", value.name, "' has shape ", ShapeString(value.shape),
                                  ", expected a scalar"));
  }
  c.WarnIfRequantized(value, c.Out());
  // The output shape is the model's; a constant dims operand must agree with it (TFLite Micro).
  const Tensor& dims = c.In(0);
  if (!dims.is_constant) return absl::OkStatus();
  std::vector<int64_t> values;
  RETURN_IF_ERROR(c.ConstantIndices(dims, "dims", values));
  if (values != std::vector<int64_t>(c.Out().shape.begin(), c.Out().shape.end())) {
    return c.Invalid(absl::StrCat("dims '", dims.name, "' [", absl::StrJoin(values, ","),
                                  "] differ from the output shape ", ShapeString(c.Out().shape)));
  }
  return absl::OkStatus();
}

absl::Status ValidateZerosLike(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(c.TypeIn(
      c.In(0), "input", {DataType::kInt8, DataType::kInt32, DataType::kInt64, DataType::kFloat32},
      "TFLite Micro's ZEROS_LIKE takes int64, int32, int8 or float32"));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  return c.OutputShape(c.In(0).shape);
}

absl::Status ValidateBroadcastTo(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  std::vector<int64_t> target;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "shape", target));
  const std::vector<int32_t> shape(target.begin(), target.end());
  std::vector<int32_t> joined;
  if (shape.size() < c.In(0).shape.size() || !BroadcastShape(c.In(0).shape, shape, joined) ||
      joined != shape) {
    return c.Invalid(absl::StrCat("input ", ShapeString(c.In(0).shape), " does not broadcast to ",
                                  ShapeString(shape)));
  }
  return c.OutputShape(shape);
}

// BROADCAST_ARGS (broadcast_args.cc): the broadcast of two shapes, int32 or int64 vectors of one
// type, into a vector of that type as long as the longer one. The shapes may be run-time
// values; constant ones that cannot broadcast are refused here.
absl::Status ValidateBroadcastArgs(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& a = c.In(0);
  const Tensor& b = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(a, "shape", {DataType::kInt32, DataType::kInt64},
                           "TFLite Micro's BROADCAST_ARGS takes int32 or int64 shapes"));
  RETURN_IF_ERROR(c.SameType(a, b));
  RETURN_IF_ERROR(c.SameType(a, c.Out()));
  RETURN_IF_ERROR(c.Rank(a, "shape", 1, 1));
  RETURN_IF_ERROR(c.Rank(b, "shape", 1, 1));
  if (a.is_constant && b.is_constant) {
    std::vector<int64_t> va, vb;
    RETURN_IF_ERROR(c.ConstantIndices(a, "shape", va));
    RETURN_IF_ERROR(c.ConstantIndices(b, "shape", vb));
    std::vector<int32_t> joined;
    if (!BroadcastShape(std::vector<int32_t>(va.begin(), va.end()),
                        std::vector<int32_t>(vb.begin(), vb.end()), joined)) {
      return c.Invalid(absl::StrCat("shapes [", absl::StrJoin(va, ","), "] and [",
                                    absl::StrJoin(vb, ","), "] do not broadcast"));
    }
  }
  return c.OutputShape({std::max(a.shape[0], b.shape[0])});
}

absl::Status ValidatePack(const OpChecker& c) {
  const size_t n = c.op().inputs.size();
  if (n == 0) return c.Invalid("has no inputs");
  RETURN_IF_ERROR(c.Arity(n, n));
  RETURN_IF_ERROR(CopyTypes(c));
  const auto& o = c.op().opts<PackOptions>();
  if (o.count != static_cast<int32_t>(n)) {
    return c.Invalid(absl::StrCat("values_count ", o.count, " but ", n, " inputs"));
  }
  for (size_t i = 1; i < n; ++i) {
    RETURN_IF_ERROR(c.SameType(c.In(0), c.In(i)));
    if (c.In(i).shape != c.In(0).shape) {
      return c.Invalid(absl::StrCat("input ", i, " ", ShapeString(c.In(i).shape),
                                    " differs from input 0 ", ShapeString(c.In(0).shape)));
    }
  }
  std::vector<int32_t> shape = c.In(0).shape;
  int32_t axis = 0;
  RETURN_IF_ERROR(c.Axis(o.axis, shape.size() + 1, "axis", axis));
  shape.insert(shape.begin() + axis, static_cast<int32_t>(n));
  return c.OutputShape(shape);
}

// Every output has `shape` with `extents[i]` along `axis` and the input's type.
absl::Status SplitOutputs(const OpChecker& c, const Tensor& in, int32_t axis,
                          const std::vector<int64_t>& extents, bool keep_axis) {
  for (size_t i = 0; i < extents.size(); ++i) {
    std::vector<int32_t> shape = in.shape;
    if (keep_axis) {
      shape[axis] = static_cast<int32_t>(extents[i]);
    } else {
      shape.erase(shape.begin() + axis);
    }
    const Tensor& out = c.Out(i);
    RETURN_IF_ERROR(c.SameType(in, out));
    c.WarnIfRequantized(in, out);
    if (out.shape != shape) {
      return c.Invalid(absl::StrCat("output ", i, " '", out.name, "' has shape ",
                                    ShapeString(out.shape), ", expected ", ShapeString(shape)));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateUnpack(const OpChecker& c) {
  const auto& o = c.op().opts<PackOptions>();
  if (o.count < 1) return c.Invalid(absl::StrCat("num ", o.count, " must be at least 1"));
  RETURN_IF_ERROR(c.Arity(1, 1, static_cast<size_t>(o.count)));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", kCopyTypes, kCopyTypesText));
  int32_t axis = 0;
  RETURN_IF_ERROR(c.Axis(o.axis, in.shape.size(), "axis", axis));
  if (in.shape[axis] != o.count) {
    return c.Invalid(
        absl::StrCat("num ", o.count, " but dimension ", axis, " has size ", in.shape[axis]));
  }
  return SplitOutputs(c, in, axis, std::vector<int64_t>(o.count, 1), /*keep_axis=*/false);
}

// num_splits, and the operator's arity: `inputs` inputs and one output per split.
absl::Status NumSplits(const OpChecker& c, size_t inputs, int32_t& n) {
  n = c.op().opts<SplitOptions>().num_splits;
  if (n < 1) return c.Invalid(absl::StrCat("num_splits ", n, " must be at least 1"));
  return c.Arity(inputs, inputs, static_cast<size_t>(n));
}

absl::Status ValidateSplit(const OpChecker& c) {
  int32_t n = 0;
  RETURN_IF_ERROR(NumSplits(c, 2, n));
  const Tensor& in = c.In(1);  // SPLIT takes (axis, input)
  RETURN_IF_ERROR(c.TypeIn(in, "input", kCopyTypes, kCopyTypesText));
  int32_t axis = 0;
  RETURN_IF_ERROR(ScalarAxis(c, 0, in.shape.size(), axis));
  if (in.shape[axis] % n != 0) {
    return c.Invalid(absl::StrCat("dimension ", axis, " of size ", in.shape[axis],
                                  " does not split into ", n, " equal parts"));
  }
  return SplitOutputs(c, in, axis, std::vector<int64_t>(n, in.shape[axis] / n), true);
}

absl::Status ValidateSplitV(const OpChecker& c) {
  int32_t n = 0;
  RETURN_IF_ERROR(NumSplits(c, 3, n));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", kCopyTypes, kCopyTypesText));
  int32_t axis = 0;
  RETURN_IF_ERROR(ScalarAxis(c, 2, in.shape.size(), axis));
  std::vector<int64_t> sizes;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "size_splits", sizes));
  if (sizes.size() != static_cast<size_t>(n)) {
    return c.Invalid(
        absl::StrCat("size_splits has ", sizes.size(), " entries for ", n, " outputs"));
  }
  // One entry may be -1: whatever the others leave of the dimension.
  const auto inferred = std::count(sizes.begin(), sizes.end(), -1);
  int64_t known = 0;
  for (int64_t s : sizes) {
    if (s < -1) return c.Invalid(absl::StrCat("size_splits entry ", s, " is negative"));
    if (s > 0) known += s;
  }
  const int64_t dim = in.shape[axis];
  if (inferred > 1 || known > dim || (inferred == 0 && known != dim)) {
    return c.Invalid(absl::StrCat("size_splits [", absl::StrJoin(sizes, ","),
                                  "] do not add up to dimension ", axis, " of size ", dim));
  }
  for (int64_t& s : sizes) {
    if (s == -1) s = dim - known;
  }
  if (std::count(sizes.begin(), sizes.end(), 0) > 0) {
    return c.Invalid("an output would be empty (zero-sized tensors are not supported)");
  }
  return SplitOutputs(c, in, axis, sizes, true);
}

absl::Status IndexType(const OpChecker& c, const Tensor& t, const char* role) {
  return c.TypeIn(t, role, {DataType::kInt32, DataType::kInt64}, "indices are int32 or int64");
}

absl::Status ValidateGather(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  const Tensor& params = c.In(0);
  const Tensor& indices = c.In(1);
  RETURN_IF_ERROR(IndexType(c, indices, "indices"));
  const auto& o = c.op().opts<GatherOptions>();
  int32_t axis = 0;
  RETURN_IF_ERROR(c.Axis(o.axis, params.shape.size(), "axis", axis));
  int64_t batch_dims = o.batch_dims;
  if (batch_dims < 0) batch_dims += static_cast<int64_t>(indices.shape.size());
  if (batch_dims < 0 || batch_dims > axis ||
      batch_dims > static_cast<int64_t>(indices.shape.size())) {
    return c.Invalid(absl::StrCat("batch_dims ", o.batch_dims, " with axis ", o.axis,
                                  " and indices of rank ", indices.shape.size()));
  }
  for (int64_t i = 0; i < batch_dims; ++i) {
    if (params.shape[i] != indices.shape[i]) {
      return c.Invalid(absl::StrCat("batch dimension ", i, " differs: params ",
                                    ShapeString(params.shape), ", indices ",
                                    ShapeString(indices.shape)));
    }
  }
  std::vector<int32_t> shape(params.shape.begin(), params.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin() + batch_dims, indices.shape.end());
  shape.insert(shape.end(), params.shape.begin() + axis + 1, params.shape.end());
  if (shape.size() > 6) return c.Invalid("the output would have rank above 6");
  return c.OutputShape(shape);
}

// EMBEDDING_LOOKUP (embedding_lookup.cc): rows of a table of rank >= 2 picked by int32 ids of
// rank 1. float32 rows and int8 rows into int8 are copied raw; int8 rows into float32 are
// dequantized with the table's one scale, whose zero point TFLite Micro requires to be 0.
absl::Status ValidateEmbeddingLookup(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& ids = c.In(0);
  const Tensor& table = c.In(1);
  const Tensor& out = c.Out();
  RETURN_IF_ERROR(
      c.TypeIn(ids, "ids", {DataType::kInt32}, "TFLite Micro's EMBEDDING_LOOKUP takes int32 ids"));
  RETURN_IF_ERROR(c.Rank(ids, "ids", 1, 1));
  RETURN_IF_ERROR(c.TypeIn(table, "table", {DataType::kFloat32, DataType::kInt8},
                           "TFLite Micro's EMBEDDING_LOOKUP takes float32 or int8 rows"));
  RETURN_IF_ERROR(c.Rank(table, "table", 2, 6));
  if (table.type == DataType::kFloat32) {
    RETURN_IF_ERROR(c.SameType(table, out));
  } else {
    RETURN_IF_ERROR(c.TypeIn(out, "output", {DataType::kFloat32, DataType::kInt8},
                             "TFLite Micro's EMBEDDING_LOOKUP gives int8 rows as int8 or float32"));
  }
  if (table.type == DataType::kInt8 && out.type == DataType::kFloat32) {
    RETURN_IF_ERROR(c.PerTensorQuantized(table, "table"));
    if (table.quant.zp() != 0) {
      return c.Unsupported(absl::StrCat("table '", table.name, "' has zero point ",
                                        table.quant.zp(),
                                        "; TFLite Micro dequantizes EMBEDDING_LOOKUP rows with "
                                        "zero point 0 only"));
    }
  }
  std::vector<int32_t> shape = table.shape;
  shape[0] = ids.shape[0];
  return c.OutputShape(shape);
}

absl::Status ValidateGatherNd(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  const Tensor& params = c.In(0);
  const Tensor& indices = c.In(1);
  RETURN_IF_ERROR(IndexType(c, indices, "indices"));
  RETURN_IF_ERROR(c.Rank(params, "params", 1, 6));
  RETURN_IF_ERROR(c.Rank(indices, "indices", 1, 6));
  const int32_t nd = indices.shape.back();
  if (nd < 1 || nd > static_cast<int32_t>(params.shape.size())) {
    return c.Invalid(absl::StrCat("indices' last dimension ", nd, " exceeds the params rank ",
                                  params.shape.size()));
  }
  std::vector<int32_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), params.shape.begin() + nd, params.shape.end());
  return c.OutputShape(shape);
}

absl::Status ValidateReverse(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  std::vector<int64_t> axes;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "axes", axes));
  std::vector<int32_t> seen;
  for (int64_t a : axes) {
    int32_t axis = 0;
    RETURN_IF_ERROR(c.Axis(a, c.In(0).shape.size(), "axis", axis));
    if (std::count(seen.begin(), seen.end(), axis) > 0) {
      return c.Invalid(absl::StrCat("axis ", axis, " appears twice"));
    }
    seen.push_back(axis);
  }
  return c.OutputShape(c.In(0).shape);
}

absl::Status ValidateMirrorPad(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(CopyTypes(c));
  const std::vector<int32_t>& in = c.In(0).shape;
  std::vector<int64_t> pads;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "paddings", pads));
  if (c.In(1).shape != std::vector<int32_t>{static_cast<int32_t>(in.size()), 2}) {
    return c.Invalid(absl::StrCat("paddings have shape ", ShapeString(c.In(1).shape),
                                  ", expected [", in.size(), ",2]"));
  }
  // REFLECT mirrors around the border element, SYMMETRIC includes it: at most size - 1 or size.
  const bool reflect = c.op().opts<MirrorPadOptions>().mode == MirrorPadMode::kReflect;
  std::vector<int32_t> shape(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t limit = reflect ? in[d] - 1 : in[d];
    for (int64_t p : {pads[2 * d], pads[2 * d + 1]}) {
      if (p < 0 || p > limit) {
        return c.Invalid(absl::StrCat("padding ", p, " on dimension ", d, " of size ", in[d], " (",
                                      reflect ? "REFLECT" : "SYMMETRIC", " allows 0 to ", limit,
                                      ")"));
      }
    }
    shape[d] = static_cast<int32_t>(in[d] + pads[2 * d] + pads[2 * d + 1]);
  }
  return c.OutputShape(shape);
}

absl::Status ValidateDepthSpace(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(CopyTypes(c));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 4, 4));
  const int32_t b = c.op().opts<BlockOptions>().block_size;
  if (b < 1) return c.Invalid(absl::StrCat("block_size ", b, " must be at least 1"));
  const std::vector<int32_t>& in = c.In(0).shape;
  const int64_t area = int64_t{b} * b;
  if (c.op().type == OpType::kDepthToSpace) {
    if (in[3] % area != 0) {
      return c.Invalid(absl::StrCat(in[3], " channels are not a multiple of block_size^2 ", area));
    }
    const int64_t h = int64_t{in[1]} * b, w = int64_t{in[2]} * b;
    if (h > kMaxDimension || w > kMaxDimension) return c.Invalid("the output is too large");
    return c.OutputShape({in[0], static_cast<int32_t>(h), static_cast<int32_t>(w),
                          static_cast<int32_t>(in[3] / area)});
  }
  if (in[1] % b != 0 || in[2] % b != 0) {
    return c.Invalid(absl::StrCat("height ", in[1], " and width ", in[2],
                                  " are not multiples of block_size ", b));
  }
  if (in[3] * area > kMaxDimension) return c.Invalid("the output has too many channels");
  return c.OutputShape({in[0], in[1] / b, in[2] / b, static_cast<int32_t>(in[3] * area)});
}

// BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND: 3-D (N,H,C) or 4-D (N,H,W,C) tensors with one block
// size and one [before, after] pair (crops or paddings) per spatial dimension.
absl::Status ValidateBatchSpace(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 3));
  RETURN_IF_ERROR(CopyTypes(c));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 3, 4));
  const std::vector<int32_t>& in = c.In(0).shape;
  const size_t spatial = in.size() - 2;
  std::vector<int64_t> block, pairs;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "block_shape", block));
  RETURN_IF_ERROR(c.ConstantIndices(c.In(2), "crops/paddings", pairs));
  if (block.size() != spatial || pairs.size() != 2 * spatial) {
    return c.Invalid(absl::StrCat("block_shape has ", block.size(), " and crops/paddings ",
                                  pairs.size(), " entries for ", spatial, " spatial dimensions"));
  }
  const bool to_space = c.op().type == OpType::kBatchToSpaceNd;
  int64_t blocks = 1;
  std::vector<int32_t> shape = in;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t b = block[d], before = pairs[2 * d], after = pairs[2 * d + 1];
    if (b < 1 || before < 0 || after < 0) {
      return c.Invalid(absl::StrCat("block ", b, " and crops/paddings ", before, ",", after,
                                    " on spatial dimension ", d));
    }
    blocks *= b;
    const int64_t size = in[d + 1];
    const int64_t out = to_space ? size * b - before - after : (size + before + after) / b;
    if (out < 1 || out > kMaxDimension || (!to_space && (size + before + after) % b != 0)) {
      return c.Invalid(absl::StrCat("spatial dimension ", d, " of size ", size, " with block ", b,
                                    " and ", before, ",", after, to_space ? " cropped" : " padded",
                                    " gives no whole output"));
    }
    shape[d + 1] = static_cast<int32_t>(out);
  }
  if (to_space && in[0] % blocks != 0) {
    return c.Invalid(
        absl::StrCat("batch ", in[0], " is not a multiple of the block count ", blocks));
  }
  const int64_t batch = to_space ? in[0] / blocks : in[0] * blocks;
  if (batch > kMaxDimension) return c.Invalid("the output batch is too large");
  shape[0] = static_cast<int32_t>(batch);
  const bool padded = std::any_of(pairs.begin(), pairs.end(), [](int64_t p) { return p > 0; });
  if (!to_space && padded && c.Out().quant.zp() != 0) {
    c.Warn(absl::StrCat("the padding is raw 0 (real ", -c.Out().quant.zp(),
                        " x scale), not the zero point: TFLite Micro pads so"));
  }
  return c.OutputShape(shape);
}

}  // namespace

absl::Status ValidateDataMovementOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kExpandDims:
      return ValidateExpandDims(c);
    case OpType::kShape:
      return ValidateShape(c);
    case OpType::kFill:
      return ValidateFill(c);
    case OpType::kZerosLike:
      return ValidateZerosLike(c);
    case OpType::kBroadcastTo:
      return ValidateBroadcastTo(c);
    case OpType::kBroadcastArgs:
      return ValidateBroadcastArgs(c);
    case OpType::kPack:
      return ValidatePack(c);
    case OpType::kUnpack:
      return ValidateUnpack(c);
    case OpType::kSplit:
      return ValidateSplit(c);
    case OpType::kSplitV:
      return ValidateSplitV(c);
    case OpType::kGather:
      return ValidateGather(c);
    case OpType::kGatherNd:
      return ValidateGatherNd(c);
    case OpType::kEmbeddingLookup:
      return ValidateEmbeddingLookup(c);
    case OpType::kReverseV2:
      return ValidateReverse(c);
    case OpType::kMirrorPad:
      return ValidateMirrorPad(c);
    case OpType::kDepthToSpace:
    case OpType::kSpaceToDepth:
      return ValidateDepthSpace(c);
    case OpType::kBatchToSpaceNd:
    case OpType::kSpaceToBatchNd:
      return ValidateBatchSpace(c);
    default:
      return c.Invalid("not a data movement op");
  }
}

}  // namespace boardlab::compiler
