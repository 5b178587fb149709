#pragma once

// boardlab-agent's event loop: Boost.Asio schedules the AgentCore step function and carries
// out its effects. It keeps one AgentService stream open (reconnecting with Backoff when it
// breaks), ticks heartbeats, runs jobs (JobRunner on the boards' BoardExecutors) and shuts down
// cleanly on SIGTERM/SIGINT: running children are killed, their results journaled and sent,
// the stream half-closed.
//
//   boost::asio::io_context io;
//   Agent agent(io, std::move(core), std::move(executors), std::move(blobs), stub, options);
//   agent.Start();
//   io.run();   // until Shutdown() (or a signal) has finished

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "agent/agent_core.h"
#include "agent/agent_stream.h"
#include "agent/artifact_cache.h"
#include "agent/backoff.h"
#include "agent/blob_store.h"
#include "agent/board_executor.h"
#include "agent/job_runner.h"
#include "boardlab/v1/agent_service.grpc.pb.h"

namespace boardlab::agent {

class Agent {
 public:
  struct Options {
    std::string token;
    std::string state_dir;                           // cache/ and work/ below it
    bool handle_signals = true;                      // SIGTERM/SIGINT -> Shutdown()
    std::chrono::milliseconds shutdown_grace{3000};  // for results and acks before exiting
    std::function<void(const std::string&)> log;     // agent log lines; stderr when empty
  };

  /// `executors` maps each board id to its driver. `stub` must outlive the agent; the rest is
  /// owned by it. Everything runs on `io`'s thread (one thread calls io.run()).
  Agent(boost::asio::io_context& io, std::unique_ptr<AgentCore> core,
        std::map<std::string, BoardExecutorPtr> executors, BlobStorePtr blobs,
        v1::AgentService::StubInterface& stub, Options options);
  ~Agent();

  /// Opens the stream. Call once, before io.run().
  void Start();
  /// Cancels running jobs, sends their results, closes the stream and lets io.run() return.
  /// Thread-safe (posts into the io_context).
  void Shutdown();

  /// For tests: the core, only to be read on the io thread.
  const AgentCore& core() const { return *core_; }
  int connects() const { return connects_; }

 private:
  void Dispatch(AgentEvent event);
  void Apply(AgentEffect& effect);
  void Connect();
  void OnStreamClosed(uint64_t session, absl::Status status);
  void ScheduleReconnect();
  void ScheduleHeartbeat();
  void BeginShutdown();
  void MaybeFinishShutdown();
  void FinishShutdown();
  void Log(const std::string& line);

  boost::asio::io_context& io_;
  std::unique_ptr<AgentCore> core_;
  std::map<std::string, BoardExecutorPtr> executors_;
  BlobStorePtr blobs_;
  v1::AgentService::StubInterface& stub_;
  Options options_;
  boost::asio::thread_pool transfers_{2};
  ArtifactCache cache_;
  std::map<JobKey, std::shared_ptr<JobRunner>> runners_;
  std::unique_ptr<AgentStream> stream_;
  uint64_t session_ = 0;  // counts streams; events of an old stream are ignored
  int connects_ = 0;
  Backoff backoff_;
  boost::asio::steady_timer reconnect_timer_;
  boost::asio::steady_timer heartbeat_timer_;
  boost::asio::steady_timer shutdown_timer_;
  boost::asio::signal_set signals_;
  // Keeps io.run() going while the agent waits on threads outside the loop (gRPC, transfers).
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::deque<AgentEvent> pending_events_;
  bool dispatching_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
};

}  // namespace boardlab::agent
