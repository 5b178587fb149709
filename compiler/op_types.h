#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace boardlab::compiler {

// The operators boardlab compiles, with their TFLite BuiltinOperator codes. One list drives the
// enum, the name table and the importer's code map (STYLE.md rule 10: one op list). Custom
// operators carry the CUSTOM code (32) and are found by their custom code string instead
// (OpTypeFromCustomCode).
#define BOARDLAB_OP_LIST(X)                                                    \
  X(kAdd, "ADD", 0)                                                            \
  X(kAveragePool2D, "AVERAGE_POOL_2D", 1)                                      \
  X(kConcatenation, "CONCATENATION", 2)                                        \
  X(kConv2D, "CONV_2D", 3)                                                     \
  X(kDepthwiseConv2D, "DEPTHWISE_CONV_2D", 4)                                  \
  X(kDepthToSpace, "DEPTH_TO_SPACE", 5)                                        \
  X(kDequantize, "DEQUANTIZE", 6)                                              \
  X(kEmbeddingLookup, "EMBEDDING_LOOKUP", 7)                                   \
  X(kFloor, "FLOOR", 8)                                                        \
  X(kFullyConnected, "FULLY_CONNECTED", 9)                                     \
  X(kL2Normalization, "L2_NORMALIZATION", 11)                                  \
  X(kL2Pool2D, "L2_POOL_2D", 12)                                               \
  X(kLogistic, "LOGISTIC", 14)                                                 \
  X(kMaxPool2D, "MAX_POOL_2D", 17)                                             \
  X(kMul, "MUL", 18)                                                           \
  X(kRelu, "RELU", 19)                                                         \
  X(kRelu6, "RELU6", 21)                                                       \
  X(kReshape, "RESHAPE", 22)                                                   \
  X(kResizeBilinear, "RESIZE_BILINEAR", 23)                                    \
  X(kSoftmax, "SOFTMAX", 25)                                                   \
  X(kSpaceToDepth, "SPACE_TO_DEPTH", 26)                                       \
  X(kSvdf, "SVDF", 27)                                                         \
  X(kTanh, "TANH", 28)                                                         \
  X(kDetectionPostprocess, "DETECTION_POSTPROCESS", 32)                        \
  X(kPad, "PAD", 34)                                                           \
  X(kGather, "GATHER", 36)                                                     \
  X(kBatchToSpaceNd, "BATCH_TO_SPACE_ND", 37)                                  \
  X(kSpaceToBatchNd, "SPACE_TO_BATCH_ND", 38)                                  \
  X(kTranspose, "TRANSPOSE", 39)                                               \
  X(kMean, "MEAN", 40)                                                         \
  X(kSub, "SUB", 41)                                                           \
  X(kDiv, "DIV", 42)                                                           \
  X(kSqueeze, "SQUEEZE", 43)                                                   \
  X(kUnidirectionalSequenceLstm, "UNIDIRECTIONAL_SEQUENCE_LSTM", 44)           \
  X(kStridedSlice, "STRIDED_SLICE", 45)                                        \
  X(kExp, "EXP", 47)                                                           \
  X(kSplit, "SPLIT", 49)                                                       \
  X(kLogSoftmax, "LOG_SOFTMAX", 50)                                            \
  X(kCast, "CAST", 53)                                                         \
  X(kPrelu, "PRELU", 54)                                                       \
  X(kMaximum, "MAXIMUM", 55)                                                   \
  X(kArgMax, "ARG_MAX", 56)                                                    \
  X(kMinimum, "MINIMUM", 57)                                                   \
  X(kLess, "LESS", 58)                                                         \
  X(kNeg, "NEG", 59)                                                           \
  X(kPadV2, "PADV2", 60)                                                       \
  X(kGreater, "GREATER", 61)                                                   \
  X(kGreaterEqual, "GREATER_EQUAL", 62)                                        \
  X(kLessEqual, "LESS_EQUAL", 63)                                              \
  X(kSlice, "SLICE", 65)                                                       \
  X(kSin, "SIN", 66)                                                           \
  X(kTransposeConv, "TRANSPOSE_CONV", 67)                                      \
  X(kExpandDims, "EXPAND_DIMS", 70)                                            \
  X(kEqual, "EQUAL", 71)                                                       \
  X(kNotEqual, "NOT_EQUAL", 72)                                                \
  X(kLog, "LOG", 73)                                                           \
  X(kSum, "SUM", 74)                                                           \
  X(kSqrt, "SQRT", 75)                                                         \
  X(kRsqrt, "RSQRT", 76)                                                       \
  X(kShape, "SHAPE", 77)                                                       \
  X(kArgMin, "ARG_MIN", 79)                                                    \
  X(kReduceMax, "REDUCE_MAX", 82)                                              \
  X(kPack, "PACK", 83)                                                         \
  X(kLogicalOr, "LOGICAL_OR", 84)                                              \
  X(kLogicalAnd, "LOGICAL_AND", 86)                                            \
  X(kLogicalNot, "LOGICAL_NOT", 87)                                            \
  X(kUnpack, "UNPACK", 88)                                                     \
  X(kReduceMin, "REDUCE_MIN", 89)                                              \
  X(kFloorDiv, "FLOOR_DIV", 90)                                                \
  X(kSquare, "SQUARE", 92)                                                     \
  X(kZerosLike, "ZEROS_LIKE", 93)                                              \
  X(kFill, "FILL", 94)                                                         \
  X(kFloorMod, "FLOOR_MOD", 95)                                                \
  X(kResizeNearestNeighbor, "RESIZE_NEAREST_NEIGHBOR", 97)                     \
  X(kLeakyRelu, "LEAKY_RELU", 98)                                              \
  X(kSquaredDifference, "SQUARED_DIFFERENCE", 99)                              \
  X(kMirrorPad, "MIRROR_PAD", 100)                                             \
  X(kAbs, "ABS", 101)                                                          \
  X(kSplitV, "SPLIT_V", 102)                                                   \
  X(kCeil, "CEIL", 104)                                                        \
  X(kReverseV2, "REVERSE_V2", 105)                                             \
  X(kAddN, "ADD_N", 106)                                                       \
  X(kGatherNd, "GATHER_ND", 107)                                               \
  X(kCos, "COS", 108)                                                          \
  X(kElu, "ELU", 111)                                                          \
  X(kQuantize, "QUANTIZE", 114)                                                \
  X(kRound, "ROUND", 116)                                                      \
  X(kHardSwish, "HARD_SWISH", 117)                                             \
  X(kIf, "IF", 118)                                                            \
  X(kWhile, "WHILE", 119)                                                      \
  X(kSelectV2, "SELECT_V2", 123)                                               \
  X(kBatchMatMul, "BATCH_MATMUL", 126)                                         \
  X(kCumsum, "CUMSUM", 128)                                                    \
  X(kCallOnce, "CALL_ONCE", 129)                                               \
  X(kBroadcastTo, "BROADCAST_TO", 130)                                         \
  X(kVarHandle, "VAR_HANDLE", 142)                                             \
  X(kReadVariable, "READ_VARIABLE", 143)                                       \
  X(kAssignVariable, "ASSIGN_VARIABLE", 144)                                   \
  X(kBroadcastArgs, "BROADCAST_ARGS", 145)                                     \
  X(kSignalWindow, "SIGNAL_WINDOW", 32)                                        \
  X(kSignalFftAutoScale, "SIGNAL_FFT_AUTO_SCALE", 32)                          \
  X(kSignalDelay, "SIGNAL_DELAY", 32)                                          \
  X(kSignalEnergy, "SIGNAL_ENERGY", 32)                                        \
  X(kSignalFilterBank, "SIGNAL_FILTER_BANK", 32)                               \
  X(kSignalFilterBankSquareRoot, "SIGNAL_FILTER_BANK_SQUARE_ROOT", 32)         \
  X(kSignalFilterBankLog, "SIGNAL_FILTER_BANK_LOG", 32)                        \
  X(kSignalPcan, "SIGNAL_PCAN", 32)                                            \
  X(kSignalSpectralSubtraction, "SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION", 32) \
  X(kSignalRfft, "SIGNAL_RFFT", 32)                                            \
  X(kSignalIrfft, "SIGNAL_IRFFT", 32)                                          \
  /* Streaming ops (stream_options.h) */                                       \
  X(kSignalFramer, "SIGNAL_FRAMER", 32)                                        \
  X(kSignalStacker, "SIGNAL_STACKER", 32)                                      \
  X(kSignalOverlapAdd, "SIGNAL_OVERLAP_ADD", 32)                               \
  X(kCircularBuffer, "CIRCULAR_BUFFER", 32)

