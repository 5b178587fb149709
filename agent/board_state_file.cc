#include "agent/board_state_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kVersion = 1;

absl::Status WriteError(const std::string& path, const std::string& why) {
  return absl::InternalError(absl::StrCat("Writing board state '", path, "': ", why));
}

// Writes `text` into a new file `path` and syncs it to disk.
absl::Status WriteSynced(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError(path, std::strerror(errno));
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return WriteError(path, std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  return synced ? absl::OkStatus() : WriteError(path, std::strerror(e));
}

// The rename itself is durable only once the directory is synced.
void SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string BoardStatePath(const std::string& state_dir, const std::string& board_id) {
  return (fs::path(state_dir) / "boards" / absl::StrCat(board_id, ".json")).string();
}

absl::StatusOr<BoardState> LoadBoardState(const std::string& path) {
  std::ifstream in(path);
  if (!in) return BoardState{};
  std::stringstream text;
  text << in.rdbuf();
  const auto corrupt = [&](const std::string& why) {
    return absl::DataLossError(absl::StrCat("Reading board state '", path, "': ", why,
                                            " (move the file away: the agent then knows nothing "
                                            "of the board and probes it afresh)"));
  };
  const json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return corrupt("not a JSON object");
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || *version != kVersion) {
    return corrupt(absl::StrCat("unknown version (this agent reads version ", kVersion, ")"));
  }
  BoardState state;
  for (const auto& [key, value] : doc.items()) {
    if (key == "version") continue;
    if (key == "learnt_build_id" && value.is_string()) {
      state.learnt_build_id = value.get<std::string>();
    } else if (key == "quarantined" && value.is_boolean()) {
      state.quarantined = value.get<bool>();
    } else if (key == "quarantine_reason" && value.is_string()) {
      state.quarantine_reason = value.get<std::string>();
    } else {
      return corrupt(absl::StrCat("unknown key or wrong type: '", key, "'"));
    }
  }
  return state;
}

absl::Status SaveBoardState(const std::string& path, const BoardState& state) {
  const fs::path target(path);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return WriteError(path, ec.message());
  json doc = {{"version", kVersion},
              {"learnt_build_id", state.learnt_build_id},
              {"quarantined", state.quarantined},
              {"quarantine_reason", state.quarantine_reason}};
  const std::string temporary = path + ".tmp";
  if (absl::Status s = WriteSynced(temporary, doc.dump(2) + "\n"); !s.ok()) return s;
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(temporary.c_str());
    return WriteError(path, absl::StrCat("renaming '", temporary, "': ", std::strerror(e)));
  }
  SyncDirectory(target.parent_path());
  return absl::OkStatus();
}

}  // namespace boardlab::agent
