#pragma once

// One AgentService.Connect call on gRPC's synchronous API: a reader thread hands every
// ServerMessage to `on_message`, a writer thread sends queued AgentMessages in order, and
// `on_closed` is called once when the call ends (server gone, cancelled, error). Both callbacks
// run on the reader thread: the agent posts them into its io_context.
//
//   AgentStream stream(stub, token,
//       [&](v1::ServerMessage m) { post(io, ...); },
//       [&](absl::Status s) { post(io, ...); });
//   stream.Send(hello);
//   stream.FinishWrites();   // half-close after the queue is sent
//   // ~AgentStream cancels the call and joins both threads

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "boardlab/v1/agent_service.grpc.pb.h"

namespace boardlab::agent {

class AgentStream {
 public:
  using MessageFn = std::function<void(v1::ServerMessage message)>;
  using ClosedFn = std::function<void(absl::Status status)>;

  /// Starts the call at once. `stub` must outlive the stream.
  AgentStream(v1::AgentService::StubInterface& stub, const std::string& token, MessageFn on_message,
              ClosedFn on_closed);
  /// Cancels the call (if still open) and joins the threads; on_closed has run when it returns.
  ~AgentStream();

  /// Queues `message`; ignored after FinishWrites() or once the call ended. Thread-safe.
  void Send(v1::AgentMessage message);
  /// Sends what is queued, then half-closes; the server's remaining messages still arrive.
  void FinishWrites();
  /// Cancels the call.
  void Cancel();

 private:
  void ReadLoop();
  void WriteLoop();

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriterInterface<v1::AgentMessage, v1::ServerMessage>> stream_;
  MessageFn on_message_;
  ClosedFn on_closed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<v1::AgentMessage> queue_;
  bool writes_finished_ = false;  // no more Send()s accepted
  bool closed_ = false;           // the call ended; the writer stops
  bool writing_ = false;          // the writer is inside Write()
  std::thread writer_;
  std::thread reader_;
};

}  // namespace boardlab::agent
