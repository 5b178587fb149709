#include "agent/agent_stream.h"

#include "proto/support/grpc_util.h"

namespace boardlab::agent {

AgentStream::AgentStream(v1::AgentService::StubInterface& stub, const std::string& token,
                         MessageFn on_message, ClosedFn on_closed)
    : on_message_(std::move(on_message)), on_closed_(std::move(on_closed)) {
  api::AddBearerToken(context_, token);
  // Connect() starts the call without waiting for the server; a dead server shows up as a failed
  // Read() in the reader thread.
  stream_ = stub.Connect(&context_);
  writer_ = std::thread([this] { WriteLoop(); });
  reader_ = std::thread([this] { ReadLoop(); });
}

AgentStream::~AgentStream() {
  Cancel();
  if (reader_.joinable()) reader_.join();
}

void AgentStream::Send(v1::AgentMessage message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (writes_finished_ || closed_) return;
    queue_.push_back(std::move(message));
  }
  wake_.notify_all();
}

void AgentStream::FinishWrites() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writes_finished_ = true;
  }
  wake_.notify_all();
}

void AgentStream::Cancel() { context_.TryCancel(); }

void AgentStream::WriteLoop() {
  for (;;) {
    v1::AgentMessage message;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return closed_ || writes_finished_ || !queue_.empty(); });
      if (closed_) return;
      if (queue_.empty()) {
        lock.unlock();
        stream_->WritesDone();
        return;
      }
      message = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
    }
    // A failed write means the call is broken; the reader sees it too and ends the stream.
    const bool written = stream_->Write(message);
    std::lock_guard<std::mutex> lock(mutex_);
    writing_ = false;
    if (!written) return;
  }
}

void AgentStream::ReadLoop() {
  v1::ServerMessage message;
  while (stream_->Read(&message)) {
    on_message_(std::move(message));
    message.Clear();
  }
  bool writing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    queue_.clear();
    writing = writing_;
  }
  wake_.notify_all();
  // A writer inside Write() may wait on flow control: cancel the call (over anyway, Read()
  // failed) so that it returns. Otherwise leave it, so that Finish() gives the server's status.
  if (writing) context_.TryCancel();
  writer_.join();
  const grpc::Status status = stream_->Finish();
  on_closed_(api::FromGrpcStatus(status));
}

}  // namespace boardlab::agent
