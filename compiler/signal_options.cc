#include "compiler/signal_options.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/flexbuffer_options.h"
#include "compiler/stream_options.h"

namespace boardlab::compiler {
namespace {

// The filter bank stage's keys (every one required, as TFLite Micro's Init reads each by its
// place in the sorted map).
std::vector<std::pair<const char*, int32_t*>> FilterBankKeys(OpType type, SignalOptions& o) {
  switch (type) {
    case OpType::kSignalEnergy:
      return {{"start_index", &o.start_index}, {"end_index", &o.end_index}};
    case OpType::kSignalFilterBank:
      return {{"num_channels", &o.num_channels}};
    case OpType::kSignalFilterBankLog:
      return {{"input_correction_bits", &o.input_correction_bits},
              {"output_scale", &o.output_scale}};
    case OpType::kSignalPcan:
      return {{"snr_shift", &o.snr_shift}};
    case OpType::kSignalSpectralSubtraction:
      return {{"num_channels", &o.num_channels},
              {"smoothing", &o.smoothing},
              {"one_minus_smoothing", &o.one_minus_smoothing},
              {"alternate_smoothing", &o.alternate_smoothing},
              {"alternate_one_minus_smoothing", &o.alternate_one_minus_smoothing},
              {"min_signal_remaining", &o.min_signal_remaining},
              {"smoothing_bits", &o.smoothing_bits},
              {"spectral_subtraction_bits", &o.spectral_subtraction_bits}};
    default:
      return {};
  }
}

// TFLite Micro's FlexbufferWrapper: the map's values as a vector, element i read as the signed
// integer of the map's byte width stored in place, whatever the element's type.
class ValuesInPlace : public flexbuffers::Vector {
 public:
  explicit ValuesInPlace(const flexbuffers::Map& map) : flexbuffers::Vector(map.Values()) {}
  int64_t IntAt(size_t i) const {
    return flexbuffers::ReadInt64(data_ + i * byte_width_, byte_width_);
  }
};

// rfft.cc and irfft.cc's Init: fbw.ElementAsInt32(1), the second value in key order. An integer
// (or bool) stored in place is what the wrapper reads; a float's bits or an offset to a value
// stored elsewhere are no length, so they are refused.
absl::Status FftLengthByPosition(const flexbuffers::Map& map, int32_t* fft_length) {
  const flexbuffers::Type type = map.Values()[1].GetType();
  if (type != flexbuffers::FBT_INT && type != flexbuffers::FBT_UINT &&
      type != flexbuffers::FBT_BOOL) {
    return BadCustomOptions(absl::StrCat(
        "TFLite Micro reads fft_length as the map's second value in key order, key '",
        map.Keys()[1].AsKey(), "' here, which is no integer stored in place (flexbuffer type ",
        static_cast<int>(type), ")"));
  }
  *fft_length = static_cast<int32_t>(ValuesInPlace(map).IntAt(1));
  return absl::OkStatus();
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
  if (type == OpType::kSignalWindow) {
    if (absl::Status s = FlexbufferInt(*map, "shift", true, &o.shift); !s.ok()) return s;
  }
  if (type == OpType::kSignalDelay) {
    if (absl::Status s = FlexbufferInt(*map, "delay_length", true, &o.delay_length); !s.ok()) {
      return s;
    }
  }
  for (const auto& [key, field] : FilterBankKeys(type, o)) {
    if (absl::Status s = FlexbufferInt(*map, key, true, field); !s.ok()) return s;
  }
  if (type == OpType::kSignalSpectralSubtraction) {
    flexbuffers::Reference clamping;  // TFLite Micro reads it with AsBool: any number
    if (absl::Status s = FlexbufferNumber(*map, "clamping", true, &clamping); !s.ok()) return s;
    o.clamping = clamping.AsBool();
  }
  if (IsSignalFftOp(type)) {
    if (absl::Status s = FlexbufferInt(*map, "T", true, &o.tensor_type); !s.ok()) return s;
    if (absl::Status s = FlexbufferInt(*map, "fft_length", true, &o.fft_length_key); !s.ok()) {
      return s;
    }
    if (absl::Status s = FftLengthByPosition(*map, &o.fft_length); !s.ok()) return s;
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
