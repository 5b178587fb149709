#pragma once

// Little-endian encoding of message fields into a caller's buffer, and decoding with bounds
// checks, for the board link's messages (runtime/link/messages.h). Neither allocates. A writer
// that runs out of room, or a reader that runs past the end, remembers it (ok() == false) and
// stops touching memory, so a message is encoded or decoded in straight-line code and checked
// once at the end.
//
//   WireWriter w(buffer, sizeof(buffer));
//   w.U8(kind); w.U32(size); w.Bytes(digest, 32); w.String8("an505");
//   if (!w.ok()) ...                        // did not fit
//
//   WireReader r(payload, size);
//   uint8_t kind = r.U8(); uint32_t size = r.U32();
//   if (!r.ok() || !r.AtEnd()) ...          // truncated or trailing bytes

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace boardlab::link {

class WireWriter {
 public:
  WireWriter(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}

  void U8(uint8_t v) { Put(&v, 1); }
  void U16(uint16_t v) { PutLittleEndian(v, 2); }
  void U32(uint32_t v) { PutLittleEndian(v, 4); }
  void U64(uint64_t v) { PutLittleEndian(v, 8); }
  void I8(int8_t v) { U8(static_cast<uint8_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    U64(bits);
  }
  void Bytes(const uint8_t* p, size_t n) { Put(p, n); }
  /// A string of at most 255 bytes, length first; longer strings are cut at 255.
  void String8(const char* s) {
    const size_t n = BoundedLength(s, 255);
    U8(static_cast<uint8_t>(n));
    Put(reinterpret_cast<const uint8_t*>(s), n);
  }
  /// A string of at most `max` (<= 65535) bytes, 16-bit length first; longer strings are cut.
  void String16(const char* s, size_t max = 65535) {
    const size_t n = BoundedLength(s, max);
    U16(static_cast<uint16_t>(n));
    Put(reinterpret_cast<const uint8_t*>(s), n);
  }

  bool ok() const { return ok_; }
  size_t size() const { return size_; }
  size_t remaining() const { return capacity_ - size_; }

 private:
  static size_t BoundedLength(const char* s, size_t max) {
    size_t n = 0;
    while (s != nullptr && n < max && s[n] != '\0') ++n;
    return n;
  }
  void Put(const uint8_t* p, size_t n) {
    if (!ok_ || n > capacity_ - size_) {
      ok_ = false;
      return;
    }
    if (n > 0) memcpy(data_ + size_, p, n);
    size_ += n;
  }
  void PutLittleEndian(uint64_t v, int bytes) {
    uint8_t b[8];
    for (int i = 0; i < bytes; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    Put(b, static_cast<size_t>(bytes));
  }

  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool ok_ = true;
};

class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t U8() { return static_cast<uint8_t>(GetLittleEndian(1)); }
  uint16_t U16() { return static_cast<uint16_t>(GetLittleEndian(2)); }
  uint32_t U32() { return static_cast<uint32_t>(GetLittleEndian(4)); }
  uint64_t U64() { return GetLittleEndian(8); }
  int8_t I8() { return static_cast<int8_t>(U8()); }
  double F64() {
    const uint64_t bits = U64();
    double v;
    memcpy(&v, &bits, 8);
    return v;
  }
  void Bytes(uint8_t* out, size_t n) {
    const uint8_t* p = Take(n);
    if (p != nullptr && n > 0) memcpy(out, p, n);
  }
  /// A String8 into `out` (capacity `out_size` >= 1, always NUL-terminated; cut if longer).
  void String8(char* out, size_t out_size) { CopyString(U8(), out, out_size); }
  void String16(char* out, size_t out_size) { CopyString(U16(), out, out_size); }
  /// The rest of the payload (e.g. a chunk's data), without copying.
  const uint8_t* Rest(size_t* n) {
    *n = ok_ ? size_ - pos_ : 0;
    const uint8_t* p = ok_ ? data_ + pos_ : nullptr;
    pos_ = size_;
    return p;
  }

  bool ok() const { return ok_; }
  bool AtEnd() const { return pos_ == size_; }

 private:
  const uint8_t* Take(size_t n) {
    if (!ok_ || n > size_ - pos_) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  uint64_t GetLittleEndian(int bytes) {
    const uint8_t* p = Take(static_cast<size_t>(bytes));
    uint64_t v = 0;
    for (int i = 0; p != nullptr && i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
  }
  void CopyString(size_t n, char* out, size_t out_size) {
    const uint8_t* p = Take(n);
    const size_t keep = p == nullptr ? 0 : (n < out_size - 1 ? n : out_size - 1);
    if (keep > 0) memcpy(out, p, keep);
    out[keep] = '\0';
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace boardlab::link
