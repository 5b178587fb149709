#include "compiler/supported_ops_doc.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/npu_constraints.h"
#include "compiler/op_types.h"
#include "compiler/validate_ops.h"

namespace boardlab::compiler {
namespace {

std::vector<OpType> OpTypesByName() {
  std::vector<OpType> types;
  for (int i = 0; i < kNumOpTypes; ++i) types.push_back(static_cast<OpType>(i));
  std::sort(types.begin(), types.end(), [](OpType a, OpType b) {
    return std::string_view(OpTypeName(a)) < std::string_view(OpTypeName(b));
  });
  return types;
}

void AppendLimits(const NpuLimits& l, std::string* out) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"num_macs", absl::StrCat(l.num_macs)},
      {"conv_max_kernel", absl::StrCat(l.conv_max_kernel)},
      {"conv_max_stride", absl::StrCat(l.conv_max_stride)},
      {"conv_max_dilation", absl::StrCat(l.conv_max_dilation)},
      {"conv_max_kernel_macs", absl::StrCat(l.conv_max_kernel_macs)},
      {"conv_max_groups", absl::StrCat(l.conv_max_groups)},
      {"pool_max_kernel", absl::StrCat(l.pool_max_kernel)},
      {"pool_max_stride", absl::StrCat(l.pool_max_stride)},
      {"softmax_max_channels", absl::StrCat(l.softmax_max_channels)},
      {"softmax_max_rows", absl::StrCat(l.softmax_max_rows)},
      {"softmax_max_elements", absl::StrCat(l.softmax_max_elements)},
      {"resize_scales", absl::StrCat("{", absl::StrJoin(l.resize_scales, ", "), "}")},
      {"max_rank", absl::StrCat(l.max_rank)},
  };
  absl::StrAppend(out, "## Limits\n\n| limit | value |\n|---|---|\n");
  for (const auto& [name, value] : rows) absl::StrAppend(out, "| `", name, "` | ", value, " |\n");
  absl::StrAppend(out, "\n");
}

void AppendConstraints(const std::vector<NpuConstraint>& constraints, std::string* out) {
  for (const NpuConstraint& c : constraints) {
    absl::StrAppend(out, "- ", std::string(c.description), " (`", std::string(c.id), "`)\n");
  }
}

// The 16x8 (int16 activation) form of an op that has one (Runs16x8), as the summary lists it.
std::string Int16Form(OpType type) {
  switch (type) {
    case OpType::kConv2D:
      return "int16 (16x8: int8 weights, int64 bias, or int32 accumulating in int32)";
    case OpType::kDepthwiseConv2D:
    case OpType::kFullyConnected:
    case OpType::kTransposeConv:
      return "int16 (16x8: int8 weights, int64 bias)";
    case OpType::kSoftmax:
      return "int16 (output scale 2^-15, zero point 0; exp and reciprocal tables)";
    case OpType::kLogistic:
    case OpType::kTanh:
      return "int16 (output scale 2^-15, zero point 0; interpolated sigmoid table)";
    case OpType::kRelu6:
      return "int16 (16x8, zero point 0; the same raw clamp)";
    case OpType::kBatchMatMul:
      return "int16 (16x8, zero point 0; int64 sums)";
    case OpType::kAbs:
      return "int16 (16x8, zero point 0; or without quantization, plain integers)";
    case OpType::kPrelu:
      return "int16 (16x8: int8 alpha)";
    case OpType::kUnidirectionalSequenceLstm:
      return "int16 input, hidden state and output (16x8: zero point 0, int8 weights, int64 "
             "biases, the same int16 cell state)";
    case OpType::kGreater:
      return "int16 (GREATER only: rescaled, any zero point)";
    default:
      return "int16 (16x8, zero point 0)";
  }
}

