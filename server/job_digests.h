#pragma once

// The blobs a job refers to: it names them through Digest fields (model, inputs, expected
// outputs, artifact, outputs, ETDump...), and new fields are found without a list to keep.

#include <string>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/message.h"

namespace boardlab::server {

/// Adds the SHA-256 of every Digest in `message`, at any depth, to `digests`.
void CollectDigests(const google::protobuf::Message& message,
                    absl::flat_hash_set<std::string>& digests);

}  // namespace boardlab::server
