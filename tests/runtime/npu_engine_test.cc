// NPU engine tests: compile small models in-process, run each NPU partition's payload with the
// software engine and compare bit-exactly with a straightforward TFLite reference (OHWI weights
// read from the IR, arithmetic from compiler/quantization.h).

#include <cstring>
#include <random>
#include <vector>

#include "boardlab/schema/npu_payload_generated.h"
#include "compiler/cost_model.h"
#include "compiler/driver.h"
#include "compiler/npu_lowering.h"
#include "compiler/quantization.h"
#include "gtest/gtest.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/npu/npu_engine.h"
#include "runtime/npu/npu_payload.h"
#include "runtime/npu/npu_timing.h"
#include "tests/support/test_models.h"

namespace boardlab::runtime::npu {
namespace {

namespace fb = ::boardlab::npu;
using compiler::CompileOptions;
using compiler::CompileResult;
using compiler::Graph;
using compiler::NpuPartitionBlob;
using compiler::Op;
using compiler::OpType;
using compiler::Tensor;

ScalarType ScalarOf(compiler::DataType t) {
  switch (t) {
    case compiler::DataType::kUint8:
      return ScalarType::kByte;
    case compiler::DataType::kInt16:
      return ScalarType::kShort;
    case compiler::DataType::kInt32:
      return ScalarType::kInt;
    case compiler::DataType::kInt64:
      return ScalarType::kLong;
    case compiler::DataType::kFloat32:
      return ScalarType::kFloat;
    case compiler::DataType::kBool:
      return ScalarType::kBool;
    default:
      return ScalarType::kChar;
  }
}

// Graph tensor values by index (the reference's and the engine's working memory).
using Values = std::vector<std::vector<uint8_t>>;

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Runs every NPU partition of `result` with the NPU backend, in graph order, over `values`
// (inputs filled in; outputs written). Returns false on any runtime error.
struct EngineRun {
  Error init = Error::kOk;
  Error execute = Error::kOk;
  std::vector<std::vector<uint8_t>> scratch;  // per partition, after the run
  std::vector<NpuPartitionBlob> blobs;
  uint64_t cycles = 0;
};

EngineRun RunPartitions(const CompileResult& result, Values& values, EventTracer* tracer = nullptr,
                        const timing::TimingParams* params = nullptr) {
  EngineRun run;
  const compiler::Compilation& c = result.compilation;
  auto blobs = compiler::LowerNpuPartitions(c);
  EXPECT_TRUE(blobs.ok()) << blobs.status();
  if (!blobs.ok()) return run;
  run.blobs = *blobs;
  std::vector<uint8_t> arena(static_cast<size_t>(c.memory.arena_bytes) + 16);
  NpuBackend backend(params ? *params : c.target.timing);
  std::vector<uint8_t> persistent(1 << 16);
  for (const NpuPartitionBlob& blob : run.blobs) {
    MemoryAllocator allocator(persistent.data(), persistent.size());
    std::vector<uint8_t> scratch(static_cast<size_t>(blob.weight_scratch_bytes) + 16, 0xAB);
    BackendContext ctx;
    ctx.persistent = &allocator;
    ctx.arena = arena.data();
    ctx.arena_size = arena.size();
    ctx.weight_scratch = blob.weight_scratch_bytes ? scratch.data() : nullptr;
    ctx.weight_scratch_size = blob.weight_scratch_bytes ? scratch.size() : 0;
    ctx.tracer = tracer;
    Result<void*> handle =
        backend.Init(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()), ctx);
    if (!handle.ok()) {
      run.init = handle.error();
      ADD_FAILURE() << "Init: " << ToString(handle.error()) << " " << LastErrorMessage();
      return run;
    }
    std::vector<TensorView> views;
    std::vector<int> tensors = blob.input_tensors;
    tensors.insert(tensors.end(), blob.output_tensors.begin(), blob.output_tensors.end());
    views.resize(tensors.size());
    std::vector<TensorView*> args;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = c.graph.tensors[static_cast<size_t>(tensors[i])];
      auto& storage = values[static_cast<size_t>(tensors[i])];
      storage.resize(static_cast<size_t>(t.SizeBytes()));
      views[i].type = ScalarOf(t.type);
      views[i].rank = static_cast<int32_t>(t.shape.size());
      for (size_t d = 0; d < t.shape.size(); ++d) views[i].dims[d] = t.shape[d];
      views[i].data = storage.data();
      args.push_back(&views[i]);
    }
    run.execute = backend.Execute(*handle, Span<TensorView* const>(args.data(), args.size()), ctx);
    if (run.execute != Error::kOk) {
      ADD_FAILURE() << "Execute: " << ToString(run.execute) << " " << LastErrorMessage();
      return run;
    }
    run.cycles += backend.LastCycles(*handle);
    run.scratch.push_back(scratch);
  }
  return run;
}

// ---- Reference (TFLite int8 reference loops over the IR) -------------------------------------

