#pragma once

// What server/postgres_store.cc and server/postgres_cluster.cc share: statement parameters and
// result rows in libpq's binary format.

#include <endian.h>
#include <libpq-fe.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/strip.h"
#include "server/postgres_store.h"
#include "server/store_records.h"

namespace boardlab::server {

// Parameter types (pg_type OIDs, fixed since PostgreSQL 7): parameters and results travel in
// binary, so that bytea needs no escaping and numbers no formatting.
inline constexpr Oid kInt8Oid = 20;
inline constexpr Oid kTextOid = 25;
inline constexpr Oid kByteaOid = 17;
inline constexpr Oid kByteaArrayOid = 1001;
inline constexpr Oid kInt8ArrayOid = 1016;

/// A new connection with the server's settings (application name, UTF-8), not yet checked:
/// nullptr only when out of memory; PQstatus tells whether it is up.
PGconn* ConnectToPostgres(const std::string& conninfo, const std::string& password);

/// libpq's error text without its line end.
inline std::string Trimmed(const char* message) {
  return std::string(absl::StripTrailingAsciiWhitespace(message ? message : ""));
}

// Statement parameters, all in binary format.
class PostgresStore::Params {
 public:
  Params& Int(int64_t value) { return Add(kInt8Oid, BigEndian(value)); }
  Params& Text(std::string_view text) { return Add(kTextOid, std::string(text)); }
  Params& Bytes(std::string_view bytes) { return Add(kByteaOid, std::string(bytes)); }
  /// A one-dimensional bytea[].
  Params& BytesArray(const std::vector<std::string>& elements) {
    return Add(kByteaArrayOid, EncodedArray(kByteaOid, elements));
  }
  /// A one-dimensional bigint[].
  Params& IntArray(const std::vector<int64_t>& values) {
    std::vector<std::string> elements;
    for (int64_t value : values) elements.push_back(BigEndian(value));
    return Add(kInt8ArrayOid, EncodedArray(kInt8Oid, elements));
  }
  /// SQL NULL of `type`.
  Params& Null(Oid type) {
    Add(type, std::string());
    nulls_.back() = true;
    return *this;
  }

  int size() const { return static_cast<int>(values_.size()); }
  const Oid* types() const { return types_.data(); }
  std::vector<const char*> values() const {
    std::vector<const char*> values;
    for (size_t i = 0; i < values_.size(); ++i) {
      values.push_back(nulls_[i] ? nullptr : values_[i].data());
    }
    return values;
  }
  std::vector<int> lengths() const {
    std::vector<int> lengths;
    for (const std::string& value : values_) lengths.push_back(static_cast<int>(value.size()));
    return lengths;
  }

 private:
  static std::string BigEndian(int64_t value) {
    const uint64_t big_endian = htobe64(static_cast<uint64_t>(value));
    return std::string(reinterpret_cast<const char*>(&big_endian), 8);
  }
  /// PostgreSQL's binary array format, one dimension: dimensions, flags, element type, then
  /// the dimension's size and lower bound, then each element's length and bytes.
  static std::string EncodedArray(Oid element_type, const std::vector<std::string>& elements) {
    std::string encoded;
    auto append = [&](uint32_t value) {
      const uint32_t big_endian = htobe32(value);
      encoded.append(reinterpret_cast<const char*>(&big_endian), 4);
    };
    append(elements.empty() ? 0 : 1);  // dimensions
    append(0);                         // no NULL elements
    append(element_type);
    if (!elements.empty()) {
      append(static_cast<uint32_t>(elements.size()));
      append(1);  // lower bound
    }
    for (const std::string& element : elements) {
      append(static_cast<uint32_t>(element.size()));
      encoded += element;
    }
    return encoded;
  }
  Params& Add(Oid type, std::string value) {
    types_.push_back(type);
    values_.push_back(std::move(value));
    nulls_.push_back(false);
    return *this;
  }

  std::vector<std::string> values_;
  std::vector<Oid> types_;
  std::vector<bool> nulls_;
};

// One statement of a pipeline (PostgresStore::RunPipelined). Without parameters it is sent
// unprepared (BEGIN, COMMIT).
struct PostgresStore::Queued {
  const char* sql;
  Params params;
  const char* what;
};

// A query's result, columns in binary format.
class PostgresStore::Rows {
 public:
  explicit Rows(PGresult* result) : result_(result, PQclear) {}
  const PGresult* get() const { return result_.get(); }
  int size() const { return PQntuples(result_.get()); }
  /// A bigint or integer column.
  int64_t Int(int row, int column) const {
    const char* value = PQgetvalue(result_.get(), row, column);
    if (PQgetlength(result_.get(), row, column) == 4) {
      uint32_t big_endian;
      std::memcpy(&big_endian, value, 4);
      return static_cast<int32_t>(be32toh(big_endian));
    }
    uint64_t big_endian;
    std::memcpy(&big_endian, value, 8);
    return static_cast<int64_t>(be64toh(big_endian));
  }
  bool IsNull(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  /// A text or bytea column.
  std::string Bytes(int row, int column) const {
    return std::string(PQgetvalue(result_.get(), row, column),
                       static_cast<size_t>(PQgetlength(result_.get(), row, column)));
  }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

// The records in column `column` of every row, parsed.
template <typename Message, typename Rows>
absl::StatusOr<std::vector<Message>> ParseRecords(const Rows& rows, int column, const char* what) {
  std::vector<Message> records;
  for (int row = 0; row < rows.size(); ++row) {
    auto record = ParseRecord<Message>(rows.Bytes(row, column), what);
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
  return records;
}

}  // namespace boardlab::server
