#include "server/compile_service.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/strings/str_cat.h"
#include "compiler/driver.h"
#include "compiler/op_types.h"
#include "proto/support/digest.h"
#include "server/log.h"

namespace boardlab::server {

CompileService::CompileService(int workers, Store& store, BlobStore& blobs, Metrics& metrics)
    : cluster_(store.Cluster()), store_(store), blobs_(blobs), metrics_(metrics) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

CompileService::~CompileService() { Stop(); }

void CompileService::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

absl::StatusOr<compiler::CompileOptions> CompileService::ToCompilerOptions(
    const v1::CompileOptions& options) {
  compiler::CompileOptions out;
  if (!options.target().empty()) out.target = options.target();
  out.cpu_only = options.cpu_only();
  const std::string& weights = options.weights();
  if (weights == "sram") {
    out.weights = compiler::WeightsPlacement::kSram;
  } else if (weights == "flash") {
    out.weights = compiler::WeightsPlacement::kFlash;
  } else if (!weights.empty() && weights != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("compile option weights must be auto, sram or flash, not '", weights, "'"));
  }
  const std::string& format = options.format_conversion();
  if (format == "cpu") {
    out.format_conversion = compiler::FormatConversion::kCpu;
  } else if (!format.empty() && format != "npu") {
    return absl::InvalidArgumentError(
        absl::StrCat("compile option format_conversion must be npu or cpu, not '", format, "'"));
  }
  for (const std::string& name : options.no_npu()) {
    auto op = compiler::OpTypeFromName(name);
    if (!op) {
      return absl::InvalidArgumentError(
          absl::StrCat("compile option no_npu: unknown operator '", name, "'"));
    }
    out.no_npu.push_back(*op);
  }
  return out;
}

std::string CompileService::CacheKey(const v1::Digest& model, const v1::CompileOptions& options) {
  // Deterministic serialization: the same options always give the same bytes.
  std::string serialized;
  {
    google::protobuf::io::StringOutputStream stream(&serialized);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    options.SerializeToCodedStream(&coded);
  }
  return api::Sha256Hex(
      absl::StrCat(model.sha256(), "|", compiler::CompilerVersion(), "|", serialized));
}

std::optional<CompileRecord> CompileService::CachedRecord(const std::string& key) {
  auto cached = store_.GetCompile(key);
  if (!cached.ok() || !cached->has_value()) return std::nullopt;
  return Usable(**cached);
}

std::optional<CompileRecord> CompileService::Usable(const CompileRecord& record) {
  // A cache entry is only as good as the blobs it points at.
  if (record.error.empty() && (!blobs_.Has(record.artifact) || !blobs_.Has(record.report) ||
                               !blobs_.Has(record.debug_map))) {
    return std::nullopt;
  }
  if (record.error.empty()) {  // a job is about to refer to them: retention must keep them
    for (const v1::Digest* digest : {&record.artifact, &record.report, &record.debug_map}) {
      blobs_.Touch(*digest);
    }
  }
  return record;
}

void CompileService::Request(const v1::Digest& model, const v1::CompileOptions& options,
                             Done done) {
  const std::string key = CacheKey(model, options);
  Start(key, model, options, CachedRecord(key), std::move(done));
}

void CompileService::RequestLookedUp(const v1::Digest& model, const v1::CompileOptions& options,
                                     const std::optional<CompileRecord>& cached, Done done) {
  const std::string key = CacheKey(model, options);
  std::optional<CompileRecord> usable = cached ? Usable(*cached) : std::nullopt;
  // One server: a compile finished since the caller's read is found (one local read).
  if (!usable && cluster_ == nullptr) usable = CachedRecord(key);
  Start(key, model, options, usable, std::move(done));
}

std::optional<CompileRecord> CompileService::UsableLookedUp(
    const std::optional<CompileRecord>& cached) {
  return cached ? Usable(*cached) : std::nullopt;
}

void CompileService::CountHit() { metrics_.CompileCache("hit"); }