int8_t* S8(Values& v, int t) { return reinterpret_cast<int8_t*>(v[static_cast<size_t>(t)].data()); }

void ReferenceConvLike(const Graph& g, const Op& op, Values& v) {
  const Tensor& in = g.input(op, 0);
  const Tensor& w = g.input(op, 1);
  const Tensor& out = g.output(op);
  const int8_t* x = S8(v, op.inputs[0]);
  const int8_t* wd = reinterpret_cast<const int8_t*>(w.data.data());
  const int32_t* bias = op.inputs.size() > 2 && op.inputs[2] >= 0
                            ? reinterpret_cast<const int32_t*>(g.input(op, 2).data.data())
                            : nullptr;
  v[static_cast<size_t>(op.outputs[0])].resize(static_cast<size_t>(out.SizeBytes()));
  int8_t* y = S8(v, op.outputs[0]);
  const int32_t in_zp = static_cast<int32_t>(in.quant.zp());
  const int32_t out_zp = static_cast<int32_t>(out.quant.zp());
  compiler::Activation act = compiler::Activation::kNone;
  if (const auto* o = std::get_if<compiler::ConvOptions>(&op.options)) act = o->activation;
  if (const auto* o = std::get_if<compiler::FullyConnectedOptions>(&op.options))
    act = o->activation;
  const compiler::ActivationRange range =
      compiler::ComputeActivationRange(act, out.quant.scale[0], out.quant.zp());
  auto requant = [&](int32_t acc, int oc) {
    const double ws = w.quant.scale[w.quant.per_channel() ? static_cast<size_t>(oc) : 0];
    const auto qm = compiler::QuantizeMultiplier(static_cast<double>(in.quant.scale[0]) * ws /
                                                 static_cast<double>(out.quant.scale[0]));
    int32_t r = compiler::MultiplyByQuantizedMultiplier(acc, qm.multiplier, qm.shift) + out_zp;
    return static_cast<int8_t>(std::clamp(r, range.min, range.max));
  };
  if (op.type == OpType::kFullyConnected) {
    const int units = w.shape[0], depth = w.shape[1];
    const int64_t batches = in.NumElements() / depth;
    for (int64_t b = 0; b < batches; ++b) {
      for (int o = 0; o < units; ++o) {
        int32_t acc = 0;
        for (int i = 0; i < depth; ++i) acc += wd[o * depth + i] * (x[b * depth + i] - in_zp);
        if (bias) acc += bias[o];
        y[b * units + o] = requant(acc, o);
      }
    }
    return;
  }
  const auto& opt = op.opts<compiler::ConvOptions>();
  const int N = in.shape[0], H = in.shape[1], W = in.shape[2], C = in.shape[3];
  const int OH = out.shape[1], OW = out.shape[2], OC = out.shape[3];
  const int KH = w.shape[1], KW = w.shape[2];
  auto pad = [&](int in_size, int out_size, int k, int s, int d) {
    const int eff = (k - 1) * d + 1;
    return opt.padding == compiler::Padding::kSame
               ? std::max(0, (out_size - 1) * s + eff - in_size) / 2
               : 0;
  };
  const int pt = pad(H, OH, KH, opt.stride_h, opt.dilation_h);
  const int pl = pad(W, OW, KW, opt.stride_w, opt.dilation_w);
  const bool dw = op.type == OpType::kDepthwiseConv2D;
  for (int n = 0; n < N; ++n)
    for (int oy = 0; oy < OH; ++oy)
      for (int ox = 0; ox < OW; ++ox)
        for (int oc = 0; oc < OC; ++oc) {
          int32_t acc = 0;
          for (int ky = 0; ky < KH; ++ky)
            for (int kx = 0; kx < KW; ++kx) {
              const int iy = oy * opt.stride_h - pt + ky * opt.dilation_h;
              const int ix = ox * opt.stride_w - pl + kx * opt.dilation_w;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              if (dw) {
                const int ic = oc / opt.depth_multiplier;
                acc += wd[(ky * KW + kx) * OC + oc] * (x[((n * H + iy) * W + ix) * C + ic] - in_zp);
              } else {
                for (int ic = 0; ic < C; ++ic)
                  acc += wd[((oc * KH + ky) * KW + kx) * C + ic] *
                         (x[((n * H + iy) * W + ix) * C + ic] - in_zp);
              }
            }
          if (bias) acc += bias[oc];
          y[((n * OH + oy) * OW + ox) * OC + oc] = requant(acc, oc);
        }
}

