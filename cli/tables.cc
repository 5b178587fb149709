#include "cli/tables.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/exit_codes.h"
#include "proto/support/case_results.h"
#include "runtime/cli/budget_checks.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::cli {
namespace {

// Enum value names without their prefix, lower case: JOB_STATE_QUEUED -> "queued".
std::string ShortName(const std::string& full_name, std::string_view prefix) {
  std::string name = full_name.rfind(prefix, 0) == 0 ? full_name.substr(prefix.size()) : full_name;
  return absl::AsciiStrToLower(name);
}

// `text` cut to `width` characters, the cut marked with "...", so that columns stay aligned.
std::string Fit(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

std::string CyclesText(const std::optional<uint64_t>& cycles) {
  return cycles ? std::to_string(*cycles) : "-";
}

std::string TagsText(const google::protobuf::RepeatedPtrField<v1::Tag>& tags) {
  return absl::StrJoin(tags, ",", [](std::string* out, const v1::Tag& tag) {
    absl::StrAppend(out, tag.key(), "=", tag.value());
  });
}

std::string TimeText(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(unix_ms),
                          absl::LocalTimeZone());
}

// How long the job ran, or has been running.
std::string JobDuration(const v1::Job& job) {
  if (job.submit_time_ms() <= 0 || job.end_time_ms() <= 0) return "-";
  return FormatDuration(job.end_time_ms() - job.submit_time_ms());
}

std::string StateOrVerdict(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_DONE ? VerdictName(job.result()) : StateName(job.state());
}

std::string MicrosecondsText(const std::optional<double>& us) {
  return us ? absl::StrFormat("%.2f", *us) : "-";
}

// The count column, as the profile's clock says: cycles, QEMU instructions or raw ticks.
std::string CountText(const std::string& unit, const std::optional<uint64_t>& cycles,
                      const std::optional<uint64_t>& instructions, double ticks) {
  if (unit == "instructions") return CyclesText(instructions);
  if (unit == "ticks") return std::to_string(static_cast<uint64_t>(ticks + 0.5));
  return CyclesText(cycles);
}

// "48 passing cases", "45 passing and 3 no-output cases", "3 no-output cases".
std::string UnlistedCasesText(int passing, int no_output) {
  std::vector<std::string> kinds;
  if (passing > 0) kinds.push_back(absl::StrCat(passing, " passing"));
  if (no_output > 0) kinds.push_back(absl::StrCat(no_output, " no-output"));
  return absl::StrCat(absl::StrJoin(kinds, " and "), " cases");
}

// A many-case job: each case (beyond kListedCases only the failing ones), then the aggregate.
// A case without output (its last inference ended early) did not fail: it is left out too.
void PrintCases(const v1::Job& job, std::ostream& out) {
  constexpr int kListedCases = 20;
  if (job.cases_size() == 0) return;
  const bool all = job.cases_size() <= kListedCases;
  int unlisted_passing = 0, unlisted_no_output = 0;
  for (const v1::CaseResult& c : job.cases()) {
    const run::CaseOutcome outcome = api::CaseOutcomeOf(c);
    if (!all && (outcome.no_output || c.passed())) {
      ++(outcome.no_output ? unlisted_no_output : unlisted_passing);
      continue;
    }
    out << "  " << run::DescribeCase(outcome) << "\n";
  }
  if (unlisted_passing + unlisted_no_output > 0) {
    out << absl::StrFormat("  (%s not listed; job.json lists every case)\n",
                           UnlistedCasesText(unlisted_passing, unlisted_no_output));
  }
  out << "  " << run::DescribeSummary(api::SummaryOf(job.case_summary())) << "\n";
}

// Whether the table needs a calls column: some instruction ran other than once per iteration
// (a loop body's, an IF branch's).
bool ShowsCalls(const ProfileView& profile) {
  return std::any_of(profile.ops.begin(), profile.ops.end(),
                     [](const ProfileOp& op) { return op.calls && *op.calls != 1; });
}

void PrintProfileRow(const ProfileOp& op, const std::string& count_unit, const std::string& index,
                     const std::string& label, bool calls, std::ostream& out) {
  out << absl::StrFormat("  %-4s %-40s %-23s %14s %12s %6.1f%%", index, label, op.ran_on,
                         CountText(count_unit, op.cycles, op.instructions, op.ticks),
                         MicrosecondsText(op.us), op.percent);
  if (calls && op.calls) out << absl::StrFormat(" %7.4g", *op.calls);
  out << "\n";
}

// What the averages leave out (runtime/cli/profile_table.h EndedEarlyNote): "" when no run
// ended early.
std::string EndedEarlyNote(const ProfileView& profile) {
  if (profile.ended_early_runs <= 0) return "";
  if (profile.ended_early_runs >= profile.iterations) {
    return "; every one ended early by a streaming op: part of the chain each";
  }
  return absl::StrFormat("; %d of %d ended early by a streaming op, left out",
                         profile.ended_early_runs, profile.iterations);
}

}  // namespace

