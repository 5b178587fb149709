#pragma once

// What `boardlab` prints for people: the verdict of a job, the per-op profile, the boards and
// jobs tables. Each has a machine-readable twin: --json prints the proto message as JSON
// (MessageJson) instead.

#include <cstdint>
#include <ostream>
#include <string>

#include "boardlab/v1/board_service.pb.h"
#include "boardlab/v1/job_service.pb.h"
#include "boardlab/v1/types.pb.h"
#include "cli/profile_view.h"
#include "google/protobuf/message.h"
#include "proto/support/job_files.h"

namespace boardlab::cli {

/// The message in proto3 JSON (field names as in the .proto, defaults included), one line.
using api::MessageJson;

/// "latency 612.5 us <= 700 us: pass", "sram not measured (why) <= 1000 bytes: FAIL".
std::string BudgetCheckText(const v1::BudgetCheck& check);

/// "compiling", "queued", ..., "done".
std::string StateName(v1::JobState state);

/// "idle", "busy", "reserved", "offline", "maintenance", "quarantined".
std::string BoardStateName(v1::BoardState state);

/// Milliseconds as "850ms", "12.3s" or "4m05s".
std::string FormatDuration(int64_t ms);

/// The verdict block of a finished job:
///   PASS  job 42 on board sim-0 (attempt 1) in 3.1s: outputs match
///     output 0: pass (max abs diff 0)
///     budget latency 612.5 us <= 700 us: pass
///   inference: 1234.5 us, 567890 cycles (clock: simulated RT700)
void PrintVerdict(const v1::Job& job, std::ostream& out);

/// The per-op table under a line naming the clock: #, op, ran on (cpu, npu,
/// npu-emulated-cortex-m33), the count (cycles, QEMU instructions or ticks, as the clock counts),
/// us, % of the ops' total; NPU kernels indented under their delegate call; then the
/// Method::execute total. `cases` > 0: the profile of a many-case job whose cases ran
/// `iterations` times each; the header says how many of those runs the profile averages (a sim
/// board's all, a QEMU board's ETDump at most 16, a serial board's the first case's).
void PrintProfileTable(const ProfileView& profile, std::ostream& out, int cases = 0,
                       int iterations = 1);

/// One job in a few lines (`boardlab status`; the profile table follows for a finished job).
void PrintJobSummary(const v1::Job& job, std::ostream& out);

/// One line per job: id, state or verdict, name, board type, board, submitted, duration.
void PrintJobsTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, std::ostream& out);

/// One line per board: id, type, state, what holds it, tags, jobs run.
void PrintBoardsTable(const google::protobuf::RepeatedPtrField<v1::Board>& boards,
                      std::ostream& out);
/// One line per board type: its boards by state and the jobs queued for it ("what can run now").
void PrintBoardTypeSummary(const v1::ListBoardsResponse& response, std::ostream& out);

}  // namespace boardlab::cli