void ReferenceAddSub(const Graph& g, const Op& op, Values& v) {
  const Tensor& a = g.input(op, 0);
  const Tensor& b = g.input(op, 1);
  const Tensor& out = g.output(op);
  ASSERT_EQ(a.NumElements(), out.NumElements());
  ASSERT_EQ(b.NumElements(), out.NumElements());  // same-shape operands only in this oracle
  auto p = compiler::ComputeAddSubParams(a.quant.scale[0], a.quant.zp(), b.quant.scale[0],
                                         b.quant.zp(), out.quant.scale[0], out.quant.zp());
  if (op.type == OpType::kSub) {
    // TFLite Micro's sub_common.cc divides the float32 scales in float32 (ADD in double).
    const float twice_max = 2.0f * std::max(a.quant.scale[0], b.quant.scale[0]);
    p.input1 = compiler::QuantizeMultiplier(a.quant.scale[0] / twice_max);
    p.input2 = compiler::QuantizeMultiplier(b.quant.scale[0] / twice_max);
    p.output = compiler::QuantizeMultiplier(twice_max / ((1 << 20) * out.quant.scale[0]));
  }
  v[static_cast<size_t>(op.outputs[0])].resize(static_cast<size_t>(out.SizeBytes()));
  const compiler::ActivationRange range = compiler::ComputeActivationRange(
      op.opts<compiler::ElementwiseOptions>().activation, out.quant.scale[0], out.quant.zp());
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    const int32_t x1 = (p.input1_offset + S8(v, op.inputs[0])[i]) * (1 << p.left_shift);
    const int32_t x2 = (p.input2_offset + S8(v, op.inputs[1])[i]) * (1 << p.left_shift);
    const int32_t s1 =
        compiler::MultiplyByQuantizedMultiplier(x1, p.input1.multiplier, p.input1.shift);
    const int32_t s2 =
        compiler::MultiplyByQuantizedMultiplier(x2, p.input2.multiplier, p.input2.shift);
    const int32_t raw = op.type == OpType::kSub ? s1 - s2 : s1 + s2;
    const int32_t r =
        compiler::MultiplyByQuantizedMultiplier(raw, p.output.multiplier, p.output.shift) +
        p.output_offset;
    S8(v, op.outputs[0])[i] = static_cast<int8_t>(std::clamp(r, range.min, range.max));
  }
}

// True when the reference covers the op (the others are checked for execution only).
bool Reference(const Graph& g, const Op& op, Values& v) {
  switch (op.type) {
    case OpType::kConv2D:
    case OpType::kDepthwiseConv2D:
    case OpType::kFullyConnected:
      ReferenceConvLike(g, op, v);
      return true;
    case OpType::kAdd:
    case OpType::kSub:
      if (g.input(op, 0).NumElements() != g.output(op).NumElements() ||
          g.input(op, 1).NumElements() != g.output(op).NumElements()) {
        return false;
      }
      ReferenceAddSub(g, op, v);
      return true;
    case OpType::kReshape:
    case OpType::kSqueeze:
      v[static_cast<size_t>(op.outputs[0])] = v[static_cast<size_t>(op.inputs[0])];
      return true;
    default:
      return false;
  }
}

CompileResult MustCompile(const std::vector<uint8_t>& model, CompileOptions options = {}) {
  absl::StatusOr<CompileResult> r = compiler::Compile(model, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CompileResult{};
}

void FillInputs(const Graph& g, Values& v, uint32_t seed) {
  v.assign(g.tensors.size(), {});
  for (int t : g.inputs) {
    v[static_cast<size_t>(t)] = RandomBytes(static_cast<size_t>(g.tensors[t].SizeBytes()), seed++);
  }
}

// Compiles `model` for the NPU, runs it through the engine and (when every op has a reference)
// through the reference; returns the set of NPU kernel kinds it ran.
std::vector<fb::KernelKind> CheckModel(const std::vector<uint8_t>& model, uint32_t seed,
                                       bool* all_referenced = nullptr) {
  std::vector<fb::KernelKind> kinds;
  CompileResult r = MustCompile(model);
  const Graph& g = r.compilation.graph;
  Values engine;
  FillInputs(g, engine, seed);
  Values reference = engine;
  bool covered = true;
  for (const Op& op : g.ops) {
    if (op.dead || op.unit != compiler::Unit::kNpu) covered = false;
  }
  if (!covered) {
    if (all_referenced) *all_referenced = false;
    return kinds;
  }
  EngineRun run = RunPartitions(r, engine);
  for (const auto& blob : run.blobs) {
    auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
    if (!payload.ok()) continue;
    for (const fb::NpuKernel* k : *payload->program->kernels()) kinds.push_back(k->kind());
  }
  for (const Op& op : g.ops) {
    if (!Reference(g, op, reference)) covered = false;
  }
  if (covered) {
    for (int t : g.outputs) {
      EXPECT_EQ(engine[static_cast<size_t>(t)], reference[static_cast<size_t>(t)])
          << "output " << g.tensors[t].name;
    }
  }
  if (all_referenced) *all_referenced = covered;
  return kinds;
}

TEST(NpuEngineTest, ConvMatchesReferenceBitExactly) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    testing::ConvParams p;
    p.in_h = 9;
    p.in_w = 7;
    p.in_c = 11;  // not a multiple of the 8-wide block: exercises the padding lanes
    p.out_c = 13;
    p.opts.stride_h = 2;
    p.opts.activation = compiler::Activation::kRelu;
    p.seed = seed;
    bool referenced = false;
    auto kinds = CheckModel(testing::SingleConv2D(p), seed, &referenced);
    EXPECT_TRUE(referenced);
    ASSERT_EQ(kinds.size(), 1u);
    EXPECT_EQ(kinds[0], fb::KernelKind::Conv2D);
  }
}

