#pragma once

#include <memory>

#include "boardlab/v1/agent_service.pb.h"

namespace boardlab::server {

/// The server's end of one agent's stream, as the Lab sees it. Send() queues and never blocks
/// (the Lab calls it under its lock); Close() ends the stream, e.g. when a reconnecting agent
/// replaces this session.
class AgentSession {
 public:
  virtual ~AgentSession() = default;
  virtual void Send(const v1::ServerMessage& message) = 0;
  virtual void Close() = 0;
};

using AgentSessionPtr = std::shared_ptr<AgentSession>;

}  // namespace boardlab::server
