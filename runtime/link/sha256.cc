#include "runtime/link/sha256.h"

#include <string.h>

namespace boardlab::link {
namespace {

// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

uint32_t LoadBigEndian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

bool Digest::operator==(const Digest& other) const {
  return memcmp(bytes, other.bytes, kDigestBytes) == 0;
}

const char* Digest::ToHex(char* out, size_t count) const {
  static const char kHex[] = "0123456789abcdef";
  if (count > kDigestBytes) count = kDigestBytes;
  for (size_t i = 0; i < count; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 0xF];
  }
  out[2 * count] = '\0';
  return out;
}

void Sha256::Reset() {
  // Section 5.3.3: the initial hash value.
  static const uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(state_, kInitial, sizeof(state_));
  length_bytes_ = 0;
  block_used_ = 0;
}

void Sha256::Compress(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t big_s1 = Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + big_s1 + choose + kRoundConstants[t] + w[t];
    const uint32_t big_s0 = Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = big_s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::Update(const uint8_t* data, size_t size) {
  if (size == 0) return;  // `data` may then be null, which memcpy does not allow
  length_bytes_ += size;
  if (block_used_ > 0) {
    const size_t take = size < 64 - block_used_ ? size : 64 - block_used_;
    memcpy(block_ + block_used_, data, take);
    block_used_ += take;
    data += take;
    size -= take;
    if (block_used_ < 64) return;
    Compress(block_);
    block_used_ = 0;
  }
  // Whole blocks straight from the caller's buffer.
  for (; size >= 64; data += 64, size -= 64) Compress(data);
  if (size > 0) {
    memcpy(block_, data, size);
    block_used_ = size;
  }
}

Digest Sha256::Finish() {
  // Section 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the message length in bits.
  const uint64_t bits = length_bytes_ * 8;
  static const uint8_t kPadding[64] = {0x80};
  const size_t pad = block_used_ < 56 ? 56 - block_used_ : 120 - block_used_;
  Update(kPadding, pad);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Update(length, 8);
  Digest digest;
  for (int i = 0; i < 8; ++i) {
    for (int b = 0; b < 4; ++b)
      digest.bytes[4 * i + b] = static_cast<uint8_t>(state_[i] >> (24 - 8 * b));
  }
  return digest;
}

Digest Sha256::Of(const uint8_t* data, size_t size) {
  Sha256 hash;
  hash.Update(data, size);
  return hash.Finish();
}

}  // namespace boardlab::link
