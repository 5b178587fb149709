#include "compiler/flexbuffer_options.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {

absl::Status BadCustomOptions(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("custom options: ", what));
}

absl::StatusOr<flexbuffers::Map> VerifiedFlexbufferMap(std::span<const uint8_t> options) {
  if (options.empty()) return BadCustomOptions("none (the op needs its flexbuffer map)");
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(options.data(), options.size(), &reuse)) {
    return BadCustomOptions(
        absl::StrCat("the ", options.size(), " bytes are not a valid flexbuffer"));
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(options.data(), options.size());
  if (!root.IsMap()) return BadCustomOptions("the flexbuffer root is not a map");
  return root.AsMap();
}

absl::Status FlexbufferNumber(const flexbuffers::Map& map, const char* key, bool required,
                              flexbuffers::Reference* out) {
  const flexbuffers::Reference value = map[key];
  if (value.IsNull()) {
    return required ? BadCustomOptions(absl::StrCat("key '", key, "' is missing"))
                    : absl::OkStatus();
  }
  if (!value.IsNumeric() && !value.IsBool()) {
    return BadCustomOptions(absl::StrCat("key '", key, "' is not a number (flexbuffer type ",
                                         static_cast<int>(value.GetType()), ")"));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status FlexbufferInt(const flexbuffers::Map& map, const char* key, bool required,
                           int32_t* out) {
  flexbuffers::Reference value;
  if (absl::Status s = FlexbufferNumber(map, key, required, &value); !s.ok()) return s;
  if (!value.IsNull()) *out = value.AsInt32();
  return absl::OkStatus();
}

}  // namespace boardlab::compiler
