#pragma once

// SHA-256 (FIPS 180-4) without heap, for the board link: artifacts are named by the SHA-256 of
// their bytes, as in the server's content-addressed store, and every blob that crosses the link
// is checked end to end against its digest. The host side tests it against OpenSSL.
//
//   Sha256 hash;
//   hash.Update(data, size);             // any number of times
//   Digest digest = hash.Finish();       // the object is then spent; Reset() to reuse it

#include <stddef.h>
#include <stdint.h>

namespace boardlab::link {

inline constexpr size_t kDigestBytes = 32;

struct Digest {
  uint8_t bytes[kDigestBytes] = {};
  bool operator==(const Digest& other) const;
  bool operator!=(const Digest& other) const { return !(*this == other); }
  /// Lower-case hexadecimal of the first `bytes` bytes into `out` (2 * bytes + 1 chars with the
  /// terminating NUL); returns `out`.
  const char* ToHex(char* out, size_t bytes = kDigestBytes) const;
};

class Sha256 {
 public:
  Sha256() { Reset(); }
  void Reset();
  void Update(const uint8_t* data, size_t size);
  Digest Finish();

  /// The digest of one buffer.
  static Digest Of(const uint8_t* data, size_t size);

 private:
  void Compress(const uint8_t* block);

  uint32_t state_[8];
  uint64_t length_bytes_;
  uint8_t block_[64];
  size_t block_used_;
};

}  // namespace boardlab::link
