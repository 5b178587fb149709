#include "proto/support/digest.h"

#include <openssl/evp.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace boardlab::api {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(std::span<const uint8_t> bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

void Sha256::Update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::FinishHex() {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), hash, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[hash[i] >> 4]);
    hex.push_back(kHex[hash[i] & 15]);
  }
  return hex;
}

std::string Sha256Hex(std::span<const uint8_t> bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.FinishHex();
}

std::string Sha256Hex(std::string_view bytes) {
  Sha256 hash;
  hash.Update(bytes);
  return hash.FinishHex();
}

v1::Digest DigestOf(std::string_view bytes) {
  v1::Digest digest;
  digest.set_sha256(Sha256Hex(bytes));
  digest.set_size_bytes(static_cast<int64_t>(bytes.size()));
  return digest;
}

bool IsValidSha256Hex(std::string_view hex) {
  if (hex.size() != 64) return false;
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string DigestString(const v1::Digest& digest) {
  return absl::StrCat(digest.sha256(), ":", digest.size_bytes());
}

}  // namespace boardlab::api
