#include "agent/agent.h"

#include <signal.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"

namespace boardlab::agent {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// After the last result is acknowledged on shutdown, how long the half-closed stream may still
// deliver before it is cut.
constexpr auto kCloseDelay = std::chrono::milliseconds(200);

std::string ConditionName(v1::BoardCondition condition) {
  switch (condition) {
    case v1::BOARD_CONDITION_RECOVERING:
      return "recovering";
    case v1::BOARD_CONDITION_QUARANTINED:
      return "quarantined";
    default:
      return "ready";
  }
}

}  // namespace

Agent::Agent(boost::asio::io_context& io, std::unique_ptr<AgentCore> core,
             std::map<std::string, BoardExecutorPtr> executors, BlobStorePtr blobs,
             v1::AgentService::StubInterface& stub, Options options)
    : io_(io),
      core_(std::move(core)),
      executors_(std::move(executors)),
      blobs_(std::move(blobs)),
      stub_(stub),
      options_(std::move(options)),
      cache_((std::filesystem::path(options_.state_dir) / "cache").string(), *blobs_),
      reconnect_timer_(io),
      heartbeat_timer_(io),
      shutdown_timer_(io),
      signals_(io),
      work_(boost::asio::make_work_guard(io)) {
  for (auto& [id, executor] : executors_) {
    executor->WatchCondition(
        [this, id = id](v1::BoardCondition condition, const std::string& reason) {
          Log(absl::StrCat("board ", id, ": ", ConditionName(condition), reason.empty() ? "" : ": ",
                           reason));
          Dispatch(BoardConditionChanged{id, condition, reason});
        });
  }
}

Agent::~Agent() {
  runners_.clear();
  stream_.reset();
  transfers_.join();
}

void Agent::Log(const std::string& line) {
  if (options_.log) return options_.log(line);
  std::cerr << "boardlab-agent: " << line << std::endl;
}

void Agent::Start() {
  if (options_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      Log(absl::StrCat("signal ", signal, ": shutting down"));
      BeginShutdown();
    });
  }
  boost::asio::post(io_, [this] { Connect(); });
}

void Agent::Shutdown() {
  boost::asio::post(io_, [this] { BeginShutdown(); });
}

void Agent::Dispatch(AgentEvent event) {
  // Effects may produce events (a cancelled runner flushing its log): they are queued, so that
  // one event is applied completely before the next.
  pending_events_.push_back(std::move(event));
  if (dispatching_) return;
  dispatching_ = true;
  while (!pending_events_.empty()) {
    AgentEvent next = std::move(pending_events_.front());
    pending_events_.pop_front();
    const bool welcome = std::holds_alternative<FromServer>(next) &&
                         std::get<FromServer>(next).message.has_welcome();
    std::optional<JobKey> done;
    if (const auto* d = std::get_if<JobDone>(&next)) done = d->key;
    if (absl::Status s = core_->Step(next); !s.ok()) Log(std::string(s.message()));
    for (AgentEffect& effect : core_->TakeEffects()) Apply(effect);
    if (welcome) {
      backoff_.Reset();
      Log(absl::StrCat("connected; heartbeat every ", core_->heartbeat_interval_ms(), " ms"));
      ScheduleHeartbeat();
    }
    if (done.has_value()) {
      runners_.erase(*done);
      if (const JournalEntry* e = core_->entry(*done); e != nullptr && e->result) {
        Log(absl::StrCat("job ", ToString(*done), ": ", v1::RunOutcome_Name(e->result->outcome()),
                         ": ", e->result->message()));
      }
    }
  }
  dispatching_ = false;
  MaybeFinishShutdown();
}