// TFLite Micro's streaming ops (stream_options.h): their operands and the state they keep.
std::string StreamOpTypes(OpType type) {
  switch (type) {
    case OpType::kSignalFramer:
      return "custom op SignalFramer (TFLite Micro's signal library): each row of int16 [..., n] "
             "a stream cut into frames of 'frame_size' samples every 'frame_step' (n a multiple "
             "of it), int16 [..., n / frame_step, frame_size], and a bool scalar, true once every "
             "frame was full ('prefill' primes frame_size - frame_step zeros); frames not yet "
             "full are written as zeros; the stream is kept across inferences (at most 64 KiB "
             "per op) and starts over when the model is loaded";
    case OpType::kSignalStacker:
      return "custom op SignalStacker (TFLite Micro's signal library): int16 [num_channels] per "
             "inference stacked with 'stacker_left_context' earlier and "
             "'stacker_right_context' later ones (the first repeated to fill the left context) "
             "every 'stacker_step' inferences, int16 [channels x (left + right + 1)], and a bool "
             "scalar saying whether this inference stacked (zeros otherwise); kept across "
             "inferences, starts over at load";
    case OpType::kSignalOverlapAdd:
      return "custom op SignalOverlapAdd (TFLite Micro's signal library): int16 (saturating) or "
             "float32 frames [..., n_frames, frame_size] added into a running buffer per row, "
             "'frame_step' samples out per frame, [..., n_frames x frame_step]; the buffer is "
             "kept across inferences, zeros at load";
    case OpType::kCircularBuffer:
      return "custom op CIRCULAR_BUFFER (TFLite Micro): int8 [1, 1, h, d] shifted into an "
             "output [1, slots, h, d] kept across inferences (zeros at load), same quantization "
             "in and out, optional bool flag; runs every 'cycles_max' inferences (without the "
             "option 1 for 5, 13 or 25 slots, else 2, as TFLite Micro guesses); the inferences "
             "in between end at it and produce no output (docs/runtime.md); batch 1 only, as "
             "TFLite Micro's kernel assumes (its Eval shifts the first batch alone)";
    default:
      return "";
  }
}

