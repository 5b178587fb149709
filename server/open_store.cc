#include "server/open_store.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "server/postgres_store.h"
#include "server/sqlite_store.h"

namespace boardlab::server {

absl::StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("store_password_file '", path, "': cannot open it"));
  }
  std::string password;
  std::getline(in, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("store_password_file '", path, "': the first line is empty"));
  }
  return password;
}

absl::StatusOr<StorePtr> OpenStore(const ServerConfig& config) {
  if (UsesPostgres(config)) {
    std::string password;
    if (!config.store_password_file.empty()) {
      auto read = ReadPasswordFile(config.store_password_file);
      if (!read.ok()) return read.status();
      password = *std::move(read);
    }
    auto store = PostgresStore::Open(config.store, password);
    if (!store.ok()) return store.status();
    return StorePtr(*std::move(store));
  }
  std::error_code error;
  std::filesystem::create_directories(config.data_dir, error);  // Open reports what matters
  auto store = SqliteStore::Open(config.data_dir + "/boardlab.db");
  if (!store.ok()) return store.status();
  return StorePtr(*std::move(store));
}

}  // namespace boardlab::server
