#include "cli/submit.h"

#include <filesystem>
#include <iostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/arguments.h"
#include "cli/exit_codes.h"
#include "cli/file_io.h"
#include "cli/model_io_tflite.h"
#include "cli/tables.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::cli {
namespace {

// Reads `path` into a new entry of `blobs` and returns its digest.
absl::StatusOr<v1::Digest> AddFileBlob(const std::string& path, const std::string& what,
                                       std::vector<LocalBlob>& blobs, bool case_file = false) {
  absl::StatusOr<std::string> bytes = ReadFileBytes(path, what);
  if (!bytes.ok()) return bytes.status();
  LocalBlob blob{what + " '" + path + "'", *std::move(bytes), {}, case_file};
  blob.digest = api::DigestOf(blob.bytes);
  blobs.push_back(std::move(blob));
  return blobs.back().digest;
}

// Each FILE or random:SEED of `texts` as an InputSpec of `specs`, the files as blobs.
absl::Status AddInputSpecs(const std::vector<std::string>& texts, bool case_files,
                           std::vector<LocalBlob>& blobs,
                           google::protobuf::RepeatedPtrField<v1::InputSpec>& specs) {
  for (const std::string& text : texts) {
    absl::StatusOr<InputArgument> input = ParseInputArgument(text);
    if (!input.ok()) return input.status();
    if (const RandomInput* random = std::get_if<RandomInput>(&*input)) {
      specs.Add()->set_random_seed(random->seed);
      continue;
    }
    absl::StatusOr<v1::Digest> digest =
        AddFileBlob(std::get<std::string>(*input), "input", blobs, case_files);
    if (!digest.ok()) return digest.status();
    *specs.Add()->mutable_blob() = *digest;
  }
  return absl::OkStatus();
}

// The cases of --inputs DIR [--expected DIR] or --cases FILE, checked against the model's
// tensors before anything is uploaded.
absl::StatusOr<std::vector<run::CaseFiles>> ReadCases(const SubmitArgs& args,
                                                      const std::string& model_bytes) {
  if (!args.inputs_dir.empty() && args.expected.size() > 1) {
    return absl::InvalidArgumentError(
        "with --inputs, --expected names one directory of expected outputs");
  }
  absl::StatusOr<run::ModelIo> io = ReadTfliteIo(model_bytes, args.model);
  if (!io.ok()) return io.status();
  std::vector<run::CaseFiles> cases;
  std::string error;
  const bool read =
      args.cases_manifest.empty()
          ? run::ReadCaseDirectories(args.inputs_dir, args.expected.empty() ? "" : args.expected[0],
                                     *io, &cases, &error)
          : run::ReadCaseManifest(args.cases_manifest, *io, &cases, &error);
  if (!read) return absl::InvalidArgumentError(error);
  return cases;
}

// Many cases (--inputs / --cases): each case's files become blobs of the job.
absl::Status AddCases(const SubmitArgs& args, const std::string& model_bytes,
                      PreparedSubmit& prepared) {
  absl::StatusOr<std::vector<run::CaseFiles>> cases = ReadCases(args, model_bytes);
  if (!cases.ok()) return cases.status();
  v1::RunSpec& run = *prepared.request.mutable_spec()->mutable_run();
  for (const run::CaseFiles& files : *cases) {
    v1::RunCase& c = *run.add_cases();
    c.set_name(files.name);
    if (absl::Status added =
            AddInputSpecs(files.inputs, /*case_files=*/true, prepared.blobs, *c.mutable_inputs());
        !added.ok()) {
      return added;
    }
    for (const std::string& expected : files.expected) {
      absl::StatusOr<v1::Digest> digest =
          AddFileBlob(expected, "expected output", prepared.blobs, true);
      if (!digest.ok()) return digest.status();
      *c.add_expected() = *digest;
    }
  }
  run.set_expect_reference(args.expect_reference);
  return absl::OkStatus();
}

absl::Status AddTags(const std::vector<std::string>& texts, absl::string_view option,
                     google::protobuf::RepeatedPtrField<v1::Tag>& tags) {
  for (const std::string& text : texts) {
    absl::StatusOr<v1::Tag> tag = ParseKeyValue(text, option);
    if (!tag.ok()) return tag.status();
    *tags.Add() = *std::move(tag);
  }
  return absl::OkStatus();
}

absl::Status AddInputs(const SubmitArgs& args, PreparedSubmit& prepared) {
  return AddInputSpecs(args.inputs, /*case_files=*/false, prepared.blobs,
                       *prepared.request.mutable_spec()->mutable_run()->mutable_inputs());
}

absl::Status AddExpectedOutputs(const SubmitArgs& args, PreparedSubmit& prepared) {
  v1::RunSpec& run = *prepared.request.mutable_spec()->mutable_run();
  for (const std::string& path : args.expected) {
    absl::StatusOr<v1::Digest> digest = AddFileBlob(path, "expected output", prepared.blobs);
    if (!digest.ok()) return digest.status();
    *run.add_expected() = *digest;
  }
  run.set_expect_reference(args.expect_reference);
  return absl::OkStatus();
}

void FillBudgets(const run::BudgetLimits& limits, v1::Budgets& budgets) {
  if (limits.max_latency_us) budgets.set_max_latency_us(*limits.max_latency_us);
  if (limits.max_sram_bytes) budgets.set_max_sram_bytes(*limits.max_sram_bytes);
  if (limits.max_flash_bytes) budgets.set_max_flash_bytes(*limits.max_flash_bytes);
  if (limits.min_npu_macs_percent) budgets.set_min_npu_macs_percent(*limits.min_npu_macs_percent);
}

// Everything of the spec that is not a file.
void FillOptions(const SubmitArgs& args, v1::JobSpec& spec) {
  spec.set_name(std::filesystem::path(args.model).filename().string());
  spec.mutable_compile()->set_target(args.target);
  spec.mutable_compile()->set_cpu_only(args.cpu_only);
  v1::RunSpec& run = *spec.mutable_run();
  run.set_atol(args.atol);
  run.set_iterations(args.iterations);
  run.set_timeout_seconds(args.timeout_seconds);
  spec.mutable_selector()->set_board_type(args.board_type);
  spec.mutable_selector()->set_board_id(args.board_id);
  spec.set_priority(args.priority);
  spec.set_queue_timeout_seconds(args.queue_timeout_seconds);
  // No budgets message without a limit: the server then reads no compile report for the job.
  if (!args.budgets.empty()) FillBudgets(args.budgets, *spec.mutable_budgets());
}

std::string SizeText(size_t bytes) {
  if (bytes < 10 * 1024) return absl::StrFormat("%d B", bytes);
  if (bytes < 10 * 1024 * 1024) return absl::StrFormat("%d KiB", bytes / 1024);
  return absl::StrFormat("%d MiB", bytes / (1024 * 1024));
}

// The case files in one line: a thousand cases must not print two thousand.
void ReportCaseUploads(const std::vector<LocalBlob>& blobs, const std::set<std::string>& missing,
                       std::ostream& progress) {
  std::set<std::string> all, uploads;
  size_t bytes = 0;
  for (const LocalBlob& blob : blobs) {
    if (!blob.case_file || !all.insert(blob.digest.sha256()).second) continue;
    if (missing.count(blob.digest.sha256()) == 0) continue;
    uploads.insert(blob.digest.sha256());
    bytes += blob.bytes.size();
  }
  if (all.empty()) return;
  progress << "case files: " << all.size() << " distinct, " << uploads.size() << " to upload ("
           << SizeText(bytes) << ")\n";
}

}  // namespace

