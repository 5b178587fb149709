#include "agent/artifact_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

bool ReadAll(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return !in.bad();
}

}  // namespace

std::optional<ArtifactCache::FileStamp> ArtifactCache::StampOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

ArtifactCache::ArtifactCache(std::string dir, BlobStore& store)
    : dir_(std::move(dir)), store_(store) {}

absl::StatusOr<std::string> ArtifactCache::Fetch(const v1::Digest& digest) {
  if (!api::IsValidSha256Hex(digest.sha256())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Failed to obtain blob: '", digest.sha256(), "' is not a SHA-256 digest"));
  }
  const std::string path = (fs::path(dir_) / digest.sha256()).string();
  if (StillVerified(digest.sha256(), path)) return path;
  std::string bytes;
  if (ReadAll(path, bytes) && api::Sha256Hex(bytes) == digest.sha256()) {
    Verified(digest.sha256(), path);
    return path;
  }

  absl::StatusOr<std::string> fetched = store_.Get(digest);
  if (!fetched.ok()) {
    return absl::Status(fetched.status().code(),
                        absl::StrCat("Failed to obtain blob ", api::DigestString(digest), ": ",
                                     fetched.status().message()));
  }
  ++downloads_;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::string temp = absl::StrCat(path, ".tmp.", ::getpid(), ".", temp_counter_.fetch_add(1));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(fetched->data(), static_cast<std::streamsize>(fetched->size()));
    if (!out) {
      fs::remove(temp, ec);
      return absl::InternalError(absl::StrCat("Failed to store blob in the cache: writing '", temp,
                                              "' failed (disk full?)"));
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return absl::InternalError(absl::StrCat("Failed to store blob in the cache: renaming to '",
                                            path, "': ", ec.message()));
  }
  Verified(digest.sha256(), path);
  return path;
}

void ArtifactCache::Verified(const std::string& sha256, const std::string& path) {
  std::optional<FileStamp> stamp = StampOf(path);
  std::lock_guard lock(mutex_);
  if (stamp) {
    verified_[sha256] = *stamp;
  } else {
    verified_.erase(sha256);
  }
}

bool ArtifactCache::StillVerified(const std::string& sha256, const std::string& path) const {
  std::optional<FileStamp> stamp = StampOf(path);
  std::lock_guard lock(mutex_);
  auto it = verified_.find(sha256);
  return stamp && it != verified_.end() && it->second == *stamp;
}

}  // namespace boardlab::agent
