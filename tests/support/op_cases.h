#pragma once

// Generated single-op test cases for the ops of issue 13 (batch 1: data movement, layout,
// comparison and selection; batch 2: arithmetic and math): each case appends its tensors and one
// operator to a TfliteBuilder and returns the bytes of its graph inputs, so the same case can be a
// model of its own (oracle tests) or one branch of a model that holds many cases (firmware tests,
// which run one QEMU session for many ops).
//
// Usage:
//   for (const OpCase& c : LayoutAndSelectionCases()) {
//     CaseModel m = SingleCaseModel(c);            // m.model, m.inputs
//     ...
//   }
//   CaseModel all = CombinedCaseModel(cases);      // inputs and outputs of every case, in order
//
// Inputs are deterministic: int8 activations take random values over the full range (or a
// narrow range where a case wants ties), bool inputs random 0/1, float32 inputs random values
// with fractions, and index inputs the values the case gives.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/op_types.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {

/// What one case added to a builder: its graph inputs (with their bytes) and outputs.
struct CaseIo {
  std::vector<int> inputs;
  std::vector<std::vector<uint8_t>> input_bytes;
  std::vector<int> outputs;
};

struct OpCase {
  std::string name;  // "GATHER batch_dims 1", unique over the list
  compiler::OpType type;
  /// Appends the case to `b`; tensor names start with `prefix` so that cases can share a model.
  /// With `constant_inputs` the case's inputs become constant tensors holding their bytes (and
  /// CaseIo lists no inputs).
  std::function<CaseIo(TfliteBuilder& b, const std::string& prefix, bool constant_inputs)> add;
  /// Why the TFLite interpreter cannot check this case (its build lacks the op or the type);
  /// empty when it can. Such cases are checked against hand-derived outputs instead.
  std::string no_oracle;
};

/// A finished model and the bytes of each graph input, in order.
struct CaseModel {
  std::vector<uint8_t> model;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<int> input_tensors;   // builder tensor indices of the graph inputs
  std::vector<int> output_tensors;  // builder tensor indices of the graph outputs
  TfliteBuilder builder;            // unfinished copy, to read tensor types and shapes
};

/// Every case of the batch-1 ops: EXPAND_DIMS, SHAPE, FILL, ZEROS_LIKE, BROADCAST_TO, PACK,
/// UNPACK, SPLIT, SPLIT_V, GATHER, GATHER_ND, REVERSE_V2, MIRROR_PAD, DEPTH_TO_SPACE,
/// SPACE_TO_DEPTH, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, ARG_MAX, ARG_MIN, REDUCE_MAX,
/// REDUCE_MIN, SUM, the six comparisons, LOGICAL_AND/OR/NOT, SELECT_V2, CAST, ABS and NEG.
const std::vector<OpCase>& LayoutAndSelectionCases();

/// Every case of the batch-2 arithmetic and math ops (math_cases.cc): EXP, LOG, SQRT, RSQRT,
/// SQUARE, ROUND, FLOOR, ELU, PRELU, DIV, SQUARED_DIFFERENCE, ADD_N and CUMSUM.
const std::vector<OpCase>& MathCases();

/// Every case of the batch-3 ops (normalization_cases.cc): LOG_SOFTMAX, L2_NORMALIZATION,
/// L2_POOL_2D and RESIZE_BILINEAR.
const std::vector<OpCase>& NormalizationCases();

/// Every TRANSPOSE_CONV case (transpose_conv_cases.cc).
const std::vector<OpCase>& TransposeConvCases();

/// Every 16x8 case (int16_cases.cc): int16 activations, int8 weights, int64 bias.
const std::vector<OpCase>& Int16Cases();

/// Every SVDF case (sequence_cases.cc).
const std::vector<OpCase>& SvdfCases();

/// Every DETECTION_POSTPROCESS case (detection_cases.cc).
const std::vector<OpCase>& DetectionPostprocessCases();

/// Every UNIDIRECTIONAL_SEQUENCE_LSTM case (lstm_cases.cc).
const std::vector<OpCase>& LstmCases();

/// Every case of TFLite Micro's signal library ops, SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE and
/// SIGNAL_DELAY (signal_cases.cc): int16 without quantization, checked against hand-derived
/// references.
const std::vector<OpCase>& SignalCases();

