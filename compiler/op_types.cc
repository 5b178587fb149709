#include "compiler/op_types.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

struct OpInfo {
  OpType type;
  const char* name;
  int32_t code;
};

constexpr std::array<OpInfo, kNumOpTypes> kOps = {{
#define BOARDLAB_OP_INFO(name, str, code) {OpType::name, str, code},
    BOARDLAB_OP_LIST(BOARDLAB_OP_INFO)
#undef BOARDLAB_OP_INFO
}};

// Public BuiltinOperator names by code (schema.fbs), so that an unsupported op is named in the
// error message rather than printed as a number.
constexpr std::string_view kBuiltinNames[] = {
    "ADD",
    "AVERAGE_POOL_2D",
    "CONCATENATION",
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE",
    "DEQUANTIZE",
    "EMBEDDING_LOOKUP",
    "FLOOR",
    "FULLY_CONNECTED",
    "HASHTABLE_LOOKUP",
    "L2_NORMALIZATION",
    "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC",
    "LSH_PROJECTION",
    "LSTM",
    "MAX_POOL_2D",
    "MUL",
    "RELU",
    "RELU_N1_TO_1",
    "RELU6",
    "RESHAPE",
    "RESIZE_BILINEAR",
    "RNN",
    "SOFTMAX",
    "SPACE_TO_DEPTH",
    "SVDF",
    "TANH",
    "CONCAT_EMBEDDINGS",
    "SKIP_GRAM",
    "CALL",
    "CUSTOM",
    "EMBEDDING_LOOKUP_SPARSE",
    "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN",
    "GATHER",
    "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND",
    "TRANSPOSE",
    "MEAN",
    "SUB",
    "DIV",
    "SQUEEZE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE",
    "BIDIRECTIONAL_SEQUENCE_RNN",
    "EXP",
    "TOPK_V2",
    "SPLIT",
    "LOG_SOFTMAX",
    "DELEGATE",
    "BIDIRECTIONAL_SEQUENCE_LSTM",
    "CAST",
    "PRELU",
    "MAXIMUM",
    "ARG_MAX",
    "MINIMUM",
    "LESS",
    "NEG",
    "PADV2",
    "GREATER",
    "GREATER_EQUAL",
    "LESS_EQUAL",
    "SELECT",
    "SLICE",
    "SIN",
    "TRANSPOSE_CONV",
    "SPARSE_TO_DENSE",
    "TILE",
    "EXPAND_DIMS",
    "EQUAL",
    "NOT_EQUAL",
    "LOG",
    "SUM",
    "SQRT",
    "RSQRT",
    "SHAPE",
    "POW",
    "ARG_MIN",
    "FAKE_QUANT",
    "REDUCE_PROD",
    "REDUCE_MAX",
    "PACK",
    "LOGICAL_OR",
    "ONE_HOT",
    "LOGICAL_AND",
    "LOGICAL_NOT",
    "UNPACK",
    "REDUCE_MIN",
    "FLOOR_DIV",
    "REDUCE_ANY",
    "SQUARE",
    "ZEROS_LIKE",
    "FILL",
    "FLOOR_MOD",
    "RANGE",
    "RESIZE_NEAREST_NEIGHBOR",
    "LEAKY_RELU",
    "SQUARED_DIFFERENCE",
    "MIRROR_PAD",
    "ABS",
    "SPLIT_V",
    "UNIQUE",
    "CEIL",
    "REVERSE_V2",
    "ADD_N",
    "GATHER_ND",
    "COS",
    "WHERE",
    "RANK",
    "ELU",
    "REVERSE_SEQUENCE",
    "MATRIX_DIAG",
    "QUANTIZE",
    "MATRIX_SET_DIAG",
    "ROUND",
    "HARD_SWISH",
    "IF",
    "WHILE",
    "NON_MAX_SUPPRESSION_V4",
    "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND",
    "SELECT_V2",
    "DENSIFY",
    "SEGMENT_SUM",
    "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES",
    "CUMSUM",
    "CALL_ONCE",
    "BROADCAST_TO",
    "RFFT2D",
    "CONV_3D",
    "IMAG",
    "REAL",
    "COMPLEX_ABS",
    "HASHTABLE",
    "HASHTABLE_FIND",
    "HASHTABLE_IMPORT",
    "HASHTABLE_SIZE",
    "REDUCE_ALL",
    "CONV_3D_TRANSPOSE",
    "VAR_HANDLE",
    "READ_VARIABLE",
    "ASSIGN_VARIABLE",
    "BROADCAST_ARGS",
    "RANDOM_STANDARD_NORMAL",
    "BUCKETIZE",
    "RANDOM_UNIFORM",
    "MULTINOMIAL",
    "GELU",
    "DYNAMIC_UPDATE_SLICE",
    "RELU_0_TO_1",
    "UNSORTED_SEGMENT_PROD",
    "UNSORTED_SEGMENT_MAX",
    "UNSORTED_SEGMENT_SUM",
    "ATAN2",
    "UNSORTED_SEGMENT_MIN",
    "SIGN",
    "BITCAST",
    "BITWISE_XOR",
    "RIGHT_SHIFT",
};

}  // namespace

