#include "agent/journal.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
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

using nlohmann::json;
constexpr int kJournalVersion = 1;

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temp = absl::StrCat(path, ".tmp");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("Writing journal '", temp, "': ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("Writing journal '", temp, "': ", std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("Writing journal '", path, "': rename: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<JournalEntry>> LoadJournal(const std::string& path) {
  std::vector<JournalEntry> entries;
  std::ifstream in(path);
  if (!in) return entries;
  std::stringstream text;
  text << in.rdbuf();
  const auto corrupt = [&](const std::string& why) {
    return absl::DataLossError(absl::StrCat("Reading journal '", path, "': ", why,
                                            " (move the file away to start with an empty one)"));
  };
  try {
    const json doc = json::parse(text.str());
    if (doc.value("version", 0) != kJournalVersion) {
      return corrupt(absl::StrCat("unknown version ", doc.value("version", 0)));
    }
    for (const json& j : doc.at("jobs")) {
      JournalEntry e;
      e.job_id = j.at("job_id").get<std::string>();
      e.attempt = j.at("attempt").get<int>();
      e.board_id = j.value("board_id", "");
      e.running = j.value("running", false);
      if (j.contains("result")) {
        v1::RunResult result;
        auto status = google::protobuf::util::JsonStringToMessage(j.at("result").dump(), &result);
        if (!status.ok()) {
          return corrupt(absl::StrCat("job ", e.job_id, ": bad result: ", status.ToString()));
        }
        e.result = std::move(result);
      }
      entries.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return corrupt(e.what());
  }
  return entries;
}

absl::Status SaveJournal(const std::string& path, const std::vector<JournalEntry>& entries) {
  json jobs = json::array();
  for (const JournalEntry& e : entries) {
    json j = {{"job_id", e.job_id},
              {"attempt", e.attempt},
              {"board_id", e.board_id},
              {"running", e.running}};
    if (e.result.has_value()) {
      std::string text;
      auto status = google::protobuf::util::MessageToJsonString(*e.result, &text);
      if (!status.ok()) return absl::InternalError(absl::StrCat("journal: ", status.ToString()));
      j["result"] = json::parse(text);
    }
    jobs.push_back(std::move(j));
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  return WriteFileAtomically(path, json{{"version", kJournalVersion}, {"jobs", jobs}}.dump(2));
}

JournalWriter::JournalWriter(std::string path, ErrorFn on_error)
    : path_(std::move(path)), on_error_(std::move(on_error)), thread_([this] { Loop(); }) {}

JournalWriter::~JournalWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void JournalWriter::Write(std::vector<JournalEntry> entries) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = std::move(entries);
  }
  wake_.notify_all();
}

void JournalWriter::Flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return !pending_.has_value() && !writing_; });
}

int JournalWriter::writes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writes_;
}

void JournalWriter::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
    if (!pending_.has_value()) return;  // stopping with nothing left to write
    std::vector<JournalEntry> entries = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    lock.unlock();
    const absl::Status saved = SaveJournal(path_, entries);
    if (!saved.ok() && on_error_) on_error_(saved);
    lock.lock();
    writing_ = false;
    ++writes_;
    if (!pending_.has_value()) idle_.notify_all();
  }
}

}  // namespace boardlab::agent
