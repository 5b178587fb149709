#pragma once

// The agent's board counters, in the Prometheus text format, written to a file after each
// change (node_exporter's textfile collector reads it: docs/boards.md, "Metrics"). The agent has
// no HTTP endpoint of its own; lab hosts take no inbound connections.
//
//   BoardMetrics metrics("/var/lib/boardlab-agent/metrics.prom");
//   metrics.AddRetransmissions("evk-0", 3);
//   metrics.CountStep("evk-0", RecoveryStep::kReset);
//
// Not thread-safe: the agent calls it from its io_context thread only.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace boardlab::agent {

/// The rungs of a serial board's recovery ladder (docs/boards.md, "Recovery").
enum class RecoveryStep { kResync, kReset, kPowerCycle };

const char* RecoveryStepName(RecoveryStep step);

class BoardMetrics {
 public:
  /// `path` is rewritten (through a temporary file and a rename) after every change; empty:
  /// counted, never written.
  explicit BoardMetrics(std::string path);

  void AddRetransmissions(const std::string& board, uint64_t count);
  void CountStep(const std::string& board, RecoveryStep step);
  void CountFlash(const std::string& board, bool ok);
  void SetQuarantined(const std::string& board, bool quarantined);
  /// A quarantine from before the agent's restart: the gauge is 1, the counter does not move.
  void RestoreQuarantined(const std::string& board);
  /// 1 while the agent recovers the board in the background after a board error.
  void SetRecovering(const std::string& board, bool recovering);
  /// A background recovery ended: the board came back, or it was quarantined.
  void CountRecovery(const std::string& board, bool recovered);

  /// The text exposition of every counter.
  std::string Text() const;
  /// The last write error, or OK. A change of it is reported on stderr (once per failure).
  const absl::Status& write_status() const { return write_status_; }

 private:
  void Write();
  absl::Status WriteFile() const;

  std::string path_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& retransmissions_;
  prometheus::Family<prometheus::Counter>& recovery_steps_;
  prometheus::Family<prometheus::Counter>& flashes_;
  prometheus::Family<prometheus::Counter>& quarantines_;
  prometheus::Family<prometheus::Gauge>& quarantined_;
  prometheus::Family<prometheus::Gauge>& recovering_;
  prometheus::Family<prometheus::Counter>& recoveries_;
  absl::Status write_status_;
};

}  // namespace boardlab::agent