TEST(NpuEngineTest, ConvVariantsMatchReference) {
  testing::ConvParams p;
  p.bias = false;
  p.per_channel = false;
  p.opts.padding = compiler::Padding::kValid;
  p.opts.dilation_w = 2;
  p.kernel_w = 2;
  bool referenced = false;
  CheckModel(testing::SingleConv2D(p), 7, &referenced);
  EXPECT_TRUE(referenced);
}

TEST(NpuEngineTest, DepthwiseMatchesReferenceBitExactly) {
  testing::DepthwiseParams p;
  p.in_c = 12;
  p.opts.stride_w = 2;
  p.opts.activation = compiler::Activation::kRelu6;
  bool referenced = false;
  auto kinds = CheckModel(testing::SingleDepthwise(p), 5, &referenced);
  EXPECT_TRUE(referenced);
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0], fb::KernelKind::DepthwiseConv2D);
}

TEST(NpuEngineTest, FullyConnectedMatchesReferenceBitExactly) {
  testing::FullyConnectedParams p;
  p.in_shape = {2, 19};
  p.units = 10;
  bool referenced = false;
  auto kinds = CheckModel(testing::SingleFullyConnected(p), 9, &referenced);
  EXPECT_TRUE(referenced);
  ASSERT_EQ(kinds.size(), 1u);
  EXPECT_EQ(kinds[0], fb::KernelKind::FullyConnected);
}

TEST(NpuEngineTest, AddSubMatchReferenceBitExactly) {
  for (OpType type : {OpType::kAdd, OpType::kSub}) {
    auto b =
        testing::SingleBinaryBuilder(type, {1, 4, 4, 8}, {1, 4, 4, 8}, compiler::Activation::kRelu);
    bool referenced = false;
    CheckModel(b.Finish(), 11, &referenced);
    EXPECT_TRUE(referenced) << compiler::OpTypeName(type);
  }
}

// Every op type the partitioner puts on the NPU runs through the engine (every KernelKind the
// compiler can emit). Ops with a reference above are also compared.
TEST(NpuEngineTest, EveryNpuKernelKindExecutes) {
  std::vector<bool> seen(static_cast<size_t>(fb::KernelKind::MAX) + 1, false);
  for (int i = 0; i < compiler::kNumOpTypes; ++i) {
    const OpType type = static_cast<OpType>(i);
    SCOPED_TRACE(compiler::OpTypeName(type));
    absl::StatusOr<CompileResult> r = compiler::Compile(testing::SingleOpModel(type), {});
    ASSERT_TRUE(r.ok()) << r.status();
    bool on_npu = false;
    for (const Op& op : r->compilation.graph.ops)
      on_npu |= !op.dead && op.unit == compiler::Unit::kNpu;
    if (!on_npu) continue;
    Values values;
    FillInputs(r->compilation.graph, values, 100 + i);
    EngineRun run = RunPartitions(*r, values);
    EXPECT_EQ(run.execute, Error::kOk);
    for (const auto& blob : run.blobs) {
      auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
      ASSERT_TRUE(payload.ok());
      for (const fb::NpuKernel* k : *payload->program->kernels()) {
        seen[static_cast<size_t>(k->kind())] = true;
      }
    }
    // Deterministic: the same inputs give the same outputs.
    Values again;
    FillInputs(r->compilation.graph, again, 100 + i);
    RunPartitions(*r, again);
    for (int t : r->compilation.graph.outputs) {
      EXPECT_EQ(values[static_cast<size_t>(t)], again[static_cast<size_t>(t)]);
    }
  }
  // Models the single-op generators cannot place on the NPU: MAXIMUM/MINIMUM with shared
  // quantization and BATCH_MATMUL with zero points 0.
  for (int32_t code : {55, 57, 126}) {
    testing::TfliteBuilder b;
    const testing::QuantParams q = testing::PerTensor(0.05f, code == 126 ? 0 : -3);
    const bool bmm = code == 126;
    const int x =
        b.AddTensor("x", bmm ? std::vector<int32_t>{2, 3, 5} : std::vector<int32_t>{1, 4, 4, 8},
                    testing::TflType::kInt8, q);
    const int y =
        b.AddTensor("y", bmm ? std::vector<int32_t>{2, 5, 4} : std::vector<int32_t>{1, 4, 4, 8},
                    testing::TflType::kInt8, q);
    const int z =
        b.AddTensor("z", bmm ? std::vector<int32_t>{2, 3, 4} : std::vector<int32_t>{1, 4, 4, 8},
                    testing::TflType::kInt8, q);
    if (bmm) {
      b.AddOperator(code, {x, y}, {z}, testing::BatchMatMulOpts{});
    } else {
      b.AddOperator(code, {x, y}, {z});
    }
    b.SetInputs({x, y});
    b.SetOutputs({z});
    absl::StatusOr<CompileResult> r = compiler::Compile(b.Finish(), {});
    ASSERT_TRUE(r.ok()) << r.status();
    Values values;
    FillInputs(r->compilation.graph, values, 7);
    EngineRun run = RunPartitions(*r, values);
    for (const auto& blob : run.blobs) {
      auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
      ASSERT_TRUE(payload.ok());
      for (const fb::NpuKernel* k : *payload->program->kernels()) {
        seen[static_cast<size_t>(k->kind())] = true;
      }
    }
  }
  // Quantize/Dequantize convert types and are never placed on the NPU (npu_constraints.cc);
  // RESHAPE/SQUEEZE single-op models do not reach the NPU as kernels. TODO: a model that does.
  for (size_t k = 0; k < seen.size(); ++k) {
    const auto kind = static_cast<fb::KernelKind>(k);
    if (kind == fb::KernelKind::Quantize || kind == fb::KernelKind::Dequantize ||
        kind == fb::KernelKind::Reshape || kind == fb::KernelKind::Squeeze) {
      continue;
    }
    EXPECT_TRUE(seen[k]) << "kernel kind never exercised: " << fb::EnumNameKernelKind(kind);
  }
}