const char* OpTypeName(OpType type) { return kOps[static_cast<size_t>(type)].name; }

int32_t OpTypeTfliteCode(OpType type) { return kOps[static_cast<size_t>(type)].code; }

std::optional<OpType> OpTypeFromTfliteCode(int32_t code) {
  if (code == kTfliteCustomCode) return std::nullopt;
  for (const OpInfo& info : kOps) {
    if (info.code == code) return info.type;
  }
  return std::nullopt;
}

std::optional<OpType> OpTypeFromCustomCode(std::string_view custom_code) {
  for (const OpInfo& info : kOps) {
    if (info.code == kTfliteCustomCode && CustomCodeOf(info.type) == custom_code) {
      return info.type;
    }
  }
  return std::nullopt;
}

std::string_view CustomCodeOf(OpType type) {
  // The names TFLite's converter gives these ops and TFLite Micro's resolver registers them
  // under (AddDetectionPostprocess; the signal library's AddWindow, AddFftAutoScale...).
  switch (type) {
    case OpType::kDetectionPostprocess:
      return "TFLite_Detection_PostProcess";
    case OpType::kSignalWindow:
      return "SignalWindow";
    case OpType::kSignalFftAutoScale:
      return "SignalFftAutoScale";
    case OpType::kSignalDelay:
      return "SignalDelay";
    // The filter bank stage (AddEnergy, AddFilterBank, AddFilterBankSquareRoot, AddFilterBankLog,
    // AddPCAN).
    case OpType::kSignalEnergy:
      return "SignalEnergy";
    case OpType::kSignalFilterBank:
      return "SignalFilterBank";
    case OpType::kSignalFilterBankSquareRoot:
      return "SignalFilterBankSquareRoot";
    case OpType::kSignalFilterBankLog:
      return "SignalFilterBankLog";
    case OpType::kSignalPcan:
      return "SignalPCAN";
    case OpType::kSignalSpectralSubtraction:  // AddFilterBankSpectralSubtraction
      return "SignalFilterBankSpectralSubtraction";
    // The real FFTs (AddRfft, AddIrfft).
    case OpType::kSignalRfft:
      return "SignalRfft";
    case OpType::kSignalIrfft:
      return "SignalIrfft";
    // Streaming ops (stream_options.h): AddFramer, AddStacker, AddOverlapAdd, AddCircularBuffer.
    case OpType::kSignalFramer:
      return "SignalFramer";
    case OpType::kSignalStacker:
      return "SignalStacker";
    case OpType::kSignalOverlapAdd:
      return "SignalOverlapAdd";
    case OpType::kCircularBuffer:
      return "CIRCULAR_BUFFER";
    default:
      return "";
  }
}

bool IsComparisonOp(OpType type) {
  return type == OpType::kEqual || type == OpType::kNotEqual || type == OpType::kGreater ||
         type == OpType::kGreaterEqual || type == OpType::kLess || type == OpType::kLessEqual;
}

bool IsControlFlowOp(OpType type) {
  return type == OpType::kIf || type == OpType::kWhile || type == OpType::kCallOnce;
}

bool IsResourceVariableOp(OpType type) {
  return type == OpType::kVarHandle || type == OpType::kReadVariable ||
         type == OpType::kAssignVariable;
}

bool IsCopyOp(OpType type) {
  switch (type) {
    case OpType::kExpandDims:
    case OpType::kBroadcastTo:
    case OpType::kPack:
    case OpType::kUnpack:
    case OpType::kSplit:
    case OpType::kSplitV:
    case OpType::kGather:
    case OpType::kGatherNd:
    case OpType::kReverseV2:
    case OpType::kMirrorPad:
    case OpType::kDepthToSpace:
    case OpType::kSpaceToDepth:
    case OpType::kBatchToSpaceNd:
    case OpType::kSpaceToBatchNd:
      return true;
    default:
      return false;
  }
}

std::optional<OpType> OpTypeFromName(std::string_view name) {
  for (const OpInfo& info : kOps) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::string TfliteBuiltinName(int32_t code) {
  constexpr int32_t kKnown = static_cast<int32_t>(std::size(kBuiltinNames));
  if (code >= 0 && code < kKnown) return std::string(kBuiltinNames[code]);
  return absl::StrCat("builtin code ", code);
}

std::string SupportedOpNames() {
  std::string names;
  for (const OpInfo& info : kOps) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

}  // namespace boardlab::compiler
