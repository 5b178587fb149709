#pragma once

// Tenant scoping of the content-addressed artifact store. The bytes of a blob are stored once;
// who may find, read and reference them is recorded per tenant (Store blob grants), the way
// hosted stores scope one shared storage to their instances:
// - a client sees a blob its tenant uploaded (proved by sending the bytes) or a job of its tenant
//   produced (artifact, report, debug map, outputs, ETDump, profile, log, reference outputs);
// - an agent reads the blobs of jobs that are on a board and uploads results, which the job's
//   tenant is granted when the result is recorded: only the blobs an agent uploaded (proved it
//   holds the bytes, grant kAgentUploads), so that a result cannot hand a tenant a blob it names
//   by digest alone;
// - an admin sees everything.
// A blob a caller may not see is "not found", exactly like a missing one, so that digests do not
// tell one tenant what another holds.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/auth.h"
#include "server/blob_store.h"
#include "server/store.h"

namespace boardlab::server {

/// The grants' pseudo-tenant of the blobs agents uploaded. Not a tenant a token can name
/// (ValidateServerConfig refuses tenants starting with '@').
inline constexpr char kAgentUploads[] = "@agents";

/// Whether an agent uploaded the blob's bytes (or proved it held them). Errors: the store's.
absl::StatusOr<bool> AgentUploaded(Store& store, const std::string& sha256);

/// Whether `caller`'s tenant may use the blob (admins: always). Does not look at whether the
/// bytes are stored. Errors: the store's.
absl::StatusOr<bool> TenantMayUse(Store& store, const Caller& caller, const std::string& sha256);

/// A writer that checks that the uploaded bytes hash to `digest` and keeps nothing: an upload of
/// a blob already stored for another tenant proves possession without storing it twice.
/// Errors as BlobWriter's.
std::unique_ptr<BlobWriter> MakePossessionCheck(const v1::Digest& digest);

}  // namespace boardlab::server