std::string BudgetCheckText(const v1::BudgetCheck& check) {
  run::BudgetCheck view;
  view.name = check.name();
  view.unit = check.unit();
  view.comparison = check.comparison();
  view.limit = check.limit();
  if (check.has_measured()) view.measured = check.measured();
  view.passed = check.passed();
  view.detail = check.detail();
  view.clock = check.clock();
  return run::DescribeCheck(view);
}

std::string StateName(v1::JobState state) {
  return ShortName(v1::JobState_Name(state), "JOB_STATE_");
}

std::string BoardStateName(v1::BoardState state) {
  return ShortName(v1::BoardState_Name(state), "BOARD_STATE_");
}

std::string FormatDuration(int64_t ms) {
  if (ms < 1000) return absl::StrFormat("%dms", ms);
  if (ms < 60'000) return absl::StrFormat("%.1fs", ms / 1000.0);
  return absl::StrFormat("%dm%02ds", ms / 60'000, (ms / 1000) % 60);
}

void PrintVerdict(const v1::Job& job, std::ostream& out) {
  out << absl::StrFormat("%-6s job %s", VerdictName(job.result()), job.id());
  if (!job.board_id().empty()) {
    out << absl::StrFormat(" on board %s (attempt %d)", job.board_id(), job.attempt());
  }
  if (job.end_time_ms() > 0 && job.submit_time_ms() > 0) out << " in " << JobDuration(job);
  if (!job.message().empty()) out << ": " << job.message();
  out << "\n";
  for (const v1::OutputCheck& check : job.checks()) {
    out << absl::StrFormat("  output %d: %s (max abs diff %d)\n", check.index(),
                           check.passed() ? "pass" : "FAIL", check.max_abs_diff());
  }
  PrintCases(job, out);
  for (const v1::BudgetCheck& check : job.budget_checks()) {
    out << "  budget " << BudgetCheckText(check) << "\n";
  }
  if (job.inference_us() > 0) {
    out << absl::StrFormat("inference: %.1f us", job.inference_us());
    if (job.cases_size() > 0) {
      // The slowest case's mean: what the latency budget judges (cases with output only).
      out << " (" << api::SlowestCaseText(job) << ")";
    } else if (job.inference_cycles() > 0) {
      out << absl::StrFormat(", %d cycles", job.inference_cycles());
    }
    out << " (" << run::InferenceClockText(job.inference_clock()) << ")";
    if (job.spec().run().iterations() > 1) {
      out << " (" << api::IterationsText(job) << ")";
    }
    out << "\n";
  }
}

void PrintProfileTable(const ProfileView& profile, std::ostream& out, int cases, int iterations) {
  const int64_t runs = int64_t{cases} * iterations;
  const std::string note = EndedEarlyNote(profile);
  if (cases > 0 && profile.iterations == runs) {
    out << absl::StrFormat("profile (average of %d runs: %d cases x %d iteration%s%s):\n", runs,
                           cases, iterations, iterations == 1 ? "" : "s", note);
  } else if (cases > 0) {
    out << absl::StrFormat(
        "profile (average of %d of the %d runs of %d cases, those the board's "
        "ETDump holds%s):\n",
        profile.iterations, runs, cases, note);
  } else {
    out << absl::StrFormat("profile (average of %d iteration%s%s):\n", profile.iterations,
                           profile.iterations == 1 ? "" : "s", note);
  }
  const bool calls = ShowsCalls(profile);
  out << "  clock: " << profile.clock_label << "\n";
  out << absl::StrFormat("  %-4s %-40s %-23s %14s %12s %7s%s\n", "#", "op", "ran on",
                         profile.count_unit, "us", "%", calls ? "   calls" : "");
  for (const ProfileOp& op : profile.ops) {
    PrintProfileRow(op, profile.count_unit,
                    op.instruction >= 0 ? std::to_string(op.instruction) : "", op.op, calls, out);
    for (const ProfileOp& kernel : op.npu_kernels) {
      PrintProfileRow(kernel, profile.count_unit, "", "  " + kernel.op, calls, out);
    }
  }
  out << absl::StrFormat("  %-4s %-40s %-23s %14s %12s\n", "", "total (Method::execute)", "",
                         CountText(profile.count_unit, profile.total_cycles,
                                   profile.total_instructions, profile.total_ticks),
                         MicrosecondsText(profile.total_us));
}

void PrintJobSummary(const v1::Job& job, std::ostream& out) {
  out << absl::StrFormat("job %s  %s", job.id(), StateOrVerdict(job));
  if (!job.message().empty()) out << ": " << job.message();
  out << "\n";
  out << absl::StrFormat("  name        %s\n", job.spec().name().empty() ? "-" : job.spec().name());
  out << absl::StrFormat(
      "  board       %s (type %s, attempt %d)\n", job.board_id().empty() ? "-" : job.board_id(),
      job.spec().selector().board_type().empty() ? "default" : job.spec().selector().board_type(),
      job.attempt());
  if (job.queue_position() > 0) {
    out << absl::StrFormat("  queue       %d of %d (next: 1; fair share may reorder)\n",
                           job.queue_position(), job.queue_length());
  }
  out << absl::StrFormat("  submitted   %s\n", TimeText(job.submit_time_ms()));
  out << absl::StrFormat("  started     %s\n", TimeText(job.start_time_ms()));
  out << absl::StrFormat("  ended       %s\n", TimeText(job.end_time_ms()));
  if (job.state() == v1::JOB_STATE_DONE) {
    out << absl::StrFormat("  compile     %s\n",
                           job.compile_cache_hit() ? "cache hit" : "compiled");
    for (const v1::OutputCheck& check : job.checks()) {
      out << absl::StrFormat("  output %d    %s (max abs diff %d)\n", check.index(),
                             check.passed() ? "pass" : "FAIL", check.max_abs_diff());
    }
    PrintCases(job, out);
    for (const v1::BudgetCheck& check : job.budget_checks()) {
      out << "  budget      " << BudgetCheckText(check) << "\n";
    }
    if (job.inference_us() > 0) {
      out << absl::StrFormat("  inference   %.1f us (%s)\n", job.inference_us(),
                             run::InferenceClockText(job.inference_clock()));
    }
  }
}

void PrintJobsTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, std::ostream& out) {
  out << absl::StrFormat("%-24s %-14s %-28s %-16s %-12s %-19s %s\n", "JOB", "STATE", "NAME",
                         "BOARD TYPE", "BOARD", "SUBMITTED", "TOOK");
  for (const v1::Job& job : jobs) {
    const std::string& type = job.spec().selector().board_type();
    out << absl::StrFormat(
        "%-24s %-14s %-28s %-16s %-12s %-19s %s\n", job.id(),
        job.queue_position() > 0
            ? absl::StrFormat("queued %d/%d", job.queue_position(), job.queue_length())
            : StateOrVerdict(job),
        job.spec().name().empty() ? "-" : Fit(job.spec().name(), 28),
        type.empty() ? "default" : type, job.board_id().empty() ? "-" : job.board_id(),
        TimeText(job.submit_time_ms()), JobDuration(job));
  }
}

void PrintBoardsTable(const google::protobuf::RepeatedPtrField<v1::Board>& boards,
                      std::ostream& out) {
  out << absl::StrFormat("%-16s %-16s %-12s %-28s %-24s %s\n", "BOARD", "TYPE", "STATE",
                         "HELD BY / REASON", "TAGS", "JOBS RUN");
  for (const v1::Board& board : boards) {
    std::string holder = board.job_id().empty() ? "" : "job " + board.job_id();
    if (!board.reserved_by().empty()) holder = "reserved by " + board.reserved_by();
    if (!board.reason().empty()) holder = board.reason();
    const std::string tags = TagsText(board.tags());
    out << absl::StrFormat("%-16s %-16s %-12s %-28s %-24s %d\n", board.id(), board.type(),
                           BoardStateName(board.state()), holder.empty() ? "-" : holder,
                           tags.empty() ? "-" : tags, board.jobs_run());
  }
}

void PrintBoardTypeSummary(const v1::ListBoardsResponse& response, std::ostream& out) {
  std::map<std::string, std::map<std::string, int>> states_by_type;
  for (const v1::Board& board : response.boards()) {
    states_by_type[board.type()][BoardStateName(board.state())]++;
  }
  for (const auto& [type, n] : response.queued_jobs()) states_by_type.try_emplace(type);
  for (const auto& [type, states] : states_by_type) {
    int boards = 0;
    std::vector<std::string> counts;
    for (const auto& [state, n] : states) {
      boards += n;
      counts.push_back(absl::StrCat(n, " ", state));
    }
    auto queued = response.queued_jobs().find(type);
    out << absl::StrFormat(
        "%-16s %d board%s%s%s; %d job%s queued\n", type, boards, boards == 1 ? "" : "s",
        counts.empty() ? "" : ": ", absl::StrJoin(counts, ", "),
        queued == response.queued_jobs().end() ? 0 : queued->second,
        queued != response.queued_jobs().end() && queued->second == 1 ? "" : "s");
  }
}

}  // namespace boardlab::cli
