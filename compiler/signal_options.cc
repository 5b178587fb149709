#include "compiler/signal_options.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/flexbuffer_options.h"
#include "compiler/stream_options.h"

namespace boardlab::compiler {
namespace {

// The options a kernel's Init reads by place (flexbuffer_options.h FlexbufferIntByPlace): its
// keys, every one also required by name, and where each value goes.
struct PlacedOption {
  const char* key;
  int32_t* out;
};
std::vector<PlacedOption> PlacedOptions(OpType type, SignalOptions& o, int32_t& clamping) {
  switch (type) {
    case OpType::kSignalEnergy:
      return {{"end_index", &o.end_index}, {"start_index", &o.start_index}};
    case OpType::kSignalFilterBank:
      return {{"num_channels", &o.num_channels}};
    case OpType::kSignalFilterBankLog:
      return {{"input_correction_bits", &o.input_correction_bits},
              {"output_scale", &o.output_scale}};
    case OpType::kSignalPcan:
      return {{"snr_shift", &o.snr_shift}};
    case OpType::kSignalSpectralSubtraction:
      return {{"alternate_one_minus_smoothing", &o.alternate_one_minus_smoothing},
              {"alternate_smoothing", &o.alternate_smoothing},
              {"clamping", &clamping},
              {"min_signal_remaining", &o.min_signal_remaining},
              {"num_channels", &o.num_channels},
              {"one_minus_smoothing", &o.one_minus_smoothing},
              {"smoothing", &o.smoothing},
              {"smoothing_bits", &o.smoothing_bits},
              {"spectral_subtraction_bits", &o.spectral_subtraction_bits}};
    case OpType::kSignalWindow:
      return {{"shift", &o.shift}};
    case OpType::kSignalDelay:
      return {{"delay_length", &o.delay_length}};
    default:
      return {};
  }
}

// Each option required by name (a number, or clamping's bool), its value then taken from its
// place as TFLite Micro's Init takes it.
absl::Status ReadPlacedOptions(const flexbuffers::Map& map,
                               const std::vector<PlacedOption>& options) {
  std::vector<const char*> keys;
  std::vector<int32_t*> fields;
  for (const PlacedOption& option : options) {
    keys.push_back(option.key);
    fields.push_back(option.out);
  }
  return FlexbufferIntsByPlace(map, keys, fields);
}

bool IsFilterBankStageOp(OpType type) {
  return type == OpType::kSignalEnergy || type == OpType::kSignalFilterBank ||
         type == OpType::kSignalFilterBankSquareRoot || type == OpType::kSignalFilterBankLog ||
         type == OpType::kSignalPcan || type == OpType::kSignalSpectralSubtraction;
}

}  // namespace

absl::StatusOr<SignalOptions> ParseSignalOptions(OpType type, std::span<const uint8_t> options) {
  SignalOptions o;
  if (type == OpType::kSignalFftAutoScale || type == OpType::kSignalFilterBankSquareRoot) return o;
  absl::StatusOr<flexbuffers::Map> map = VerifiedFlexbufferMap(options);
  if (!map.ok()) return map.status();
  int32_t clamping = 0;  // TFLite Micro's ElementAsBool: any bytes but zero
  if (absl::Status s = ReadPlacedOptions(*map, PlacedOptions(type, o, clamping)); !s.ok()) {
    return s;
  }
  o.clamping = clamping != 0;
  if (IsSignalFftOp(type)) {
    if (absl::Status s = FlexbufferInt(*map, "T", true, &o.tensor_type); !s.ok()) return s;
    if (absl::Status s = FlexbufferInt(*map, "fft_length", true, &o.fft_length_key); !s.ok()) {
      return s;
    }
    // rfft.cc and irfft.cc's Init read 'T' by key but fft_length by place.
    if (absl::Status s =
            FlexbufferIntByPlace(*map, {"T", "fft_length"}, "fft_length", &o.fft_length);
        !s.ok()) {
      return s;
    }
  }
  return o;
}

bool IsSignalFftOp(OpType type) {
  return type == OpType::kSignalRfft || type == OpType::kSignalIrfft;
}

bool IsSignalOp(OpType type) {
  return type == OpType::kSignalWindow || type == OpType::kSignalFftAutoScale ||
         type == OpType::kSignalDelay || IsFilterBankStageOp(type) || IsSignalStreamOp(type) ||
         IsSignalFftOp(type);
}

}  // namespace boardlab::compiler