// The runtime's kernel shape equals the compiler's NpuShapeFor for the same op.
TEST(NpuEngineTest, KernelShapeMatchesCompilerCostModel) {
  CompileResult r = MustCompile(testing::TinyDsCnn());
  auto blobs = compiler::LowerNpuPartitions(r.compilation);
  ASSERT_TRUE(blobs.ok());
  const Graph& g = r.compilation.graph;
  for (const auto& blob : *blobs) {
    auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
    ASSERT_TRUE(payload.ok());
    std::vector<const Op*> ops;
    for (const Op& op : g.ops) {
      if (!op.dead && op.unit == compiler::Unit::kNpu && op.partition == blob.partition)
        ops.push_back(&op);
    }
    ASSERT_EQ(ops.size(), payload->program->kernels()->size());
    for (size_t k = 0; k < ops.size(); ++k) {
      const auto a = NpuShapeForKernel(*payload->program, *payload->program->kernels()->Get(k));
      const auto b = compiler::NpuShapeFor(g, *ops[k], false);
      SCOPED_TRACE(g.Describe(*ops[k]));
      EXPECT_EQ(a.kind, b.kind);
      EXPECT_EQ(a.out_rows, b.out_rows);
      EXPECT_EQ(a.out_cols, b.out_cols);
      EXPECT_EQ(a.out_channels, b.out_channels);
      EXPECT_EQ(a.in_channels, b.in_channels);
      EXPECT_EQ(a.kernel_taps, b.kernel_taps);
      EXPECT_EQ(a.input_bytes, b.input_bytes);
      EXPECT_EQ(a.output_bytes, b.output_bytes);
      EXPECT_EQ(a.weight_bytes, b.weight_bytes);
    }
  }
}

// ---- Prefetch ----------------------------------------------------------------------------------

TEST(NpuPrefetchTest, FlashBuildEqualsSramBuildAndReadsScratchSlots) {
  CompileOptions sram_opts;
  sram_opts.weights = compiler::WeightsPlacement::kSram;
  CompileOptions flash_opts;
  flash_opts.weights = compiler::WeightsPlacement::kFlash;
  CompileResult sram = MustCompile(testing::TinyDsCnn(), sram_opts);
  CompileResult flash = MustCompile(testing::TinyDsCnn(), flash_opts);
  ASSERT_TRUE(flash.compilation.memory.weights_in_flash);
  Values a, b;
  FillInputs(sram.compilation.graph, a, 42);
  FillInputs(flash.compilation.graph, b, 42);
  // Only the NPU partitions run here; the test needs every op on the NPU to compare outputs.
  for (const Op& op : flash.compilation.graph.ops) {
    if (!op.dead) {
      ASSERT_EQ(op.unit, compiler::Unit::kNpu) << flash.compilation.graph.Describe(op);
    }
  }
  EngineRun ra = RunPartitions(sram, a);
  EngineRun rb = RunPartitions(flash, b);
  for (int t : sram.compilation.graph.outputs)
    EXPECT_EQ(a[static_cast<size_t>(t)], b[static_cast<size_t>(t)]);

  // Every weighted kernel reads a slot, and each slot holds the constants last prefetched into it.
  ASSERT_EQ(rb.blobs.size(), rb.scratch.size());
  for (size_t p = 0; p < rb.blobs.size(); ++p) {
    const auto& blob = rb.blobs[p];
    auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
    ASSERT_TRUE(payload.ok());
    const fb::NpuProgram& program = *payload->program;
    int prefetches = 0;
    for (const fb::NpuKernel* k : *program.kernels()) {
      if (k->constants()->size() > 0) {
        EXPECT_GE(k->weight_slot(), 0);
      }
    }
    const fb::Prefetch* last[2] = {nullptr, nullptr};
    for (uint32_t i = 0; i < program.commands()->size(); ++i) {
      if (program.commands_type()->Get(i) == fb::Command::Prefetch) {
        const auto* pf = static_cast<const fb::Prefetch*>(program.commands()->Get(i));
        last[pf->slot()] = pf;
        ++prefetches;
      }
    }
    EXPECT_GT(prefetches, 0);
    for (const fb::Prefetch* pf : last) {
      if (pf == nullptr) continue;
      EXPECT_EQ(0, std::memcmp(rb.scratch[p].data() + pf->slot() * program.slot_size(),
                               payload->weights.data() + pf->weights_offset(), pf->size()));
    }
  }
  // The flash build pays for the weight transfers on top of the same compute.
  EXPECT_GE(rb.cycles, ra.cycles);
}

