#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/connection.h"
#include "cli/exit_codes.h"
#include "cli/submit.h"
#include "cli/watch.h"
#include "runtime/cli/budget_checks.h"

namespace boardlab::cli {
namespace {

// The command the parser chose, bound to its parsed arguments; run once connected.
using Command = std::function<int(const Connection&)>;

void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("--server", global.server,
                 "server address HOST:PORT; replicas: IP:PORT,IP:PORT or a DNS name with several "
                 "addresses")
      ->envname("BOARDLAB_SERVER")
      ->capture_default_str();
  app.add_option("--token", global.token, "bearer token of your tenant")->envname("BOARDLAB_TOKEN");
  app.add_option("--tls-ca", global.tls_ca, "CA bundle: use TLS and verify the server with it")
      ->check(CLI::ExistingFile);
  // Labs that want mTLS for everyone give clients certificates too (docs/security.md).
  CLI::Option* cert =
      app.add_option("--tls-cert", global.tls_cert, "client certificate (PEM) to present over TLS")
          ->check(CLI::ExistingFile);
  CLI::Option* key = app.add_option("--tls-key", global.tls_key, "private key of --tls-cert")
                         ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
  // A probe inside the server's pod dials 127.0.0.1, which the certificate does not name.
  app.add_option("--tls-server-name", global.tls_server_name,
                 "name to verify in the server's certificate instead of the --server host");
}

void AddReportOptions(CLI::App& command, ReportOptions& report) {
  command.add_option("--out", report.out_dir,
                     "write the job's files (artifact.pte, report.json, outputs, etdump, "
                     "profile.json, log.txt, job.json) into DIR");
  command.add_flag("--json", report.json, "print the final job as JSON instead of tables");
  command.add_option("--junit", report.junit,
                     "write a JUnit XML report (one testcase per check) to FILE");
}

void AddSubmitSelection(CLI::App& submit, SubmitArgs& args) {
  submit.add_option("--target", args.target, "target spec")->capture_default_str();
  submit.add_option("--board-type", args.board_type, "board type, e.g. imxrt700-sim");
  submit.add_option("--board", args.board_id, "run on this board only");
  submit.add_option("--tag", args.tags, "KEY=VALUE the board must carry (repeatable)")
      ->allow_extra_args(false);
  submit.add_option("--priority", args.priority, "higher runs first");
  submit
      .add_option("--queue-timeout", args.queue_timeout_seconds,
                  "seconds to wait for a board (0 = server default)")
      ->check(CLI::NonNegativeNumber);
  submit.add_option("--label", args.labels, "KEY=VALUE label of the job (repeatable)")
      ->allow_extra_args(false);
  submit.add_option("--request-id", args.request_id,
                    "idempotency key: submitting it again returns the first job");
}

void AddSubmitRun(CLI::App& submit, SubmitArgs& args) {
  submit
      .add_option("--input", args.inputs,
                  "input i in order: FILE with raw bytes or random:SEED (repeatable)")
      ->allow_extra_args(false);
  CLI::Option* expected = submit.add_option(
      "--expected", args.expected,
      "expected raw bytes of each output, in order; with --inputs: the directory of the cases' "
      "expected outputs");
  CLI::Option* reference = submit.add_flag("--expect-reference", args.expect_reference,
                                           "compare with the host reference run");
  expected->excludes(reference);
  // Many cases in one job (docs/client.md, "Many cases in one job").
  CLI::Option* inputs = submit.add_option(
      "--inputs", args.inputs_dir,
      "many cases on one board load: a directory of NAME.bin inputs (NAME.input<i>.bin for "
      "several), paired by name with --expected DIR");
  CLI::Option* cases = submit.add_option(
      "--cases", args.cases_manifest,
      "many cases on one board load, listed in a JSON manifest (name, inputs, expected)");
  inputs->excludes(cases);
  for (CLI::Option* many : {inputs, cases}) many->excludes("--input");
  cases->excludes(expected);
  submit.add_option("--atol", args.atol, "absolute tolerance per element")
      ->check(CLI::NonNegativeNumber);
  submit.add_option("--iterations", args.iterations, "timed iterations after one warm-up")
      ->check(CLI::PositiveNumber);
  submit.add_flag("--cpu-only", args.cpu_only, "compile without NPU partitions");
  submit
      .add_option("--timeout", args.timeout_seconds,
                  "seconds per run on a board (0 = server default)")
      ->check(CLI::NonNegativeNumber);
  run::AddBudgetOptions(submit, args.budgets);
}

void AddGateOptions(CLI::App& command, DiffGates& gates) {
  command
      .add_option_function<double>(
          "--fail-if-slower",
          [&gates](const double& percent) { gates.fail_if_slower_percent = percent; },
          "fail when B's latency is more than PCT percent above A's")
      ->check(CLI::Validator([](std::string& text) { return run::NotANonNegativeNumber(text); },
                             "PCT"));
  command.add_flag("--fail-if-outputs-differ", gates.fail_if_outputs_differ,
                   "fail when an output of B differs from A's");
  command.add_flag("--fail-if-cpu-ops-added", gates.fail_if_cpu_ops_added,
                   "fail when an operator moved from the NPU to the CPU or B has more CPU ops");
}

void AddDiffCommand(CLI::App& app, Command& command) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* diff =
      app.add_subcommand("diff", "compare two jobs (ids or --out directories); gates for CI");
  diff->add_option("a", args->a, "the baseline: job id or --out directory")->required();
  diff->add_option("b", args->b, "the candidate: job id or --out directory")->required();
  AddGateOptions(*diff, args->gates);
  diff->add_flag("--json", args->json, "print the diff as JSON");
  diff->add_option("--junit", args->junit, "write a JUnit XML report (one testcase per gate)");
  diff->callback([args, &command] {
    command = [args](const Connection& connection) { return RunDiff(connection, *args); };
  });
}

