#include "compiler/split_group_conv.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/npu_constraints.h"

namespace boardlab::compiler {
namespace {

// Whether the whole grouped convolution may run on the NPU: the options allow it and it meets
// the convolution rules (which judge each group's input depth and the group count).
bool NpuMayRun(const Compilation& c, const Op& op) {
  const std::vector<OpType>& no_npu = c.options.no_npu;
  if (c.options.cpu_only || std::count(no_npu.begin(), no_npu.end(), OpType::kConv2D) > 0) {
    return false;
  }
  return CheckNpuSupport(c.graph, op, c.target.npu).empty();
}

// Entries [first, first + count) of a per-channel quantization (all of it when per-tensor).
Quantization ChannelSlice(const Quantization& q, int32_t first, int32_t count, int32_t axis) {
  if (!q.per_channel()) return q;
  Quantization out;
  out.axis = axis;
  out.scale.assign(q.scale.begin() + first, q.scale.begin() + first + count);
  out.zero_point.assign(q.zero_point.begin() + first, q.zero_point.begin() + first + count);
  return out;
}

int ConstantInt32s(Graph& g, std::string name, const std::vector<int32_t>& values) {
  Tensor t;
  t.name = std::move(name);
  t.shape = {static_cast<int32_t>(values.size())};
  t.type = DataType::kInt32;
  t.is_constant = true;
  t.data.resize(values.size() * sizeof(int32_t));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return g.AddTensor(std::move(t));
}

// groups = input channels = output channels: the weights [C,H,W,1] read as [1,H,W,C].
void ToDepthwise(Graph& g, Op& op) {
  Tensor w = g.input(op, 1);
  const int32_t c = w.shape[0], taps = w.shape[1] * w.shape[2];
  std::vector<uint8_t> hwc(w.data.size());
  for (int32_t ch = 0; ch < c; ++ch) {
    for (int32_t t = 0; t < taps; ++t) hwc[t * c + ch] = w.data[ch * taps + t];
  }
  w.name += "/depthwise";
  w.shape = {1, w.shape[1], w.shape[2], c};
  w.data = std::move(hwc);
  if (w.quant.per_channel()) w.quant.axis = 3;
  op.inputs[1] = g.AddTensor(std::move(w));
  op.type = OpType::kDepthwiseConv2D;
  op.opts<ConvOptions>().depth_multiplier = 1;
}

// One group's ops: SLICE of the input channels, CONV_2D on them. Returns the conv's output.
// Copies, not references: adding tensors may move g.tensors.
int AppendGroup(Graph& g, const Op& conv, int32_t group, int32_t groups, std::vector<Op>& out_ops) {
  const Tensor in = g.input(conv, 0);
  const Tensor w = g.input(conv, 1);
  const Tensor out = g.output(conv);
  const int32_t in_per_group = w.shape[3], out_per_group = w.shape[0] / groups;
  const std::string prefix = absl::StrCat(out.name, "/group", group);

  Tensor slice_out = in;
  slice_out.name = prefix + "/input";
  slice_out.data.clear();
  slice_out.is_constant = false;
  slice_out.shape[3] = in_per_group;
  const int begin = ConstantInt32s(g, prefix + "/begin", {0, 0, 0, group * in_per_group});
  const int size =
      ConstantInt32s(g, prefix + "/size", {in.shape[0], in.shape[1], in.shape[2], in_per_group});
  const int sliced = g.AddTensor(std::move(slice_out));
  Op slice;
  slice.type = OpType::kSlice;
  slice.inputs = {conv.inputs[0], begin, size};
  slice.outputs = {sliced};
  slice.source_index = conv.source_index;
  out_ops.push_back(std::move(slice));

  const int32_t first = group * out_per_group;
  Tensor wg = w;
  wg.name = prefix + "/weights";
  wg.shape[0] = out_per_group;
  const size_t row = wg.data.size() / w.shape[0];
  wg.data.assign(w.data.begin() + first * row, w.data.begin() + (first + out_per_group) * row);
  wg.quant = ChannelSlice(w.quant, first, out_per_group, 0);
  Op group_conv = conv;
  group_conv.inputs = {sliced, g.AddTensor(std::move(wg)), kNoTensor};
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoTensor) {
    Tensor b = g.input(conv, 2);
    b.name = prefix + "/bias";
    b.shape = {out_per_group};
    b.data.assign(b.data.begin() + first * 4, b.data.begin() + (first + out_per_group) * 4);
    b.quant = ChannelSlice(b.quant, first, out_per_group, 0);
    group_conv.inputs[2] = g.AddTensor(std::move(b));
  }
  Tensor part = out;
  part.name = prefix + "/output";
  part.shape[3] = out_per_group;
  group_conv.outputs = {g.AddTensor(std::move(part))};
  out_ops.push_back(group_conv);
  return group_conv.outputs[0];
}

// The split form: per group a SLICE and a CONV_2D, then one CONCATENATION into the output.
void AppendSplit(Graph& g, const Op& conv, std::vector<Op>& out_ops) {
  const int32_t groups = ConvGroups(g, conv);
  Op concat;
  concat.type = OpType::kConcatenation;
  for (int32_t group = 0; group < groups; ++group) {
    concat.inputs.push_back(AppendGroup(g, conv, group, groups, out_ops));
  }
  concat.outputs = conv.outputs;
  concat.options = ConcatOptions{3, Activation::kNone};  // each group applied the activation
  concat.source_index = conv.source_index;
  out_ops.push_back(std::move(concat));
}

}  // namespace

absl::Status SplitGroupConvolutions(Compilation& c) {
  Graph& g = c.graph;
  std::vector<Op> ops;
  bool changed = false;
  for (Op& op : g.ops) {
    const int32_t groups = op.dead ? 1 : ConvGroups(g, op);
    if (groups == 1 || !NpuMayRun(c, op)) {
      ops.push_back(std::move(op));
      continue;
    }
    changed = true;
    const bool depthwise = groups == g.input(op, 0).shape[3] && groups == g.output(op).shape[3];
    if (depthwise) {
      ToDepthwise(g, op);
      ops.push_back(std::move(op));
    } else {
      AppendSplit(g, op, ops);
    }
  }
  g.ops = std::move(ops);
  if (changed) g.RebuildUses();
  return VerifyGraph(g);
}

}  // namespace boardlab::compiler