TEST(NpuPrefetchTest, KernelsReadTheScratchNotTheWeightSection) {
  CompileOptions flash_opts;
  flash_opts.weights = compiler::WeightsPlacement::kFlash;
  testing::ConvParams cp;
  CompileResult flash = MustCompile(testing::SingleConv2D(cp), flash_opts);
  Values v;
  FillInputs(flash.compilation.graph, v, 3);
  Values reference = v;
  auto blobs = compiler::LowerNpuPartitions(flash.compilation);
  ASSERT_TRUE(blobs.ok());
  ASSERT_EQ(blobs->size(), 1u);
  // Replace the Prefetch command's source range so it copies zeros from... instead: run the
  // engine manually, prefetching, then clobber the weight section before RunKernel.
  std::vector<uint8_t> blob = (*blobs)[0].bytes;
  auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.data(), blob.size()));
  ASSERT_TRUE(payload.ok());
  std::vector<uint8_t> scratch(payload->program->sram_weight_scratch_size());
  std::vector<uint8_t> arena(static_cast<size_t>(flash.compilation.memory.arena_bytes) + 16);
  const Tensor& in = flash.compilation.graph.tensors[(*blobs)[0].input_tensors[0]];
  const Tensor& out = flash.compilation.graph.tensors[(*blobs)[0].output_tensors[0]];
  TensorView iv, ov;
  iv.rank = ov.rank = 4;
  for (int d = 0; d < 4; ++d) {
    iv.dims[d] = in.shape[d];
    ov.dims[d] = out.shape[d];
  }
  std::vector<uint8_t> out_bytes(static_cast<size_t>(out.SizeBytes()));
  iv.data = v[(*blobs)[0].input_tensors[0]].data();
  ov.data = out_bytes.data();
  TensorView* args[] = {&iv, &ov};
  NpuExecEnv env{Span<TensorView* const>(args, 2), arena.data(), arena.size(), scratch.data(),
                 scratch.size()};
  ASSERT_EQ(BindingsFit(*payload, env), Error::kOk);
  const auto* cmds = payload->program->commands();
  bool clobbered = false;
  for (uint32_t i = 0; i < cmds->size(); ++i) {
    if (payload->program->commands_type()->Get(i) == fb::Command::Prefetch) {
      ExecutePrefetch(*payload, *static_cast<const fb::Prefetch*>(cmds->Get(i)), env);
    } else {
      if (!clobbered) {
        // The DMA is done: the weight section (flash) is no longer read.
        uint8_t* weights = blob.data() + (payload->weights.data() - blob.data());
        std::memset(weights, 0x55, payload->weights.size());
        clobbered = true;
      }
      ASSERT_EQ(
          ExecuteKernel(*payload, static_cast<const fb::RunKernel*>(cmds->Get(i))->kernel(), env),
          Error::kOk);
    }
  }
  const Graph& g = flash.compilation.graph;
  for (const Op& op : g.ops) Reference(g, op, reference);
  EXPECT_EQ(out_bytes, reference[static_cast<size_t>(g.outputs[0])]);
}

// ---- Corrupt payloads --------------------------------------------------------------------------

std::vector<uint8_t> ConvBlob(
    compiler::WeightsPlacement placement = compiler::WeightsPlacement::kSram) {
  CompileOptions o;
  o.weights = placement;
  CompileResult r = MustCompile(testing::SingleConv2D(), o);
  auto blobs = compiler::LowerNpuPartitions(r.compilation);
  EXPECT_TRUE(blobs.ok());
  return blobs.ok() && !blobs->empty() ? (*blobs)[0].bytes : std::vector<uint8_t>{};
}

Error VerifyError(const std::vector<uint8_t>& blob) {
  return VerifyNpuPayload(Span<const uint8_t>(blob.data(), blob.size())).error();
}

