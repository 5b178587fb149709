#pragma once

// Reservations: a tenant leases an idle board for interactive work, by id, for a time (renewed
// with the lease id); the scheduler gives it no jobs meanwhile. A lease is its tenant's: another
// tenant holding its id can neither renew nor release it (docs/security.md). Admins may release
// any lease.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/auth.h"
#include "server/lab_board.h"

namespace boardlab::server {

constexpr int kDefaultLeaseSeconds = 600;

/// Reserves `board` for `ttl_seconds` (default when <= 0) from `now_ms`, or renews the caller's
/// lease when `lease_id` is it. FailedPrecondition when the board is reserved by another lease or
/// not idle.
absl::Status ReserveBoard(LabBoard& board, const Caller& caller, const std::string& lease_id,
                          int ttl_seconds, int64_t now_ms);
/// Ends the lease named by `lease_id` (a board without a lease is left as it is).
/// PermissionDenied when the id, or the caller's tenant, does not hold it.
absl::Status ReleaseBoard(LabBoard& board, const Caller& caller, const std::string& lease_id);
/// Ends a lease whose time is up; true when one ended.
bool ExpireReservation(LabBoard& board, int64_t now_ms);

}  // namespace boardlab::server
