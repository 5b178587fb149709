#pragma once

// Compile workers with a compile cache (model digest + compiler version + options -> artifact,
// report, debug map) checked against the blob store, and in-flight deduplication: identical
// requests that arrive while a compile runs share its result. Over a store shared by replicas
// (server/cluster_store.h) the deduplication spans them: a compile is claimed in the database,
// and a replica that finds the claim taken waits for the other's result in the shared cache.
//
// Usage:
//   CompileService compiles(config.compile_workers, store, blobs, metrics);
//   compiles.Request(model_digest, options, [](const CompileRecord& r, CompileSource s) {...});

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"
#include "compiler/compilation.h"
#include "server/blob_store.h"
#include "server/cluster_store.h"
#include "server/metrics.h"
#include "server/store.h"

namespace boardlab::server {

enum class CompileSource { kCache, kCompiled, kShared };

class CompileService {
 public:
  /// Called once per request, on the caller's thread for a cache hit and on a worker thread
  /// otherwise. Must not call back into Request() while holding locks Request() needs.
  using Done = std::function<void(const CompileRecord&, CompileSource)>;

  CompileService(int workers, Store& store, BlobStore& blobs, Metrics& metrics);
  ~CompileService();  // Stop()

  /// Finishes running compiles (their callbacks run), drops queued ones and joins the workers.
  /// Call it before destroying what the callbacks use.
  void Stop();

  /// Converts API options to the compiler's. Errors: InvalidArgument naming the option.
  static absl::StatusOr<compiler::CompileOptions> ToCompilerOptions(
      const v1::CompileOptions& options);
  static std::string CacheKey(const v1::Digest& model, const v1::CompileOptions& options);

  void Request(const v1::Digest& model, const v1::CompileOptions& options, Done done);
  /// As Request, when the caller has just read the key's cache entry (`cached`, nullopt: a
  /// miss): a hit is not read again, nor, over replicas, a miss (a claim reads it again anyway).
  void RequestLookedUp(const v1::Digest& model, const v1::CompileOptions& options,
                       const std::optional<CompileRecord>& cached, Done done);
  /// The entry a caller has just read (`cached`) when it can be used as it is; nullopt otherwise
  /// (RequestLookedUp then compiles). A submit applies a hit itself, so that its job is written
  /// once, already queued, and counts it (CountHit) once the job is committed.
  std::optional<CompileRecord> UsableLookedUp(const std::optional<CompileRecord>& cached);
  void CountHit();

  /// Replicas: another replica finished compiling `key` (a kCompiledChannel notification). Call
  /// without holding locks the Done callbacks take.
  void CompiledElsewhere(const std::string& key);
  /// Replicas: looks again at every compile another replica holds (a notification may have been
  /// missed, or that replica died and its claim was released). Same locking rule.
  void PollElsewhere();

 private:
  struct Pending {
    v1::Digest model;
    v1::CompileOptions options;
    std::vector<Done> waiters;
    bool elsewhere = false;  // another replica compiles it; we wait for its cache entry
  };

  void WorkerLoop();
  CompileRecord Compile(const v1::Digest& model, const v1::CompileOptions& options);
  std::optional<CompileRecord> CachedRecord(const std::string& key);
  /// `cached` when the blobs it names are all there (they are then touched); else nullopt.
  std::optional<CompileRecord> Usable(const CompileRecord& cached);
  /// Request's work once the cache was read: `cached` is the usable entry, if any.
  void Start(const std::string& key, const v1::Digest& model, const v1::CompileOptions& options,
             const std::optional<CompileRecord>& cached, Done done);
  /// Whether this replica may compile `key` (always, without replicas or when the claim cannot
  /// be checked: a compile twice is better than none).
  bool ClaimHere(const std::string& key);
  /// Hands `record` to the waiters of `key` (the first as from `first`, the others as shared)
  /// and forgets it.
  void Deliver(const std::string& key, const CompileRecord& record, CompileSource first);

  ClusterStore* cluster_;  // nullptr: one server
  Store& store_;
  BlobStore& blobs_;
  Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;           // keys in arrival order
  std::map<std::string, Pending> pending_;  // queued or compiling
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace boardlab::server
