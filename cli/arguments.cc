#include "cli/arguments.h"

#include <algorithm>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/support/digest.h"

namespace boardlab::cli {

absl::StatusOr<v1::Tag> ParseKeyValue(absl::string_view text, absl::string_view option) {
  const size_t equals = text.find('=');
  if (equals == absl::string_view::npos || equals == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(option, " '", text, "': expected KEY=VALUE, e.g. ram=64M"));
  }
  v1::Tag tag;
  tag.set_key(std::string(text.substr(0, equals)));
  tag.set_value(std::string(text.substr(equals + 1)));
  return tag;
}

absl::StatusOr<InputArgument> ParseInputArgument(absl::string_view text) {
  constexpr absl::string_view kRandom = "random:";
  if (!absl::StartsWith(text, kRandom)) {
    if (text.empty()) return absl::InvalidArgumentError("--input '': expected FILE or random:SEED");
    // Built in place: moving the variant into the StatusOr trips GCC 12's -Wmaybe-uninitialized.
    return absl::StatusOr<InputArgument>(absl::in_place, std::in_place_type<std::string>, text);
  }
  const absl::string_view seed = text.substr(kRandom.size());
  RandomInput random;
  if (seed.empty() || !std::all_of(seed.begin(), seed.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(seed, &random.seed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input '", text, "': SEED must be a decimal number, e.g. random:7"));
  }
  return absl::StatusOr<InputArgument>(absl::in_place, std::in_place_type<RandomInput>, random);
}

absl::StatusOr<v1::JobState> ParseJobState(absl::string_view text) {
  std::string name = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(name, "JOB_STATE_")) name = "JOB_STATE_" + name;
  v1::JobState state;
  if (!v1::JobState_Parse(name, &state) || state == v1::JOB_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("--state '", text,
                     "': expected compiling, queued, assigned, loading, running, collecting or "
                     "done"));
  }
  return state;
}

absl::StatusOr<v1::Digest> ParseDigest(absl::string_view text) {
  const size_t colon = text.find(':');
  const absl::string_view hex = text.substr(0, colon);
  v1::Digest digest;
  int64_t size = 0;
  if (!api::IsValidSha256Hex(std::string_view(hex.data(), hex.size())) ||
      (colon != absl::string_view::npos &&
       (!absl::SimpleAtoi(text.substr(colon + 1), &size) || size < 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "digest '", text, "': expected 64 lowercase hex characters (SHA-256), optionally :SIZE"));
  }
  digest.set_sha256(std::string(hex));
  digest.set_size_bytes(size);
  return digest;
}

std::string NewRequestId() {
  std::random_device device;
  std::mt19937_64 generator((static_cast<uint64_t>(device()) << 32) ^ device());
  uint64_t high = generator();
  uint64_t low = generator();
  high = (high & ~0xf000ull) | 0x4000ull;          // version 4
  low = (low & ~(0x3ull << 62)) | (0x2ull << 62);  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32, (high >> 16) & 0xffff,
                         high & 0xffff, low >> 48, low & 0xffffffffffffull);
}

}  // namespace boardlab::cli