enum class OpType : uint8_t {
#define BOARDLAB_OP_ENUM(name, str, code) name,
  BOARDLAB_OP_LIST(BOARDLAB_OP_ENUM)
#undef BOARDLAB_OP_ENUM
};

inline constexpr int kNumOpTypes = 0
#define BOARDLAB_OP_COUNT(name, str, code) +1
    BOARDLAB_OP_LIST(BOARDLAB_OP_COUNT)
#undef BOARDLAB_OP_COUNT
    ;

/// The TFLite name of `type`, e.g. "CONV_2D".
const char* OpTypeName(OpType type);

/// The TFLite BuiltinOperator code of `type`.
int32_t OpTypeTfliteCode(OpType type);

/// Maps a TFLite BuiltinOperator code to our op type; nullopt when boardlab does not support it
/// (and for CUSTOM, whose operators are found by OpTypeFromCustomCode).
std::optional<OpType> OpTypeFromTfliteCode(int32_t code);

/// The BuiltinOperator code of custom operators.
inline constexpr int32_t kTfliteCustomCode = 32;

/// The custom operator a CUSTOM operator code names by its custom_code string (e.g.
/// "TFLite_Detection_PostProcess"); nullopt when boardlab does not support it.
std::optional<OpType> OpTypeFromCustomCode(std::string_view custom_code);

/// The custom_code string of a custom op type; empty for builtin ones.
std::string_view CustomCodeOf(OpType type);

/// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS and LESS_EQUAL.
bool IsComparisonOp(OpType type);

/// The layout and data movement ops whose kernels copy elements of any type they take without
/// arithmetic: EXPAND_DIMS, BROADCAST_TO, PACK, UNPACK, SPLIT, SPLIT_V, GATHER, GATHER_ND,
/// REVERSE_V2, MIRROR_PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and
/// SPACE_TO_BATCH_ND.
bool IsCopyOp(OpType type);

/// IF, WHILE and CALL_ONCE: ops that run other subgraphs (ControlFlowOptions), always on the
/// CPU.
bool IsControlFlowOp(OpType type);

/// VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE: the resource-variable ops, resolved when
/// compiling (compiler/import_resource_variables.h), always on the CPU.
bool IsResourceVariableOp(OpType type);

/// Parses a TFLite op name ("CONV_2D"); nullopt when unknown. Used by `--no-npu`.
std::optional<OpType> OpTypeFromName(std::string_view name);

/// The TFLite name of any BuiltinOperator code, supported or not ("SVDF", "CUSTOM"); "code N"
/// when the code is outside the public table. Used in error messages.
std::string TfliteBuiltinName(int32_t code);

/// Comma-separated list of every supported op name, for "supported are: ..." messages.
std::string SupportedOpNames();

}  // namespace boardlab::compiler