// The element types the CPU kernels take for the int8 models (what the importer's validators
// accept: TFLite Micro's types for each op, and every copyable type for pure data movement).
std::string Int8Types(OpType type) {
  constexpr const char* kCopy = "any: int8, uint8, int16, int32, int64, float32, bool";
  if (IsStreamOp(type)) return StreamOpTypes(type);
  if (IsComparisonOp(type)) {
    const bool equality = type == OpType::kEqual || type == OpType::kNotEqual;
    return absl::StrCat("int8 (rescaled), int32, int64, float32", equality ? ", bool" : "",
                        "; output bool");
  }
  if (IsCopyOp(type)) {
    const bool indexed = type == OpType::kGather || type == OpType::kGatherNd;
    return indexed ? absl::StrCat(kCopy, "; indices int32, int64") : kCopy;
  }
  switch (type) {
    case OpType::kShape:
      return "input any; output int32, int64";
    case OpType::kFill:
      return "int8, int32, float32 (value and output); dims int32, int64";
    case OpType::kZerosLike:
      return "int8, int32, int64, float32";
    case OpType::kBroadcastArgs:
      return "int32 or int64 shapes (rank 1) into one of their type; shapes that do not "
             "broadcast are refused when constant, a run-time error otherwise";
    case OpType::kEmbeddingLookup:
      return "ids int32 (rank 1); float32 or int8 rows copied, or int8 rows dequantized to "
             "float32 (one scale, zero point 0); an id out of range is a run-time error";

    case OpType::kLogicalAnd:
    case OpType::kLogicalOr:
    case OpType::kLogicalNot:
      return "bool";
    case OpType::kSelectV2:
      return "condition bool; values int8, int16, float32";
    case OpType::kReduceMax:
    case OpType::kReduceMin:
      return "int8 (same quantization in and out), float32";
    case OpType::kSum:
      return "int8 (int32 sums, integer requantization, clamped), float32";
    case OpType::kRelu6:
      return "int8 (the raw input clamped to its quantized 0 and 6, output quantization unused)";
    case OpType::kBatchMatMul:
      return "int8 (multiplier from the float product of the input scales)";
    case OpType::kArgMax:
    case OpType::kArgMin:
      return "int8, float32; output int32, int64";
    case OpType::kCast:
      return "int8, int16, int32, float32, bool to int8, int16, int32, float32";
    case OpType::kAbs:
      return "int8, float32";
    case OpType::kNeg:
    case OpType::kExp:
    case OpType::kLog:
    case OpType::kSqrt:
    case OpType::kSquare:
    case OpType::kRound:
    case OpType::kFloor:
    case OpType::kCeil:
    case OpType::kSin:
    case OpType::kCos:
      return "float32 (TFLite Micro has no int8 kernel)";
    case OpType::kFloorDiv:
      return "float32 (TFLite Micro has no int8 kernel); broadcast over rank <= 4; a zero "
             "divisor is a run-time error";
    case OpType::kFloorMod:
      return "float32 (TFLite Micro has no int8 kernel); broadcast over rank <= 4";
    case OpType::kRsqrt:
      return "int8 (fixed-point inverse square root), float32";
    case OpType::kElu:
      return "int8 (256-entry table built in float), float32";
    case OpType::kPrelu:
      return "int8, float32 (alpha of the input's type); rank <= 4";
    case OpType::kDiv:
      return "int8, int32, float32; broadcast over rank <= 5";
    case OpType::kSquaredDifference:
      return "int8, int32, float32; broadcast over rank <= 4";
    case OpType::kAddN:
      return "int8 (one quantization for every input), float32";
    case OpType::kCumsum:
      return "int8, float32; axis int32";
    case OpType::kLogSoftmax:
      return "int8 (output scale 16/256, zero point 127; fixed-point exp and log)";
    case OpType::kL2Normalization:
      return "int8 (output scale 1/128, zero point 0; no fused activation); rank <= 4";
    case OpType::kL2Pool2D:
      return "float32 (TFLite Micro has no int8 kernel)";
    case OpType::kTransposeConv:
      return "int8 (per-channel weights, optional int32 bias; no fused activation)";
    case OpType::kResizeBilinear:
      return "int8 (same quantization in and out); size a constant int32 [2]";
    case OpType::kSvdf:
      return "int8 input and output, int8 weights_feature, int16 or int8 weights_time and "
             "activation state (a variable tensor kept between inferences), optional int32 bias; "
             "the fused activation is not applied, as in TFLite Micro";
    case OpType::kUnidirectionalSequenceLstm:
      return "int8 input, hidden state and output, int8 weights, int32 biases, int16 cell state "
             "with a power-of-two scale (TFLite Micro's integer LSTM; the states are variable "
             "tensors kept between inferences); no peephole, projection, layer norm or CIFG";
    case OpType::kSignalWindow:
      return "custom op SignalWindow (TFLite Micro's signal library): int16 input [..., n] times "
             "int16 weights [n], each product shifted right by the 'shift' option (0..31) and "
             "saturated to int16";
    case OpType::kSignalDelay:
      return "custom op SignalDelay (TFLite Micro's signal library): each row of int16 [..., n] "
             "delayed by the 'delay_length' option across inferences (rows x delay_length <= "
             "32768), the first ones reading zeros; the history is kept from one inference to "
             "the next and starts over when the model is loaded";
    case OpType::kSignalEnergy:
      return "custom op SignalEnergy (TFLite Micro's signal library): int16 [2n] (real, imaginary "
             "pairs) to uint32 [n] power re^2 + im^2 for bins ['start_index', 'end_index'), the "
             "other bins written as 0 (TFLite Micro leaves them as they were)";
    case OpType::kSignalFilterBank:
      return "custom op SignalFilterBank (TFLite Micro's signal library): uint32 [bins] into "
             "uint64 [<= num_channels] mel channels, each bin weighted into its channel and "
             "unweighted into the next; int16 weights, unweights and channel tables of "
             "'num_channels' + 1 entries whose bins and weights must lie within their tensors";
    case OpType::kSignalFilterBankSquareRoot:
      return "custom op SignalFilterBankSquareRoot (TFLite Micro's signal library): uint64 [n] to "
             "uint32 [n], the rounded integer square root shifted right by the int32 scalar "
             "scale_bits (0..31)";
    case OpType::kSignalFilterBankLog:
      return "custom op SignalFilterBankLog (TFLite Micro's signal library): uint32 [n] to int16 "
             "[n], TFLite Micro's table-interpolated natural log of the input shifted left by "
             "'input_correction_bits' (0..31), times 'output_scale' / 2^16, at most 32767";
    case OpType::kSignalPcan:
      return "custom op SignalPCAN (TFLite Micro's signal library): per-channel automatic gain "
             "control of uint32 [n] by its uint32 noise estimate [n] through an int16 gain table "
             "of at least 125 entries, 'snr_shift' 0..63; uint32 [n]";
    case OpType::kSignalSpectralSubtraction:
      return "custom op SignalFilterBankSpectralSubtraction (TFLite Micro's signal library): "
             "uint32 [num_channels] less its noise estimate, a low-pass filter of the input "
             "kept across inferences (zeros at load), uint32 [num_channels] and the estimate "
             "uint32 [num_channels]; 'smoothing_bits' 0..31, 'spectral_subtraction_bits' 0..63";
    case OpType::kSignalRfft:
      return "custom op SignalRfft (TFLite Micro's signal library, kissfft's arithmetic bit for "
             "bit): int16, int32 or float32 [..., <= fft_length] (each row zero padded) to "
             "[..., fft_length + 2], the fft_length / 2 + 1 (real, imaginary) bins; 'fft_length' "
             "even in 4..4096, its half's prime factors 2, 3 and 5 only (kissfft's radix 2, 3, 4 "
             "and 5 stages; read, as TFLite Micro does, as the options map's second value in key "
             "order), 'T' the tensors' type; the fixed-point bins scaled by "
             "1 / fft_length (kissfft's stages divide as they go), float32 unscaled";
    case OpType::kSignalIrfft:
      return "custom op SignalIrfft (TFLite Micro's signal library, kissfft's arithmetic bit for "
             "bit): int16, int32 or float32 [..., fft_length + 2] ((real, imaginary) bins) to "
             "[..., fft_length] real samples; 'fft_length' even in 4..4096, its half's prime "
             "factors 2, 3 and 5 only (the options map's second value in key order), 'T' the "
             "tensors' type; the inverse with its 1 / fft_length "
             "(kissfft's fixed-point stages "
             "divide as they go, float32 is divided at the end)";
    case OpType::kSignalFftAutoScale:
      return "custom op SignalFftAutoScale (TFLite Micro's signal library): int16 [n] shifted left "
             "as far as its largest magnitude allows, and the shift as an int32 scalar";
    case OpType::kDetectionPostprocess:
      return "custom op TFLite_Detection_PostProcess: box encodings and anchors float32 or int8, "
             "class predictions float32 or int8 (int8 dequantized as TFLite does), four float32 "
             "outputs; fast NMS with one class per detection, or regular NMS";
    case OpType::kQuantize:
      return "float32, int8 or int16 to int8 or int16";
    case OpType::kDequantize:
      return "int8 or int16 to float32";
    case OpType::kIf:
      return "condition bool (one element); inputs and outputs any type, matching the then and "
             "else subgraphs' (static shapes); the subgraphs' ops run on the CPU";
    case OpType::kWhile:
      return "any type; inputs, outputs and the body's inputs and outputs alike (static shapes), "
             "the cond subgraph yielding one bool; the subgraphs' ops run on the CPU";
    case OpType::kCallOnce:
      return "no inputs or outputs; its init subgraph (no inputs or outputs either) runs on the "
             "first inference after each load, on the CPU";
    case OpType::kVarHandle:
      return "a resource handle, resolved when compiling where it names one variable: the same "
             "shared_name is the same variable in every subgraph; a handle passed into or out of "
             "IF / WHILE names the same variable there, and a subgraph called with different "
             "variables' handles is copied per variable. Where a handle names several depending "
             "on the run (IF branches returning different variables' handles, a loop replacing "
             "its handle, a graph input), it holds TFLite Micro's resource id (int32) and the "
             "read or assignment picks the variable at run time; a handle graph output gives the "
             "id";
    case OpType::kReadVariable:
    case OpType::kAssignVariable:
      return "int8, uint8, int16, int32, int64, float32, bool; the variable keeps the type and "
             "byte count of its first assignment (TFLite Micro's), starts at that assignment's "
             "zero point at each load, and is copied in and out";
    default:
      return "int8";
  }
}

