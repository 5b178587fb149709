#include "agent/retrying_blob_store.h"

#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/backoff.h"

namespace boardlab::agent {
namespace {

class RetryingBlobStore : public BlobStore {
 public:
  RetryingBlobStore(BlobStorePtr base, RetryPolicy policy)
      : base_(std::move(base)), policy_(policy) {}

  absl::StatusOr<std::string> Get(const v1::Digest& digest) override {
    return Retry([&] { return base_->Get(digest); });
  }
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override {
    return Retry([&] { return base_->Put(bytes); });
  }
  absl::StatusOr<std::vector<v1::Digest>> PutAll(
      const std::vector<std::string_view>& blobs) override {
    return Retry([&] { return base_->PutAll(blobs); });
  }

 private:
  template <typename Call>
  auto Retry(Call call) -> decltype(call()) {
    // Made for the first retry only: seeding its generator costs more than a successful call.
    std::optional<Backoff> backoff;
    for (int attempt = 1;; ++attempt) {
      auto result = call();
      if (result.ok() || result.status().code() != absl::StatusCode::kUnavailable ||
          attempt >= policy_.max_attempts) {
        if (!result.ok() && attempt > 1) {
          return absl::Status(
              result.status().code(),
              absl::StrCat(result.status().message(), " (after ", attempt, " attempts)"));
        }
        return result;
      }
      if (!backoff) backoff.emplace(policy_.initial_delay, policy_.max_delay);
      std::this_thread::sleep_for(backoff->Next());
    }
  }

  BlobStorePtr base_;
  RetryPolicy policy_;
};

}  // namespace

BlobStorePtr NewRetryingBlobStore(BlobStorePtr base, RetryPolicy policy) {
  return std::make_unique<RetryingBlobStore>(std::move(base), policy);
}

}  // namespace boardlab::agent
