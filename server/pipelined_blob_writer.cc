#include "server/pipelined_blob_writer.h"

namespace boardlab::server {
namespace {

// Two chunks in the queue and one on the worker: at 4 MiB chunks, 12 MiB per upload at most.
constexpr size_t kMaxPending = 2;

}  // namespace

PipelinedBlobWriter::PipelinedBlobWriter(std::unique_ptr<BlobWriter> writer)
    : writer_(std::move(writer)), thread_([this] { Run(); }) {}

PipelinedBlobWriter::~PipelinedBlobWriter() { Stop(/*drain=*/false).IgnoreError(); }

absl::Status PipelinedBlobWriter::Append(std::string& chunk) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return pending_.size() < kMaxPending || !status_.ok(); });
  if (!status_.ok()) return status_;
  pending_.emplace_back().swap(chunk);
  if (!spare_.empty()) {
    chunk.swap(spare_.back());
    spare_.pop_back();
  }
  changed_.notify_all();
  return absl::OkStatus();
}

absl::Status PipelinedBlobWriter::Commit() {
  if (absl::Status ok = Stop(/*drain=*/true); !ok.ok()) return ok;
  return writer_->Commit();
}

absl::Status PipelinedBlobWriter::Stop(bool drain) {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    if (!drain) pending_.clear();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return status_;
}

void PipelinedBlobWriter::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !pending_.empty() || closing_; });
    if (pending_.empty() || !status_.ok()) return;
    std::string chunk = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    absl::Status ok = writer_->Append(chunk);
    chunk.clear();
    lock.lock();
    if (!ok.ok()) status_ = ok;
    spare_.push_back(std::move(chunk));
    changed_.notify_all();
  }
}

}  // namespace boardlab::server
