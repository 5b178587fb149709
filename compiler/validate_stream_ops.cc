// Operand checks of TFLite Micro's streaming custom ops (stream_options.h): SignalFramer,
// SignalStacker, SignalOverlapAdd and CIRCULAR_BUFFER, run on the CPU with TFLite Micro's
// arithmetic and their state in persistent memory (runtime/kernels/signal_stream_ops.cc). What
// TFLite Micro's Prepare refuses is refused here, so is what its Eval would write past a buffer
// (option values its Prepare trusts), and state larger than boardlab keeps for one op.

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

constexpr const char* kInt16Only = "TFLite Micro's signal kernels take int16 here";
constexpr const char* kBoolValid = "TFLite Micro writes the 'output valid' flag as bool";

// The most state one streaming op keeps across inferences: it lives in the runtime's persistent
// memory, of which the firmware has 128 KiB for everything a load builds (SIGNAL_DELAY's limit
// too: 64 KiB leaves the rest to the model).
constexpr int64_t kMaxStateBytes = 65536;

absl::Status StateFits(const OpChecker& c, int64_t bytes, const std::string& what) {
  if (bytes <= kMaxStateBytes) return absl::OkStatus();
  return c.Unsupported(absl::StrCat(what, " keeps ", bytes,
                                    " bytes of state across inferences, more than boardlab's ",
                                    kMaxStateBytes, " per op (persistent memory)"));
}

absl::Status ValidFlag(const OpChecker& c, size_t output) {
  const Tensor& valid = c.Out(output);
  RETURN_IF_ERROR(c.TypeIn(valid, "output valid", {DataType::kBool}, kBoolValid));
  return c.Rank(valid, "output valid", 0, 0);
}

int64_t Rows(const Tensor& t, size_t inner_dims) {
  int64_t rows = 1;
  for (size_t i = 0; i + inner_dims < t.shape.size(); ++i) rows *= t.shape[i];
  return rows;
}

// SignalFramer (framer.cc): each row of int16 [..., n] a stream cut into n / frame_step frames
// of frame_size samples, int16 [..., n / frame_step, frame_size], and a bool scalar "every frame
// was full".
absl::Status ValidateFramer(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1, 2));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(c.Out(0), "output", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(ValidFlag(c, 1));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 5));
  const StreamOptions& o = c.op().opts<StreamOptions>();
  if (o.frame_size < 1 || o.frame_step < 1) {
    return c.Invalid(absl::StrCat("frame_size ", o.frame_size, " and frame_step ", o.frame_step,
                                  " must both be at least 1"));
  }
  // TFLite Micro primes frame_size - frame_step zeros, a negative count otherwise.
  if (o.prefill && o.frame_size < o.frame_step) {
    return c.Invalid(absl::StrCat("prefill with frame_size ", o.frame_size, " below frame_step ",
                                  o.frame_step, " would prime a negative number of zeros"));
  }
  const int32_t n = in.shape.back();
  if (n < o.frame_step || n % o.frame_step != 0) {
    return c.Invalid(absl::StrCat("input '", in.name, "' has ", n,
                                  " samples per row, not a positive multiple of frame_step ",
                                  o.frame_step));
  }
  // The ring holds frame_size rounded up to whole steps, per row.
  const int64_t capacity = (int64_t{o.frame_size} + o.frame_step - 1) / o.frame_step * o.frame_step;
  RETURN_IF_ERROR(StateFits(c, Rows(in, 1) * capacity * 2, "the framer"));
  std::vector<int32_t> shape(in.shape.begin(), in.shape.end() - 1);
  shape.push_back(n / o.frame_step);
  shape.push_back(o.frame_size);
  return c.OutputShape(shape);
}

// SignalStacker (stacker.cc): int16 [num_channels] per inference, int16
// [num_channels x (left + right + 1)] stacked every stacker_step inferences, and a bool scalar.
absl::Status ValidateStacker(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1, 2));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(c.TypeIn(c.Out(0), "output", {DataType::kInt16}, kInt16Only));
  RETURN_IF_ERROR(ValidFlag(c, 1));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, 1));
  const StreamOptions& o = c.op().opts<StreamOptions>();
  if (o.num_channels < 1 || o.left_context < 0 || o.right_context < 0 || o.stacker_step < 1) {
    return c.Invalid(absl::StrCat("num_channels ", o.num_channels, ", stacker_left_context ",
                                  o.left_context, ", stacker_right_context ", o.right_context,
                                  " and stacker_step ", o.stacker_step,
                                  ": channels and step must be at least 1, contexts at least 0"));
  }
  const int64_t window = int64_t{o.left_context} + o.right_context + 1;
  // A step past the window would discard values the ring never held.
  if (o.stacker_step > window) {
    return c.Invalid(absl::StrCat("stacker_step ", o.stacker_step, " exceeds the ", window,
                                  " stacked inferences (left + right context + 1)"));
  }
  if (in.shape[0] != o.num_channels) {
    return c.Invalid(absl::StrCat("input '", in.name, "' has shape ", ShapeString(in.shape),
                                  ", num_channels is ", o.num_channels));
  }
  RETURN_IF_ERROR(StateFits(c, window * o.num_channels * 2, "the stacker"));
  return c.OutputShape({static_cast<int32_t>(window * o.num_channels)});
}

