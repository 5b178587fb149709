#pragma once

// Expected outputs for `expect_reference` jobs: the model compiled without NPU partitions and run
// on the host by boardlab-run (the CPU kernels, bit-exact with TensorFlow Lite Micro's reference
// arithmetic), with the job's own inputs (a many-case job: every case in one boardlab-run
// --cases). Runs in a child process, so a crashing run cannot take the server down.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"
#include "server/blob_store.h"

namespace boardlab::server {

class ReferenceRunner {
  struct WorkDir;

 public:
  /// `boardlab_run` is the path of boardlab-run; `work_dir` holds temporary files.
  ReferenceRunner(std::string boardlab_run, std::string work_dir, BlobStore& blobs);

  /// Runs `artifact` (a CPU-only .pte in the blob store) on `inputs` and stores its outputs.
  /// Errors: Internal when the run fails (its output is in the message).
  absl::StatusOr<std::vector<v1::Digest>> Run(
      const v1::Digest& artifact, const google::protobuf::RepeatedPtrField<v1::InputSpec>& inputs,
      int num_outputs);

  /// The same for every case, in one boardlab-run (one load: --cases): each case's outputs, in
  /// case order. Errors: Internal when the run fails.
  absl::StatusOr<std::vector<std::vector<v1::Digest>>> RunCases(
      const v1::Digest& artifact, const google::protobuf::RepeatedPtrField<v1::RunCase>& cases,
      int num_outputs);

 private:
  /// boardlab-run `artifact` --board sim --outputs DIR `options` in a fresh directory; Internal
  /// with its output when it fails.
  absl::Status RunInDirectory(const v1::Digest& artifact, const std::vector<std::string>& options,
                              const WorkDir& dir);
  /// The output<i>.bin files of `dir`, stored.
  absl::StatusOr<std::vector<v1::Digest>> StoreOutputs(const std::string& dir, int num_outputs);

  std::string boardlab_run_;
  std::string work_dir_;
  BlobStore& blobs_;
};

/// boardlab-run as the build made it (empty when the build has none).
std::string DefaultBoardlabRun();

}  // namespace boardlab::server
