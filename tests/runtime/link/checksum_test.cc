// The board link's checksums and digests against implementations we did not write: CRC-32 from
// zlib, SHA-256 from OpenSSL, plus the published check values.

#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/link/crc.h"
#include "runtime/link/sha256.h"

namespace boardlab::link {
namespace {

std::vector<uint8_t> RandomData(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> data(size);
  for (uint8_t& b : data) b = static_cast<uint8_t>(random());
  return data;
}

const uint8_t* Check() { return reinterpret_cast<const uint8_t*>("123456789"); }

TEST(Crc, PublishedCheckValues) {
  EXPECT_EQ(Crc32(Check(), 9), 0xCBF43926u);  // CRC-32/ISO-HDLC
  EXPECT_EQ(Crc8(Check(), 9), 0xF4u);         // CRC-8/SMBUS
  EXPECT_EQ(Crc32(nullptr, 0), 0u);
}

TEST(Crc, Crc32MatchesZlibWholeAndInPieces) {
  for (size_t size : {1u, 7u, 64u, 1000u, 65537u}) {
    const std::vector<uint8_t> data = RandomData(size, static_cast<uint32_t>(size));
    const uint32_t expected =
        static_cast<uint32_t>(::crc32(0L, data.data(), static_cast<uInt>(size)));
    EXPECT_EQ(Crc32(data.data(), size), expected) << size;
    const size_t half = size / 3;
    EXPECT_EQ(Crc32(data.data() + half, size - half, Crc32(data.data(), half)), expected) << size;
  }
}

TEST(Sha256, MatchesOpenSslForEveryLengthAroundTheBlockSize) {
  const std::vector<uint8_t> data = RandomData(300, 5);
  for (size_t size = 0; size <= data.size(); ++size) {
    uint8_t expected[SHA256_DIGEST_LENGTH];
    ::SHA256(data.data(), size, expected);
    const Digest d = Sha256::Of(data.data(), size);
    EXPECT_EQ(std::vector<uint8_t>(d.bytes, d.bytes + 32),
              std::vector<uint8_t>(expected, expected + 32))
        << size;
  }
}

TEST(Sha256, IncrementalUpdatesEqualOneShot) {
  const std::vector<uint8_t> data = RandomData(1 << 20, 9);
  uint8_t expected[SHA256_DIGEST_LENGTH];
  ::SHA256(data.data(), data.size(), expected);
  std::mt19937 random(3);
  Sha256 hash;
  for (size_t at = 0; at < data.size();) {
    const size_t n = std::min<size_t>(random() % 3000, data.size() - at);
    hash.Update(data.data() + at, n);
    at += n;
  }
  const Digest d = hash.Finish();
  EXPECT_EQ(std::vector<uint8_t>(d.bytes, d.bytes + 32),
            std::vector<uint8_t>(expected, expected + 32));
  hash.Reset();
  hash.Update(nullptr, 0);
  char hex[65];
  EXPECT_STREQ(hash.Finish().ToHex(hex),
               "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_STREQ(Sha256::Of(Check(), 9).ToHex(hex, 4), "15e2b0d3");
}

}  // namespace
}  // namespace boardlab::link