void Agent::Apply(AgentEffect& effect) {
  if (auto* send = std::get_if<Send>(&effect)) {
    if (stream_ != nullptr) stream_->Send(std::move(send->message));
    return;
  }
  if (auto* start = std::get_if<StartJob>(&effect)) {
    const JobKey key{start->assignment.job_id(), start->assignment.attempt()};
    Log(absl::StrCat("job ", ToString(key), ": assigned to board ", start->board.id));
    auto executor = executors_.find(start->board.id);
    if (executor == executors_.end()) {
      v1::RunResult result;
      result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
      result.set_message(absl::StrCat("no driver for board '", start->board.id, "'"));
      boost::asio::post(io_, [this, key, result] { Dispatch(JobDone{key, result}); });
      return;
    }
    JobEnvironment env;
    env.io = &io_;
    env.transfers = &transfers_;
    env.cache = &cache_;
    env.blobs = blobs_.get();
    env.executor = executor->second.get();
    env.work_root = (std::filesystem::path(options_.state_dir) / "work").string();
    env.inline_logs = core_->inline_logs();
    env.stage_lines = core_->stage_lines();
    auto runner =
        std::make_shared<JobRunner>(std::move(env), start->assignment, start->board,
                                    [this](AgentEvent event) { Dispatch(std::move(event)); });
    runners_[key] = runner;
    runner->Start();
    return;
  }
  if (auto* cancel = std::get_if<CancelJob>(&effect)) {
    if (auto it = runners_.find(cancel->key); it != runners_.end()) it->second->Cancel();
  }
}

void Agent::Connect() {
  if (stopping_) return;
  stream_.reset();
  const uint64_t session = ++session_;
  ++connects_;
  stream_ = std::make_unique<AgentStream>(
      stub_, options_.token,
      [this, session](v1::ServerMessage message) {
        boost::asio::post(io_, [this, session, message = std::move(message)]() mutable {
          if (session == session_) Dispatch(FromServer{std::move(message)});
        });
      },
      [this, session](absl::Status status) {
        boost::asio::post(io_, [this, session, status] { OnStreamClosed(session, status); });
      });
  Dispatch(StreamUp{});
}

void Agent::OnStreamClosed(uint64_t session, absl::Status status) {
  if (session != session_) return;
  heartbeat_timer_.cancel();
  Dispatch(StreamDown{});
  stream_.reset();
  if (stopping_) {
    if (!stopped_) FinishShutdown();
    return;
  }
  Log(absl::StrCat("stream to the server closed (", status.ToString(), "); reconnecting"));
  ScheduleReconnect();
}

void Agent::ScheduleReconnect() {
  const std::chrono::milliseconds delay = backoff_.Next();
  reconnect_timer_.expires_after(delay);
  reconnect_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Connect();
  });
}

void Agent::ScheduleHeartbeat() {
  heartbeat_timer_.expires_after(std::chrono::milliseconds(core_->heartbeat_interval_ms()));
  heartbeat_timer_.async_wait([this, session = session_](const boost::system::error_code& ec) {
    if (ec || session != session_ || !core_->welcomed()) return;
    Dispatch(HeartbeatDue{NowUnixMs()});
    ScheduleHeartbeat();
  });
}

void Agent::BeginShutdown() {
  if (stopping_) return;
  stopping_ = true;
  reconnect_timer_.cancel();
  shutdown_timer_.expires_after(options_.shutdown_grace);
  shutdown_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    Log(absl::StrCat("shutdown: ", core_->running_jobs(), " runs and ", core_->unacked_results(),
                     " unacknowledged results left; they stay in the journal"));
    FinishShutdown();
  });
  Dispatch(ShutdownRequested{});
}

void Agent::MaybeFinishShutdown() {
  if (!stopping_ || stopped_) return;
  if (core_->running_jobs() > 0) return;
  // Wait for the server to acknowledge the results while it is there to do so.
  if (core_->welcomed() && core_->unacked_results() > 0) return;
  FinishShutdown();
}

void Agent::FinishShutdown() {
  if (stopped_) return;
  stopped_ = true;
  shutdown_timer_.cancel();
  heartbeat_timer_.cancel();
  reconnect_timer_.cancel();
  boost::system::error_code ignored;
  signals_.cancel(ignored);
  for (auto& [key, runner] : runners_) runner->Cancel();
  if (stream_ != nullptr) stream_->FinishWrites();
  shutdown_timer_.expires_after(kCloseDelay);
  shutdown_timer_.async_wait([this](const boost::system::error_code&) {
    ++session_;  // the closing stream's last events are not ours any more
    stream_.reset();
    runners_.clear();
    Log("stopped");
    work_.reset();
    io_.stop();
  });
}

}  // namespace boardlab::agent
