#pragma once

// A BlobStore decorator (STYLE.md rule 23) that retries calls failing with UNAVAILABLE, so that
// a server restart while a job downloads or uploads costs a delay, not the attempt. Other
// errors (NotFound, DataLoss, PermissionDenied, ...) are returned at once.
//
//   BlobStorePtr blobs = NewRetryingBlobStore(NewGrpcBlobStore(channel, token));

#include <chrono>

#include "agent/blob_store.h"

namespace boardlab::agent {

struct RetryPolicy {
  int max_attempts = 8;  // with the default backoff, about 20 s in all
  std::chrono::milliseconds initial_delay{100};
  std::chrono::milliseconds max_delay{5000};
};

BlobStorePtr NewRetryingBlobStore(BlobStorePtr base, RetryPolicy policy = {});

}  // namespace boardlab::agent
