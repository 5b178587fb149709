#include "server/scratch_names.h"

#include <unistd.h>

#include <random>

#include "absl/strings/str_cat.h"

namespace boardlab::server {

std::string UniqueScratchName() {
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  const uint64_t bits = (uint64_t{random()} << 32) | random();
  return absl::StrCat(host, "-", ::getpid(), "-", absl::Hex(bits, absl::kZeroPad16));
}

}  // namespace boardlab::server