std::string CpuTypes(OpType type) {
  if (!Runs16x8(type) || type == OpType::kQuantize || type == OpType::kDequantize) {
    return Int8Types(type);
  }
  return absl::StrCat(Int8Types(type), "; ", Int16Form(type));
}

void AppendSummary(const std::vector<OpType>& types, std::string* out) {
  absl::StrAppend(out, "## Summary\n\n| op | NPU | CPU | CPU element types |\n|---|---|---|---|\n");
  for (OpType type : types) {
    absl::StrAppend(out, "| ", std::string(OpTypeName(type)), " | ",
                    NpuSupportsOpType(type) ? "yes, with constraints" : "no", " | yes | ",
                    CpuTypes(type), " |\n");
  }
  absl::StrAppend(out, "\n");
}

void AppendOp(OpType type, std::string* out) {
  absl::StrAppend(out, "### ", std::string(OpTypeName(type)), "\n\n");
  const std::vector<NpuConstraint>& constraints = ConstraintsFor(type);
  if (!NpuSupportsOpType(type)) {
    absl::StrAppend(out, "Runs on the CPU only: ", std::string(constraints.front().description),
                    ".\n\n");
    return;
  }
  if (constraints.empty()) {
    absl::StrAppend(out, "NPU: the generic constraints only.\n\n");
    return;
  }
  absl::StrAppend(out, "NPU, besides the generic constraints:\n\n");
  AppendConstraints(constraints, out);
  absl::StrAppend(out, "\n");
}

}  // namespace