void AddSubmitCommand(CLI::App& app, Command& command) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* submit = app.add_subcommand("submit", "compile MODEL and test it on a board");
  submit->add_option("model", args->model, "int8 .tflite model")->required();
  AddSubmitSelection(*submit, *args);
  AddSubmitRun(*submit, *args);
  CLI::Option* wait =
      submit->add_flag("--wait", args->wait, "follow the job and exit with its verdict");
  AddReportOptions(*submit, args->report);
  submit->get_option("--out")->needs(wait);
  submit->get_option("--junit")->needs(wait);
  CLI::Option* baseline = submit->add_option(
      "--baseline", args->report.baseline,
      "when the job ends, diff it against this job id or --out directory (boardlab diff)");
  baseline->needs(wait);
  AddGateOptions(*submit, args->report.gates);
  for (const char* gate :
       {"--fail-if-slower", "--fail-if-outputs-differ", "--fail-if-cpu-ops-added"}) {
    submit->get_option(gate)->needs(baseline);
  }
  submit->callback([args, &command] {
    command = [args](const Connection& connection) { return RunSubmit(connection, *args); };
  });
}

void AddWatchCommand(CLI::App& app, Command& command) {
  auto job_id = std::make_shared<std::string>();
  auto report = std::make_shared<ReportOptions>();
  CLI::App* watch = app.add_subcommand("watch", "follow a job and exit with its verdict");
  watch->add_option("job", *job_id, "job id")->required();
  AddReportOptions(*watch, *report);
  watch->callback([job_id, report, &command] {
    command = [job_id, report](const Connection& connection) {
      return WatchAndReport(connection, *job_id, *report, WatchOptions{});
    };
  });
}

void AddStatusAndCancelCommands(CLI::App& app, Command& command) {
  auto job_id = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* status = app.add_subcommand("status", "show a job (exit code = verdict when done)");
  status->add_option("job", *job_id, "job id")->required();
  status->add_flag("--json", *json, "print the job as JSON");
  status->callback([job_id, json, &command] {
    command = [job_id, json](const Connection& c) { return RunStatus(c, *job_id, *json); };
  });
  CLI::App* cancel = app.add_subcommand("cancel", "cancel a job");
  cancel->add_option("job", *job_id, "job id")->required();
  cancel->callback([job_id, &command] {
    command = [job_id](const Connection& c) { return RunCancel(c, *job_id); };
  });
}

void AddJobsCommand(CLI::App& app, Command& command) {
  auto args = std::make_shared<JobsArgs>();
  CLI::App* jobs = app.add_subcommand("jobs", "list your jobs, newest first");
  jobs->add_option("--state", args->states, "only jobs in this state (repeatable)")
      ->allow_extra_args(false);
  jobs->add_option("--board-type", args->board_type, "only jobs for this board type");
  jobs->add_option("--label", args->labels, "only jobs with this KEY=VALUE label (repeatable)")
      ->allow_extra_args(false);
  jobs->add_option("--limit", args->limit, "jobs to show")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  jobs->add_flag("--json", args->json, "print the jobs as JSON");
  jobs->callback([args, &command] {
    command = [args](const Connection& connection) { return RunJobs(connection, *args); };
  });
}

void AddBoardsCommand(CLI::App& app, Command& command) {
  auto type = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* boards = app.add_subcommand("boards", "list the boards");
  boards->add_option("--type", *type, "only boards of this type");
  boards->add_flag("--json", *json, "print the boards as JSON");
  boards->callback([type, json, &command] {
    command = [type, json](const Connection& c) { return RunBoards(c, *type, *json); };
  });
}

struct BoardArgs {
  std::string board_id;
  std::string lease_id;
  int ttl_seconds = 0;
  std::string mode;  // maintenance: on or off
  std::string reason;
  bool json = false;
};