TEST(NpuPayloadTest, ValidBlobsVerify) {
  EXPECT_EQ(VerifyError(ConvBlob()), Error::kOk);
  EXPECT_EQ(VerifyError(ConvBlob(compiler::WeightsPlacement::kFlash)), Error::kOk);
}

TEST(NpuPayloadTest, TruncatedBlobsAreInvalidPrograms) {
  const std::vector<uint8_t> blob = ConvBlob();
  for (size_t n = 0; n < blob.size(); n += (n < 64 ? 1 : 7)) {
    std::vector<uint8_t> cut(blob.begin(), blob.begin() + static_cast<long>(n));
    EXPECT_EQ(VerifyError(cut), Error::kInvalidProgram) << n;
  }
}

TEST(NpuPayloadTest, WrongMagicAndVersion) {
  std::vector<uint8_t> blob = ConvBlob();
  blob[0] = 'X';
  EXPECT_EQ(VerifyError(blob), Error::kInvalidProgram);
  blob = ConvBlob();
  blob[4] = 9;
  EXPECT_EQ(VerifyError(blob), Error::kIncompatibleVersion);
  blob = ConvBlob();
  blob[12] = 0xFF;  // weight section size past the end
  blob[13] = 0xFF;
  EXPECT_EQ(VerifyError(blob), Error::kInvalidProgram);
}

// Rebuilds the program of `blob` with `edit` applied to a copy of its tables (via the generated
// Direct builders), keeping the weight section.
struct ProgramParts {
  std::vector<uint8_t> weights;
};

// A minimal handmade payload: one RELU kernel in -> out, or a conv with a weight range.
std::vector<uint8_t> HandmadeBlob(uint32_t run_kernel, int32_t kernel_input,
                                  uint64_t weights_offset, uint64_t weights_size,
                                  size_t weight_section = 64, int32_t arg_index = 0) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int32_t> shape = {1, 4};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
      fb::CreateTensorDirect(fbb, fb::TensorKind::Input, fb::ElementType::Int8, &shape, 0.1f, 0,
                             arg_index),
      fb::CreateTensorDirect(fbb, fb::TensorKind::Output, fb::ElementType::Int8, &shape, 0.1f, 0,
                             1)};
  std::vector<int32_t> ins = {kernel_input}, outs = {1}, mult = {1 << 30}, shifts = {1};
  const fb::Range w(weights_offset, weights_size), b(0, 0), c(0, 0);
  std::vector<flatbuffers::Offset<fb::NpuKernel>> kernels = {
      fb::CreateNpuKernelDirect(fbb, fb::KernelKind::Relu, &ins, &outs, 0, &mult, &shifts, 0, 0, 0,
                                0, 127, 0, 0, &w, &b, &c, -1, 0, nullptr, nullptr, 10)};
  std::vector<fb::Command> types = {fb::Command::RunKernel};
  std::vector<flatbuffers::Offset<void>> cmds = {fb::CreateRunKernel(fbb, run_kernel).Union()};
  std::vector<int32_t> pin = {0}, pout = {1};
  auto program = fb::CreateNpuProgramDirect(fbb, 1, &kernels, &types, &cmds, &tensors, &pin, &pout,
                                            nullptr, 0, 0, weight_section, 0, 0, 8, 8, nullptr);
  fbb.Finish(program, fb::NpuProgramIdentifier());
  const size_t fb_size = fbb.GetSize();
  const size_t padded = (fb_size + 15) / 16 * 16;
  std::vector<uint8_t> blob(16 + padded + weight_section, 0);
  std::memcpy(blob.data(), "BLNP", 4);
  auto put = [&](size_t at, uint32_t v) { std::memcpy(blob.data() + at, &v, 4); };
  put(4, 1);
  put(8, static_cast<uint32_t>(fb_size));
  put(12, static_cast<uint32_t>(weight_section));
  std::memcpy(blob.data() + 16, fbb.GetBufferPointer(), fb_size);
  return blob;
}

TEST(NpuPayloadTest, HandmadeBlobVerifiesAndRuns) {
  std::vector<uint8_t> blob = HandmadeBlob(0, 0, 0, 16);
  ASSERT_EQ(VerifyError(blob), Error::kOk) << LastErrorMessage();
  auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.data(), blob.size()));
  int8_t in[4] = {-5, 0, 3, 100}, out[4] = {};
  TensorView iv, ov;
  iv.rank = ov.rank = 2;
  iv.dims[0] = ov.dims[0] = 1;
  iv.dims[1] = ov.dims[1] = 4;
  iv.data = in;
  ov.data = out;
  TensorView* args[] = {&iv, &ov};
  NpuExecEnv env{Span<TensorView* const>(args, 2)};
  ASSERT_EQ(BindingsFit(*payload, env), Error::kOk);
  ASSERT_EQ(ExecuteKernel(*payload, 0, env), Error::kOk);
  EXPECT_EQ(out[0], 0);  // RELU with identity rescale (1<<30, shift 1 = 1.0)
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(out[3], 100);
  // A wrong argument size is refused at Execute.
  iv.dims[1] = 3;
  EXPECT_EQ(BindingsFit(*payload, env), Error::kInvalidArgument);
}