// SignalOverlapAdd (overlap_add.cc): int16 or float32 frames [..., n_frames, frame_size] added
// into a running buffer per row, frame_step samples out per frame: [..., n_frames x frame_step].
absl::Status ValidateOverlapAdd(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  const StreamOptions& o = c.op().opts<StreamOptions>();
  // TFLite's TensorType codes, which the converter writes as 'T'.
  constexpr int32_t kTflFloat32 = 0, kTflInt16 = 7;
  if (o.tensor_type != kTflFloat32 && o.tensor_type != kTflInt16) {
    return c.Unsupported(absl::StrCat("option T is TFLite type ", o.tensor_type,
                                      "; TFLite Micro's SignalOverlapAdd takes int16 (7) or "
                                      "float32 (0)"));
  }
  const DataType type = o.tensor_type == kTflInt16 ? DataType::kInt16 : DataType::kFloat32;
  if (in.type != type || c.Out().type != type) {
    return c.Invalid(absl::StrCat("option T says ", DataTypeName(type), " but input '", in.name,
                                  "' is ", DataTypeName(in.type), " and output '", c.Out().name,
                                  "' ", DataTypeName(c.Out().type)));
  }
  RETURN_IF_ERROR(c.Rank(in, "input", 2, 5));
  const int32_t frame_size = in.shape.back();
  const int32_t n_frames = in.shape[in.shape.size() - 2];
  if (o.frame_step < 1 || o.frame_step > frame_size) {
    return c.Invalid(absl::StrCat("frame_step ", o.frame_step, " is outside 1..", frame_size,
                                  " (the frame size)"));
  }
  RETURN_IF_ERROR(StateFits(c, Rows(in, 2) * frame_size * (type == DataType::kInt16 ? 2 : 4),
                            "the overlap-add buffer"));
  std::vector<int32_t> shape(in.shape.begin(), in.shape.end() - 2);
  shape.push_back(n_frames * o.frame_step);
  return c.OutputShape(shape);
}

// TFLite Micro's CIRCULAR_BUFFER (circular_buffer.cc): int8 [1, 1, h, depth] shifted into an
// output of [1, num_slots, h, depth] that persists across inferences; optionally a bool [1]
// flag. Input and output carry the same quantization (the op moves bytes).
absl::Status ValidateCircularBuffer(const OpChecker& c) {
  if (c.op().outputs.size() != 1 && c.op().outputs.size() != 2) {
    return c.Invalid(
        absl::StrCat("has ", c.op().outputs.size(), " outputs, expected 1 or 2 (the flag)"));
  }
  RETURN_IF_ERROR(c.Arity(1, 1, c.op().outputs.size()));
  const Tensor& in = c.In(0);
  const Tensor& out = c.Out(0);
  constexpr const char* kInt8Only = "TFLite Micro's CIRCULAR_BUFFER takes int8";
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8}, kInt8Only));
  RETURN_IF_ERROR(c.TypeIn(out, "output", {DataType::kInt8}, kInt8Only));
  RETURN_IF_ERROR(c.Rank(in, "input", 4, 4));
  RETURN_IF_ERROR(c.Rank(out, "output", 4, 4));
  if (in.shape[0] != out.shape[0] || in.shape[1] != 1 || in.shape[2] != out.shape[2] ||
      in.shape[3] != out.shape[3] || out.shape[1] < 1) {
    return c.Invalid(absl::StrCat("input ", ShapeString(in.shape), " and output ",
                                  ShapeString(out.shape),
                                  ": expected [b, 1, h, d] into [b, slots, h, d]"));
  }
  // TFLite Micro's kernel assumes batch 1 (circular_buffer.cc: its header comment asks for
  // [1, 1, 1, depth]); its Prepare lets any equal batch through, but its Eval sizes the shift by
  // dims 1..3 alone and moves only the first batch's slots, leaving the others as they were:
  // not a result worth reproducing, so boardlab keeps refusing it.
  if (in.shape[0] != 1) {
    return c.Unsupported(absl::StrCat(
        "batch ", in.shape[0],
        ": TFLite Micro's CIRCULAR_BUFFER assumes batch 1 (its Eval shifts the first batch's "
        "slots only)"));
  }
  if (!in.quant.SameAs(out.quant)) {
    return c.Invalid("input and output quantization differ; the op copies bytes between them");
  }
  if (c.op().outputs.size() == 2) {
    const Tensor& valid = c.Out(1);
    RETURN_IF_ERROR(c.TypeIn(valid, "output valid", {DataType::kBool}, kBoolValid));
    if (valid.NumElements() != 1) {
      return c.Invalid(absl::StrCat("output valid has shape ", ShapeString(valid.shape),
                                    ", expected one element"));
    }
  }
  if (c.op().opts<StreamOptions>().cycles_max < 0) {
    return c.Invalid(
        absl::StrCat("cycles_max ", c.op().opts<StreamOptions>().cycles_max, " is negative"));
  }
  return StateFits(c, out.NumElements(), "the circular buffer");
}

}  // namespace

absl::Status ValidateStreamOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kSignalFramer:
      return ValidateFramer(c);
    case OpType::kSignalStacker:
      return ValidateStacker(c);
    case OpType::kSignalOverlapAdd:
      return ValidateOverlapAdd(c);
    case OpType::kCircularBuffer:
      return ValidateCircularBuffer(c);
    default:
      return c.Invalid("not a streaming op");
  }
}

}  // namespace boardlab::compiler
