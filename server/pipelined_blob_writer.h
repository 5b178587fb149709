#pragma once

// Receiving an upload and hashing + writing it each take a core's worth of time per byte; this
// writer overlaps them: the gRPC thread hands each chunk over and goes back to the socket while
// a second thread feeds the chunk to the blob store's writer.
//
// Usage:
//   PipelinedBlobWriter pipeline(std::move(writer));
//   while (reader->Read(&chunk)) RETURN_IF_ERROR(pipeline.Append(*chunk.mutable_data()));
//   RETURN_IF_ERROR(pipeline.Commit());

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "server/blob_store.h"

namespace boardlab::server {

class PipelinedBlobWriter {
 public:
  explicit PipelinedBlobWriter(std::unique_ptr<BlobWriter> writer);
  /// Without Commit(), stops the thread and drops the writer (which leaves no trace).
  ~PipelinedBlobWriter();
  PipelinedBlobWriter(const PipelinedBlobWriter&) = delete;
  PipelinedBlobWriter& operator=(const PipelinedBlobWriter&) = delete;

  /// Takes the bytes of `chunk`, leaving it a spare buffer of about the same capacity (so that
  /// the next chunk is received without a new allocation). Blocks while two chunks are waiting.
  /// Returns the first error the writer has met so far; from then on nothing more is written.
  absl::Status Append(std::string& chunk);
  /// Waits until every chunk is written, then commits; the writer's error if there was one.
  absl::Status Commit();

 private:
  void Run();
  /// Lets the thread write what is queued (`drain`) or drops it, joins it; returns status_.
  absl::Status Stop(bool drain);

  std::unique_ptr<BlobWriter> writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pending_;  // guarded by mutex_
  std::vector<std::string> spare_;   // guarded by mutex_
  absl::Status status_;              // guarded by mutex_
  bool closing_ = false;             // guarded by mutex_
  std::thread thread_;
};

}  // namespace boardlab::server
