#include "server/background_sha256.h"

namespace boardlab::server {
namespace {

// Two chunks in the queue and one being hashed: at 4 MiB chunks, 12 MiB per upload at most.
constexpr size_t kMaxPending = 2;

}  // namespace

BackgroundSha256::BackgroundSha256() : thread_([this] { Run(); }) {}

BackgroundSha256::~BackgroundSha256() {
  {
    std::lock_guard lock(mutex_);
    pending_.clear();
  }
  Stop();
}

void BackgroundSha256::Update(std::string& chunk) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return pending_.size() < kMaxPending; });
  pending_.emplace_back().swap(chunk);
  if (!spare_.empty()) {
    chunk.swap(spare_.back());
    spare_.pop_back();
  }
  changed_.notify_all();
}

std::string BackgroundSha256::FinishHex() {
  Stop();
  return hash_.FinishHex();
}

void BackgroundSha256::Stop() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundSha256::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !pending_.empty() || closing_; });
    if (pending_.empty()) return;
    std::string chunk = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    hash_.Update(chunk);
    chunk.clear();
    lock.lock();
    spare_.push_back(std::move(chunk));
    changed_.notify_all();
  }
}

}  // namespace boardlab::server