// `board reserve|release|maintenance`; `args` is shared by the three (only one runs).
void AddBoardCommand(CLI::App& app, Command& command) {
  auto args = std::make_shared<BoardArgs>();
  CLI::App* board = app.add_subcommand("board", "reserve, release or maintain one board");
  board->require_subcommand(1);
  CLI::App* reserve = board->add_subcommand("reserve", "lease a board to yourself");
  CLI::App* release = board->add_subcommand("release", "give a reserved board back");
  CLI::App* maintenance = board->add_subcommand("maintenance", "take a board out of service");
  for (CLI::App* sub : {reserve, release, maintenance}) {
    sub->add_option("board", args->board_id, "board id")->required();
    sub->add_flag("--json", args->json, "print the result as JSON");
  }
  reserve->add_option("--ttl", args->ttl_seconds, "lease seconds (0 = 600)")
      ->check(CLI::NonNegativeNumber);
  reserve->add_option("--lease", args->lease_id, "renew this lease");
  release->add_option("--lease", args->lease_id, "the lease to end")->required();
  maintenance->add_option("mode", args->mode, "on or off")
      ->required()
      ->check(CLI::IsMember({"on", "off"}));
  maintenance->add_option("--reason", args->reason, "why, shown in `boardlab boards`");
  reserve->callback([args, &command] {
    command = [args](const Connection& c) {
      return RunReserve(c, args->board_id, args->ttl_seconds, args->lease_id, args->json);
    };
  });
  release->callback([args, &command] {
    command = [args](const Connection& c) {
      return RunRelease(c, args->board_id, args->lease_id, args->json);
    };
  });
  maintenance->callback([args, &command] {
    command = [args](const Connection& c) {
      return RunMaintenance(c, args->board_id, args->mode == "on", args->reason, args->json);
    };
  });
}

void AddArtifactCommand(CLI::App& app, Command& command) {
  auto digest = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  CLI::App* artifact = app.add_subcommand("artifact", "fetch blobs from the artifact store");
  artifact->require_subcommand(1);
  CLI::App* get = artifact->add_subcommand("get", "download one blob by its digest");
  get->add_option("digest", *digest, "SHA-256 hex, optionally :SIZE")->required();
  get->add_option("-o,--output", *output, "write to FILE instead of stdout");
  get->callback([digest, output, &command] {
    command = [digest, output](const Connection& c) { return RunArtifactGet(c, *digest, *output); };
  });
}

void AddHealthCommand(CLI::App& app, Command& command) {
  auto service = std::make_shared<std::string>();
  CLI::App* health =
      app.add_subcommand("health", "ask the server's gRPC health service (exit 0 when SERVING)");
  health->add_option("--service", *service, "a service name; default: the server as a whole");
  health->callback([service, &command] {
    command = [service](const Connection& c) { return RunHealth(c, *service); };
  });
}

// The name path of the deepest subcommand the user gave, for "see boardlab board reserve --help".
std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* current = &app;
  while (true) {
    std::vector<const CLI::App*> chosen =
        current->get_subcommands([](const CLI::App* sub) { return sub->parsed(); });
    if (chosen.empty()) return path;
    current = chosen.front();
    path += " " + current->get_name();
  }
}

int ParseErrorExit(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
  const std::vector<std::string> unused = app.remaining();
  if (CommandPath(app) == app.get_name() && !unused.empty()) {
    return Fail(kExitUsage, "unknown command '" + unused.front() +
                                "'; the commands are submit, watch, status, cancel, jobs, boards, "
                                "board, artifact, diff and health (see `boardlab --help`)");
  }
  return Fail(kExitUsage, std::string(error.what()) + "; see `" + CommandPath(app) + " --help`");
}

}  // namespace

int RunBoardlab(int argc, const char* const* argv) {
  CLI::App app("boardlab: compile int8 TFLite models and test them on i.MX RT700 boards",
               "boardlab");
  app.set_version_flag("--version", "boardlab " BOARDLAB_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options may also follow the command
  GlobalOptions global;
  Command command;
  AddGlobalOptions(app, global);
  AddSubmitCommand(app, command);
  AddWatchCommand(app, command);
  AddDiffCommand(app, command);
  AddStatusAndCancelCommands(app, command);
  AddJobsCommand(app, command);
  AddBoardsCommand(app, command);
  AddBoardCommand(app, command);
  AddArtifactCommand(app, command);
  AddHealthCommand(app, command);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {  // CLI11 reports through exceptions; they end here
    return ParseErrorExit(app, error);
  }
  absl::StatusOr<Connection> connection = Connect(global);
  if (!connection.ok()) return Fail(kExitUsage, connection.status().message());
  if (!command) return Fail(kExitUsage, "no command given; see `boardlab --help`");
  return command(*connection);
}

}  // namespace boardlab::cli