/// The cases of the signal library's filter bank stage, SIGNAL_ENERGY, SIGNAL_FILTER_BANK,
/// SIGNAL_FILTER_BANK_SQUARE_ROOT, SIGNAL_FILTER_BANK_LOG, SIGNAL_PCAN and the stateful
/// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION (signal_filter_bank_cases.cc): TFLite Micro's own test
/// vectors (signal/micro/kernels/*_test.cc) with its option bytes, whose outputs
/// SignalFilterBankGolden holds.
const std::vector<OpCase>& SignalFilterBankCases();

/// TFLite Micro's expected outputs of the SignalFilterBankCases() case named `name` (one byte
/// string per output); empty when no case has that name.
std::vector<std::vector<uint8_t>> SignalFilterBankGolden(const std::string& name);

/// SignalFilterBankSpectralSubtraction's nine option keys for `channels` channels, with the
/// coefficients of TFLite Micro's test (655 / 2^14 and 15729 / 2^14 for both parities, at least
/// 819 / 2^14 of the signal kept, no extra bits, no clamping); `changed` replaces keys, `removed`
/// drops one.
std::vector<uint8_t> SpectralSubtractionOptions(int32_t channels,
                                                const std::map<std::string, int64_t>& changed = {},
                                                const std::string& removed = "");

/// The cases of the signal library's real FFTs, SIGNAL_RFFT and SIGNAL_IRFFT in int16, int32 and
/// float32 (signal_fft_cases.cc): TFLite Micro's own test vectors (signal/micro/kernels/
/// fft_test.cc) with its option bytes, and int16 cases of lengths 6, 10 and 12 worked by hand,
/// whose outputs SignalFftGolden holds.
const std::vector<OpCase>& SignalFftCases();

/// The expected outputs of the SignalFftCases() case named `name`; empty when no case
/// has that name.
std::vector<std::vector<uint8_t>> SignalFftGolden(const std::string& name);

/// Every case of TFLite Micro's streaming signal ops, SIGNAL_FRAMER, SIGNAL_STACKER and
/// SIGNAL_OVERLAP_ADD (stream_cases.cc), checked against hand-derived first inferences.
const std::vector<OpCase>& StreamCases();

/// TFLite Micro's CIRCULAR_BUFFER (stream_cases.cc), alone: between its runs it ends the
/// inference, which would cut short the other cases of a combined model.
const std::vector<OpCase>& CircularBufferCases();

/// LayoutAndSelectionCases(), MathCases(), NormalizationCases(), TransposeConvCases(),
/// SvdfCases(), DetectionPostprocessCases(), LstmCases(), SignalCases(), SignalFilterBankCases(),
/// SignalFftCases(), StreamCases(), CircularBufferCases() and Int16Cases(), in that order (the 16x8
/// ones last: CasesOf leaves them out by position).
const std::vector<OpCase>& AllOpCases();

/// One case per element-wise, comparison, logical and row op of issue 13, int8 ADD first as the
/// reference (per_element_cases.cc): same-shape operands of `elements` elements shaped
/// [elements / 64, 64] (rows of 64 for LOG_SOFTMAX and L2_NORMALIZATION), so that the cost of
/// two sizes gives the kernel's cost per element (tests/bench/firmware_bench.cc). `elements` is a
/// multiple of 64. The list's order and names do not depend on `elements`.
std::vector<OpCase> PerElementCases(int32_t elements);

/// The cases of one op type, in list order, without the 16x8 ones (Int16Cases()).
std::vector<OpCase> CasesOf(compiler::OpType type);

CaseModel SingleCaseModel(const OpCase& c);
CaseModel CombinedCaseModel(const std::vector<OpCase>& cases);

/// Every case in one model whose case inputs are constants (their bytes baked in), plus one
/// int8 [1] graph input that no op reads: for boards that take few input files.
CaseModel ConstantInputsModel(const std::vector<OpCase>& cases);

/// Bytes per element of a TFLite tensor type (int8 1 ... int64 8; 0 for others).
int TflTypeSize(int8_t type);

}  // namespace boardlab::testing
