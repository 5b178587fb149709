#pragma once

// The two checksums of the board link (docs/board-protocol.md, "Frames"):
//
//   Crc32  CRC-32/ISO-HDLC (the zlib / Ethernet CRC): reflected polynomial 0xEDB88320, initial
//          value and final XOR 0xFFFFFFFF. Covers a whole frame. Crc32("123456789") = 0xCBF43926.
//   Crc8   CRC-8/SMBUS: polynomial 0x07, initial value 0, no reflection. Covers a frame header
//          only, so that a corrupted length is rejected before the receiver waits for its bytes.
//          Crc8("123456789") = 0xF4.
//
//   uint32_t crc = Crc32(header, 8);
//   crc = Crc32(payload, size, crc);     // continues the same CRC over more bytes

#include <stddef.h>
#include <stdint.h>

namespace boardlab::link {

/// CRC-32 of `size` bytes, continuing from `previous` (the value returned for the bytes before
/// them; 0 for the first bytes). `data` may be null when `size` is 0.
uint32_t Crc32(const uint8_t* data, size_t size, uint32_t previous = 0);

/// CRC-8/SMBUS of `size` bytes.
uint8_t Crc8(const uint8_t* data, size_t size);

}  // namespace boardlab::link