void CompileService::Start(const std::string& key, const v1::Digest& model,
                           const v1::CompileOptions& options,
                           const std::optional<CompileRecord>& cached, Done done) {
  if (cached) {
    metrics_.CompileCache("hit");
    done(*cached, CompileSource::kCache);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = pending_.try_emplace(key);
    it->second.waiters.push_back(std::move(done));
    if (!inserted) {
      metrics_.CompileCache("dedup");
      return;
    }
    it->second.model = model;
    it->second.options = options;
  }
  // Identical requests arriving meanwhile join the pending entry above.
  const bool here = ClaimHere(key);
  if (here && cluster_ != nullptr) {
    // Another replica may have stored the result and dropped its claim since the lookup above.
    if (auto record = CachedRecord(key)) {
      if (absl::Status done = cluster_->FinishCompileClaim(key); !done.ok()) {
        LogError(absl::StrCat("compile claim: ", done.message()));
      }
      metrics_.CompileCache("hit");
      Deliver(key, *record, CompileSource::kCache);
      return;
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (!here) {
      pending_[key].elsewhere = true;
      metrics_.CompileCache("dedup");
      return;
    }
    queue_.push_back(key);
  }
  metrics_.CompileCache("miss");
  wake_.notify_one();
}

bool CompileService::ClaimHere(const std::string& key) {
  if (cluster_ == nullptr) return true;
  absl::StatusOr<bool> claimed = cluster_->ClaimCompile(key);
  if (!claimed.ok()) {
    LogError(absl::StrCat("compile claim: ", claimed.status().message(), "; compiling here"));
    return true;
  }
  return *claimed;
}

void CompileService::CompiledElsewhere(const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(key);
    if (it == pending_.end() || !it->second.elsewhere) return;
  }
  if (auto record = CachedRecord(key)) Deliver(key, *record, CompileSource::kShared);
}

void CompileService::PollElsewhere() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, pending] : pending_) {
      if (pending.elsewhere) keys.push_back(key);
    }
  }
  for (const std::string& key : keys) {
    if (auto record = CachedRecord(key)) {
      Deliver(key, *record, CompileSource::kShared);
      continue;
    }
    // No result and the claim is free again: its replica died (its claims were released).
    if (cluster_ == nullptr) continue;
    absl::StatusOr<bool> claimed = cluster_->ClaimCompile(key);
    if (!claimed.ok() || !*claimed) continue;
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(key);
      if (it == pending_.end()) continue;
      it->second.elsewhere = false;
      queue_.push_back(key);
    }
    wake_.notify_one();
  }
}

void CompileService::Deliver(const std::string& key, const CompileRecord& record,
                             CompileSource first) {
  std::vector<Done> waiters;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(key);
    if (it == pending_.end()) return;  // delivered by another thread meanwhile
    waiters = std::move(it->second.waiters);
    pending_.erase(it);
  }
  for (size_t i = 0; i < waiters.size(); ++i) {
    waiters[i](record, i == 0 ? first : CompileSource::kShared);
  }
}

void CompileService::WorkerLoop() {
  for (;;) {
    std::string key;
    v1::Digest model;
    v1::CompileOptions options;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      key = queue_.front();
      queue_.pop_front();
      model = pending_[key].model;
      options = pending_[key].options;
    }
    CompileRecord record = Compile(model, options);
    if (absl::Status stored = store_.PutCompile(key, record); !stored.ok()) {
      // The result is still good for the waiting jobs; only the cache entry is missing.
      LogError(absl::StrCat("compile cache: ", stored.message()));
    }
    if (cluster_ != nullptr) {
      // Other replicas waiting for this key read the entry stored above.
      if (absl::Status done = cluster_->FinishCompileClaim(key); !done.ok()) {
        LogError(absl::StrCat("compile claim: ", done.message()));
      }
    }
    Deliver(key, record, CompileSource::kCompiled);
  }
}

CompileRecord CompileService::Compile(const v1::Digest& model, const v1::CompileOptions& options) {
  CompileRecord record;
  auto fail = [&](const absl::Status& status) {
    record.error = std::string(status.message());
    record.error_code = static_cast<int>(status.code());
    return record;
  };
  auto bytes = blobs_.Read(model);
  if (!bytes.ok()) return fail(bytes.status());
  auto compiler_options = ToCompilerOptions(options);
  if (!compiler_options.ok()) return fail(compiler_options.status());
  auto result = compiler::Compile(
      std::span(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()), *compiler_options);
  if (!result.ok()) return fail(result.status());
  auto artifact = blobs_.Put(
      std::string_view(reinterpret_cast<const char*>(result->pte.data()), result->pte.size()));
  auto report = blobs_.Put(result->report_json);
  auto debug_map = blobs_.Put(result->debug_map_json);
  for (const auto* stored : {&artifact, &report, &debug_map}) {
    if (!stored->ok()) return fail(stored->status());
  }
  record.artifact = *artifact;
  record.report = *report;
  record.debug_map = *debug_map;
  const compiler::Graph& graph = result->compilation.graph;
  for (int t : graph.inputs) record.input_bytes.push_back(graph.tensors[t].SizeBytes());
  for (int t : graph.outputs) record.output_bytes.push_back(graph.tensors[t].SizeBytes());
  return record;
}

}  // namespace boardlab::server
