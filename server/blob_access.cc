#include "server/blob_access.h"

#include "server/file_blob_store.h"

namespace boardlab::server {
namespace {

// Counts and hashes like every upload (CheckedBlobWriter), keeps nothing.
class PossessionCheck : public CheckedBlobWriter {
 public:
  using CheckedBlobWriter::CheckedBlobWriter;

 private:
  absl::Status Keep(std::string_view) override { return absl::OkStatus(); }
  absl::Status Store() override { return absl::OkStatus(); }
};

}  // namespace

absl::StatusOr<bool> TenantMayUse(Store& store, const Caller& caller, const std::string& sha256) {
  if (caller.is_admin()) return true;
  return store.HasBlobGrant(caller.tenant, sha256);
}

absl::StatusOr<bool> AgentUploaded(Store& store, const std::string& sha256) {
  return store.HasBlobGrant(kAgentUploads, sha256);
}

std::unique_ptr<BlobWriter> MakePossessionCheck(const v1::Digest& digest) {
  return std::make_unique<PossessionCheck>(digest);
}

}  // namespace boardlab::server
