#include "agent/board_metrics.h"

#include <prometheus/text_serializer.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"

namespace boardlab::agent {

const char* RecoveryStepName(RecoveryStep step) {
  switch (step) {
    case RecoveryStep::kResync:
      return "resync";
    case RecoveryStep::kReset:
      return "reset";
    case RecoveryStep::kPowerCycle:
      return "power_cycle";
  }
  return "unknown";
}

BoardMetrics::BoardMetrics(std::string path)
    : path_(std::move(path)),
      registry_(std::make_shared<prometheus::Registry>()),
      retransmissions_(prometheus::BuildCounter()
                           .Name("boardlab_agent_link_retransmissions_total")
                           .Help("Board link frames the agent sent again (lost or damaged)")
                           .Register(*registry_)),
      recovery_steps_(prometheus::BuildCounter()
                          .Name("boardlab_agent_board_recovery_steps_total")
                          .Help("Recovery ladder steps taken on a board that did not answer: "
                                "resync (connect again), reset, power_cycle")
                          .Register(*registry_)),
      flashes_(prometheus::BuildCounter()
                   .Name("boardlab_agent_board_flashes_total")
                   .Help("Firmware flashes of a board, by result (ok, failed)")
                   .Register(*registry_)),
      quarantines_(prometheus::BuildCounter()
                       .Name("boardlab_agent_board_quarantines_total")
                       .Help("Times the agent quarantined a board (its ladder ran out)")
                       .Register(*registry_)),
      quarantined_(prometheus::BuildGauge()
                       .Name("boardlab_agent_board_quarantined")
                       .Help("1 while the agent holds a board in quarantine")
                       .Register(*registry_)),
      recovering_(prometheus::BuildGauge()
                      .Name("boardlab_agent_board_recovering")
                      .Help("1 while the agent recovers a board after a board error (no jobs)")
                      .Register(*registry_)),
      recoveries_(prometheus::BuildCounter()
                      .Name("boardlab_agent_board_recoveries_total")
                      .Help("Background recoveries after a board error, by result (recovered, "
                            "quarantined)")
                      .Register(*registry_)) {}

void BoardMetrics::AddRetransmissions(const std::string& board, uint64_t count) {
  retransmissions_.Add({{"board", board}}).Increment(static_cast<double>(count));
  Write();
}

void BoardMetrics::CountStep(const std::string& board, RecoveryStep step) {
  recovery_steps_.Add({{"board", board}, {"step", RecoveryStepName(step)}}).Increment();
  Write();
}

void BoardMetrics::CountFlash(const std::string& board, bool ok) {
  flashes_.Add({{"board", board}, {"result", ok ? "ok" : "failed"}}).Increment();
  Write();
}

void BoardMetrics::SetQuarantined(const std::string& board, bool quarantined) {
  prometheus::Gauge& gauge = quarantined_.Add({{"board", board}});
  if (quarantined && gauge.Value() == 0) quarantines_.Add({{"board", board}}).Increment();
  gauge.Set(quarantined ? 1 : 0);
  Write();
}

void BoardMetrics::RestoreQuarantined(const std::string& board) {
  quarantined_.Add({{"board", board}}).Set(1);
  Write();
}

void BoardMetrics::SetRecovering(const std::string& board, bool recovering) {
  recovering_.Add({{"board", board}}).Set(recovering ? 1 : 0);
  Write();
}

void BoardMetrics::CountRecovery(const std::string& board, bool recovered) {
  recoveries_.Add({{"board", board}, {"result", recovered ? "recovered" : "quarantined"}})
      .Increment();
  Write();
}

std::string BoardMetrics::Text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void BoardMetrics::Write() {
  if (path_.empty()) return;
  const absl::Status status = WriteFile();
  // Every change rewrites the file: say so once when it starts failing and once when it works
  // again, not at every counter.
  if (write_status_.ok() && !status.ok()) {
    std::cerr << "boardlab-agent: board metrics: " << status.message()
              << "; they are counted but not written until it works again" << std::endl;
  } else if (!write_status_.ok() && status.ok()) {
    std::cerr << "boardlab-agent: board metrics: writing '" << path_ << "' works again"
              << std::endl;
  }
  write_status_ = status;
}

absl::Status BoardMetrics::WriteFile() const {
  // A reader (the textfile collector) must never see half a file: write aside, then rename.
  const std::string temporary = path_ + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << Text();
    if (!out) return absl::InternalError(absl::StrCat("writing '", temporary, "' failed"));
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("renaming '", temporary, "' failed"));
  }
  return absl::OkStatus();
}

}  // namespace boardlab::agent
