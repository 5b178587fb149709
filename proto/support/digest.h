#pragma once

// SHA-256 digests of blobs: the keys of boardlab's content-addressed artifact store.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "boardlab/v1/types.pb.h"

namespace boardlab::api {

/// Incremental SHA-256 (OpenSSL); feed chunks, then Finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::span<const uint8_t> bytes);
  void Update(std::string_view bytes);
  /// Lowercase hex of the 32-byte hash.
  std::string FinishHex();

 private:
  void* ctx_;  // EVP_MD_CTX, kept opaque so that users need no OpenSSL headers
};

std::string Sha256Hex(std::span<const uint8_t> bytes);
std::string Sha256Hex(std::string_view bytes);

v1::Digest DigestOf(std::string_view bytes);

/// True when `hex` has the shape of a SHA-256 hex digest (64 lowercase hex characters); the blob
/// store uses it as a file name, so nothing else may pass.
bool IsValidSha256Hex(std::string_view hex);

/// "sha256:size" for messages and logs.
std::string DigestString(const v1::Digest& digest);

}  // namespace boardlab::api
