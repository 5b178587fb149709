#include "compiler/flexbuffer_options.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
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

namespace {

// TFLite Micro's FlexbufferWrapper: the map's values as a vector, element i read as the signed
// integer of the map's byte width stored in place, whatever the element's type.
class ValuesInPlace : public flexbuffers::Vector {
 public:
  explicit ValuesInPlace(const flexbuffers::Map& map) : flexbuffers::Vector(map.Values()) {}
  int64_t IntAt(size_t i) const {
    return flexbuffers::ReadInt64(data_ + i * byte_width_, byte_width_);
  }
};

// "first", "second", ... for the places of the few options a kernel has.
std::string PlaceName(size_t place) {
  static constexpr const char* kNames[] = {"first", "second",  "third",  "fourth", "fifth",
                                           "sixth", "seventh", "eighth", "ninth",  "tenth"};
  return place < std::size(kNames) ? kNames[place] : absl::StrCat("value ", place + 1, " of the");
}

}  // namespace

absl::Status FlexbufferIntByPlace(const flexbuffers::Map& map,
                                  const std::vector<const char*>& kernel_keys, const char* key,
                                  int32_t* out) {
  // flexbuffers sorts a map's keys by their bytes (strcmp), as the kernels' indices assume.
  const size_t place = static_cast<size_t>(
      std::count_if(kernel_keys.begin(), kernel_keys.end(),
                    [&](const char* other) { return std::strcmp(other, key) < 0; }));
  const std::string where = absl::StrCat("TFLite Micro reads ", key, " as the map's ",
                                         PlaceName(place), " value in key order");
  if (place >= map.size()) {
    return BadCustomOptions(absl::StrCat(where, ", but the map has ", map.size(), " values"));
  }
  const flexbuffers::Type type = map.Values()[place].GetType();
  if (type != flexbuffers::FBT_INT && type != flexbuffers::FBT_UINT &&
      type != flexbuffers::FBT_BOOL) {
    return BadCustomOptions(absl::StrCat(where, ", key '", map.Keys()[place].AsKey(),
                                         "' here, which is no integer stored in place "
                                         "(flexbuffer type ",
                                         static_cast<int>(type), ")"));
  }
  *out = static_cast<int32_t>(ValuesInPlace(map).IntAt(place));
  return absl::OkStatus();
}

absl::Status FlexbufferIntsByPlace(const flexbuffers::Map& map,
                                   const std::vector<const char*>& kernel_keys,
                                   const std::vector<int32_t*>& fields) {
  for (size_t i = 0; i < kernel_keys.size(); ++i) {
    flexbuffers::Reference value;
    if (absl::Status s = FlexbufferNumber(map, kernel_keys[i], true, &value); !s.ok()) return s;
    if (absl::Status s = FlexbufferIntByPlace(map, kernel_keys, kernel_keys[i], fields[i]);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace boardlab::compiler
