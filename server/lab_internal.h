#pragma once

// What the Lab's source files (lab*.cc) share and nobody else needs.

#include <string>

#include "boardlab/v1/board_service.pb.h"
#include "boardlab/v1/job_service.pb.h"

namespace boardlab::server::lab_internal {

/// "queued", "running", ... for logs and metrics labels.
std::string StateName(v1::JobState state);
/// "pass", "infra_error", ... for logs and metrics labels.
std::string ResultName(v1::JobResult result);
/// Whether a job in `state` holds a board.
bool OnBoard(v1::JobState state);
/// Whether `board` carries every tag of `wanted`.
bool HasTags(const v1::Board& board, const google::protobuf::RepeatedPtrField<v1::Tag>& wanted);

}  // namespace boardlab::server::lab_internal