std::string GenerateSupportedOpsMarkdown(const NpuLimits& limits) {
  std::string out =
      "# Supported operators\n\n"
      "<!-- Generated by GenerateSupportedOpsMarkdown (compiler/supported_ops_doc.cc) from the "
      "constraint tables in compiler/npu_constraints.cc and the imxrt700 target's NPU limits. "
      "Do not edit: run compiler_tests with BOARDLAB_UPDATE_DOCS=1 to regenerate. -->\n\n"
      "boardlab compiles int8 TFLite models, and 16x8 ones (int16 activations with zero point "
      "0, int8 weights, int64 bias) for the operators whose table entry lists int16. Every "
      "operator below runs on the Cortex-M33, bit-exact with TensorFlow Lite Micro's reference "
      "kernels, in the element types the table lists (activations are per-tensor quantized); "
      "16x8 operators always run there, since the Neutron computes 8-bit activations only. An "
      "operator whose entry lists no int16 refuses int16 activations: TFLite Micro's reference "
      "kernel for it has no 16x8 form either (its type switch was checked for each one). An "
      "operator runs on the Neutron NPU when it meets the generic constraints and its own; "
      "otherwise the compile report says which constraint failed, with the numbers. "
      "`--no-npu OP` and `--cpu-only` force operators onto the CPU.\n\n"
      "A partition (NPU graph) made only of no-ops (RESHAPE, SQUEEZE, EXPAND_DIMS, identity "
      "TRANSPOSE, PAD, "
      "SLICE or RESIZE_NEAREST_NEIGHBOR, single-input CONCATENATION) stays on the CPU, and so does "
      "a MEAN alone in its partition that reduces only size-1 axes with keep_dims.\n\n";
  AppendLimits(limits, &out);
  absl::StrAppend(&out, "## Generic NPU constraints\n\n");
  AppendConstraints(GenericNpuConstraints(), &out);
  absl::StrAppend(&out, "\n");
  const std::vector<OpType> types = OpTypesByName();
  AppendSummary(types, &out);
  absl::StrAppend(&out, "## Operators\n\n");
  for (OpType type : types) AppendOp(type, &out);
  out.pop_back();  // one trailing newline
  return out;
}

}  // namespace boardlab::compiler
