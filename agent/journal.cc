#include "agent/journal.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace boardlab::agent {
namespace {

using nlohmann::json;
constexpr int kJournalVersion = 1;

// The file of snapshot number `seq`: even ones in `path`, odd ones in `path.1`.
std::string SlotPath(const std::string& path, int64_t seq) {
  return seq % 2 == 0 ? path : absl::StrCat(path, ".1");
}

// Overwrites `path` in place and syncs it. Truncating an existing file keeps its inode, where a
// temporary file renamed over the journal cost the file system an inode allocation and release
// per save (most of the agent's kernel time at a few hundred jobs per second).
absl::Status OverwriteFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("Writing journal '", path, "': ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("Writing journal '", path, "': ", std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fdatasync(fd) == 0;
  const int e = errno;
  ::close(fd);
  if (!synced) {
    return absl::InternalError(absl::StrCat("Writing journal '", path, "': ", std::strerror(e)));
  }
  return absl::OkStatus();
}

struct Snapshot {
  int64_t seq = 0;  // 0: written before snapshots were numbered
  std::vector<JournalEntry> entries;
};

// One journal file; nullopt when it does not exist.
absl::StatusOr<std::optional<Snapshot>> ReadSnapshot(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::optional<Snapshot>();
  std::stringstream text;
  text << in.rdbuf();
  const auto corrupt = [&](const std::string& why) {
    return absl::DataLossError(absl::StrCat("Reading journal '", path, "': ", why,
                                            " (move the file away to start with an empty one)"));
  };
  Snapshot snapshot;
  try {
    const json doc = json::parse(text.str());
    if (doc.value("version", 0) != kJournalVersion) {
      return corrupt(absl::StrCat("unknown version ", doc.value("version", 0)));
    }
    snapshot.seq = doc.value("seq", int64_t{0});
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
      snapshot.entries.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return corrupt(e.what());
  }
  return std::optional<Snapshot>(std::move(snapshot));
}

// The newest readable snapshot of the two files. One unreadable file next to a readable one is
// a save the agent did not finish (it died mid-write): the other holds the last complete one.
absl::StatusOr<Snapshot> ReadNewest(const std::string& path) {
  absl::StatusOr<std::optional<Snapshot>> slots[2] = {ReadSnapshot(SlotPath(path, 0)),
                                                      ReadSnapshot(SlotPath(path, 1))};
  std::optional<Snapshot> newest;
  for (auto& slot : slots) {
    if (slot.ok() && slot->has_value() && (!newest || (*slot)->seq > newest->seq)) {
      newest = std::move(**slot);
    }
  }
  if (newest) return *std::move(newest);
  for (const auto& slot : slots) {
    if (!slot.ok()) return slot.status();
  }
  return Snapshot();
}

}  // namespace

absl::StatusOr<std::vector<JournalEntry>> LoadJournal(const std::string& path) {
  absl::StatusOr<Snapshot> snapshot = ReadNewest(path);
  if (!snapshot.ok()) return snapshot.status();
  return std::move(snapshot->entries);
}

JournalFile::JournalFile(std::string path) : path_(std::move(path)) {
  absl::StatusOr<Snapshot> newest = ReadNewest(path_);
  if (newest.ok()) seq_ = newest->seq;
}

absl::Status JournalFile::Save(const std::vector<JournalEntry>& entries) {
  std::vector<std::string> jobs;
  std::map<std::string, RenderedResult> rendered;  // this snapshot's, kept for the next one
  for (const JournalEntry& e : entries) {
    std::string job = json{
        {"job_id", e.job_id},
        {"attempt", e.attempt},
        {"board_id", e.board_id},
        {"running",
         e.running}}.dump();
    if (e.result.has_value()) {
      const std::string key = absl::StrCat(e.job_id, "#", e.attempt);
      absl::StatusOr<RenderedResult> result = Render(key, *e.result);
      if (!result.ok()) return result.status();
      job.pop_back();  // the object's closing brace
      absl::StrAppend(&job, ",\"result\":", result->text, "}");
      rendered.emplace(key, *std::move(result));
    }
    jobs.push_back(std::move(job));
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  const int64_t seq = seq_ + 1;
  const std::string doc = absl::StrCat("{\"version\":", kJournalVersion, ",\"seq\":", seq,
                                       ",\"jobs\":[", absl::StrJoin(jobs, ","), "]}\n");
  if (absl::Status ok = OverwriteFile(SlotPath(path_, seq), doc); !ok.ok()) return ok;
  seq_ = seq;
  rendered_ = std::move(rendered);
  return absl::OkStatus();
}

// A result waits in every snapshot until the server acknowledges it, so a slow server made each
// save render the same results to JSON again (most of a busy agent's CPU); the binary form tells
// whether the last rendering still holds, at a fraction of the cost.
absl::StatusOr<JournalFile::RenderedResult> JournalFile::Render(const std::string& key,
                                                                const v1::RunResult& result) {
  RenderedResult out;
  out.binary = result.SerializeAsString();
  auto known = rendered_.find(key);
  if (known != rendered_.end() && known->second.binary == out.binary) return known->second;
  auto status = google::protobuf::util::MessageToJsonString(result, &out.text);
  if (!status.ok()) return absl::InternalError(absl::StrCat("journal: ", status.ToString()));
  return out;
}

absl::Status SaveJournal(const std::string& path, const std::vector<JournalEntry>& entries) {
  return JournalFile(path).Save(entries);
}

JournalWriter::JournalWriter(std::string path, ErrorFn on_error,
                             std::chrono::milliseconds min_interval)
    : file_(std::move(path)),
      on_error_(std::move(on_error)),
      min_interval_(min_interval),
      thread_([this] { Loop(); }) {}

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
  ++flushing_;
  wake_.notify_all();
  idle_.wait(lock, [this] { return !pending_.has_value() && !writing_; });
  --flushing_;
}

int JournalWriter::writes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writes_;
}

void JournalWriter::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto last_save = std::chrono::steady_clock::now() - min_interval_;
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
    // Snapshots coming during the interval replace each other; the last one is saved.
    wake_.wait_until(lock, last_save + min_interval_, [this] { return stop_ || flushing_ > 0; });
    if (!pending_.has_value()) return;  // stopping with nothing left to write
    std::vector<JournalEntry> entries = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    lock.unlock();
    last_save = std::chrono::steady_clock::now();
    const absl::Status saved = file_.Save(entries);
    if (!saved.ok() && on_error_) on_error_(saved);
    lock.lock();
    writing_ = false;
    ++writes_;
    if (!pending_.has_value()) idle_.notify_all();
  }
}

}  // namespace boardlab::agent