TEST(NpuPayloadTest, OutOfRangeIndicesAreInvalidPrograms) {
  EXPECT_EQ(VerifyError(HandmadeBlob(/*run_kernel=*/5, 0, 0, 16)), Error::kInvalidProgram);
  EXPECT_EQ(VerifyError(HandmadeBlob(0, /*kernel_input=*/7, 0, 16)), Error::kInvalidProgram);
  EXPECT_EQ(VerifyError(HandmadeBlob(0, 0, 0, 16, 64, /*arg_index=*/9)), Error::kInvalidProgram);
}

TEST(NpuPayloadTest, WeightRangesPastTheEndAreInvalidPrograms) {
  EXPECT_EQ(VerifyError(HandmadeBlob(0, 0, /*offset=*/60, /*size=*/16)), Error::kInvalidProgram);
  EXPECT_EQ(VerifyError(HandmadeBlob(0, 0, ~uint64_t{0} - 4, 16)), Error::kInvalidProgram);
}

TEST(NpuPayloadTest, ByteFlipsNeverCrash) {
  const std::vector<uint8_t> good = ConvBlob(compiler::WeightsPlacement::kFlash);
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> blob = good;
    const size_t at = 16 + rng() % (blob.size() - 16);
    blob[at] = static_cast<uint8_t>(rng());
    auto payload = VerifyNpuPayload(Span<const uint8_t>(blob.data(), blob.size()));
    if (!payload.ok()) continue;
    // Keep the run small: a flipped dimension may legally describe a huge (but consistent)
    // tensor or window, which is correct but slow to execute.
    bool small = true;
    for (const fb::Tensor* t : *payload->program->tensors()) small &= TensorBytes(*t) <= 4096;
    for (const fb::NpuKernel* k : *payload->program->kernels()) {
      if (k->geometry()) {
        small &= k->geometry()->kernel_h() <= 8 && k->geometry()->kernel_w() <= 8;
      }
    }
    if (!small) continue;
    // Whatever still verifies must run inside its buffers (ASan-clean in sanitizer builds).
    std::vector<uint8_t> arena(1 << 16), scratch(payload->program->sram_weight_scratch_size());
    std::vector<std::vector<uint8_t>> storage;
    std::vector<TensorView> views(payload->num_inputs + payload->num_outputs);
    std::vector<TensorView*> args;
    for (const fb::Tensor* t : *payload->program->tensors()) {
      if (t->kind() != fb::TensorKind::Input && t->kind() != fb::TensorKind::Output) continue;
      TensorView& v = views[static_cast<size_t>(t->arg_index())];
      v.type = ScalarType::kByte;
      v.rank = 1;
      v.dims[0] = static_cast<int32_t>(TensorBytes(*t));
      storage.emplace_back(static_cast<size_t>(TensorBytes(*t)) + 1);
      v.data = storage.back().data();
    }
    for (auto& v : views) args.push_back(&v);
    NpuExecEnv env{Span<TensorView* const>(args.data(), args.size()), arena.data(), arena.size(),
                   scratch.data(), scratch.size()};
    if (BindingsFit(*payload, env) != Error::kOk) continue;
    const auto* cmds = payload->program->commands();
    for (uint32_t c = 0; c < cmds->size(); ++c) {
      if (payload->program->commands_type()->Get(c) == fb::Command::Prefetch) {
        ExecutePrefetch(*payload, *static_cast<const fb::Prefetch*>(cmds->Get(c)), env);
      } else {
        (void)ExecuteKernel(*payload, static_cast<const fb::RunKernel*>(cmds->Get(c))->kernel(),
                            env);
      }
    }
  }
}

TEST(NpuBackendTest, InitRejectsCorruptBlobAndSmallArena) {
  timing::TimingParams params;
  NpuBackend backend(params);
  EXPECT_STREQ(backend.id(), "BoardlabNeutronBackend");
  std::vector<uint8_t> persistent(4096);
  MemoryAllocator allocator(persistent.data(), persistent.size());
  BackendContext ctx;
  ctx.persistent = &allocator;
  std::vector<uint8_t> bad = {'B', 'L', 'N', 'P', 1, 0, 0, 0};
  EXPECT_EQ(backend.Init(Span<const uint8_t>(bad.data(), bad.size()), ctx).error(),
            Error::kInvalidProgram);
  std::vector<uint8_t> good = HandmadeBlob(0, 0, 0, 16);
  MemoryAllocator tiny(persistent.data(), 8);
  ctx.persistent = &tiny;
  EXPECT_EQ(backend.Init(Span<const uint8_t>(good.data(), good.size()), ctx).error(),
            Error::kDelegateMemoryAllocationFailed);
  EXPECT_EQ(backend.Execute(nullptr, {}, ctx), Error::kDelegateInvalidHandle);
}

}  // namespace
}  // namespace boardlab::runtime::npu