absl::StatusOr<PreparedSubmit> PrepareSubmit(const SubmitArgs& args) {
  PreparedSubmit prepared;
  v1::JobSpec& spec = *prepared.request.mutable_spec();
  absl::StatusOr<v1::Digest> model = AddFileBlob(args.model, "model", prepared.blobs);
  if (!model.ok()) return model.status();
  *spec.mutable_model() = *model;
  FillOptions(args, spec);
  absl::Status status;
  if (!args.inputs_dir.empty() || !args.cases_manifest.empty()) {
    status = AddCases(args, prepared.blobs.front().bytes, prepared);
  } else {
    status = AddInputs(args, prepared);
    if (status.ok()) status = AddExpectedOutputs(args, prepared);
  }
  if (status.ok()) status = AddTags(args.tags, "--tag", *spec.mutable_selector()->mutable_tags());
  if (status.ok()) status = AddTags(args.labels, "--label", *spec.mutable_labels());
  if (!status.ok()) return status;
  prepared.request.set_request_id(args.request_id.empty() ? NewRequestId() : args.request_id);
  return prepared;
}

absl::Status UploadMissingBlobs(api::BlobClient& client, const std::vector<LocalBlob>& blobs,
                                const RetryPolicy& policy, std::ostream& progress) {
  std::vector<v1::Digest> digests;
  for (const LocalBlob& blob : blobs) digests.push_back(blob.digest);
  absl::StatusOr<std::vector<v1::Digest>> missing;
  absl::Status status = RetryUnavailable(policy, [&] {
    missing = client.FindMissing(digests);
    return missing.status();
  });
  if (!status.ok()) return status;
  std::set<std::string> to_upload;
  for (const v1::Digest& digest : *missing) to_upload.insert(digest.sha256());
  ReportCaseUploads(blobs, to_upload, progress);
  for (const LocalBlob& blob : blobs) {
    // Two arguments naming the same bytes are uploaded once.
    if (to_upload.erase(blob.digest.sha256()) == 0) continue;
    if (!blob.case_file) {
      progress << "uploading " << blob.what << " (" << SizeText(blob.bytes.size()) << ")\n";
    }
    status = RetryUnavailable(policy, [&] { return client.Upload(blob.digest, blob.bytes); });
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("uploading ", blob.what, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SubmitJobResponse> SubmitWithRetry(const Connection& connection,
                                                      const v1::SubmitJobRequest& request,
                                                      const RetryPolicy& policy) {
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  v1::SubmitJobResponse response;
  absl::Status status = RetryUnavailable(policy, [&] {
    return UnaryCall(connection, [&](grpc::ClientContext& context) {
      return stub->SubmitJob(&context, request, &response);
    });
  });
  if (!status.ok()) return status;
  return response;
}

int RunSubmit(const Connection& connection, const SubmitArgs& args, const RetryPolicy& retry,
              const WatchOptions& watch) {
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  if (!prepared.ok())
    return Fail(ExitCodeForStatus(prepared.status()), prepared.status().message());
  api::BlobClient blobs(connection.channel, connection.token);
  absl::Status uploaded = UploadMissingBlobs(blobs, prepared->blobs, retry, std::cerr);
  if (!uploaded.ok())
    return FailWithStatus(uploaded, "uploading the job's files", connection.server);
  absl::StatusOr<v1::SubmitJobResponse> response =
      SubmitWithRetry(connection, prepared->request, retry);
  if (!response.ok())
    return FailWithStatus(response.status(), "submitting the job", connection.server);
  const v1::Job& job = response->job();
  std::cerr << (response->deduplicated() ? "already submitted as job " : "submitted job ")
            << job.id() << " (request id " << prepared->request.request_id() << ")\n";
  if (args.wait) return WatchAndReport(connection, job.id(), args.report, watch);
  std::cout << (args.report.json ? MessageJson(job) : job.id()) << "\n";
  return kExitPass;
}

}  // namespace boardlab::cli
