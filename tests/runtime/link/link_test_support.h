#pragma once

// Doubles for the board link's tests: an in-memory byte channel that corrupts, drops, duplicates
// and injects bytes at set rates; a ByteStream over two channels (the host's side); a
// BoardSupport over two channels (the board's side); a runner whose outputs the test can
// predict; and a board that runs a BoardEndpoint on its own thread and can be reset.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/link/board_endpoint.h"
#include "runtime/link/board_support.h"
#include "runtime/link/host_transport.h"
#include "runtime/link/link.h"

namespace boardlab::link::testing {

/// `size` bytes of a fixed pseudo-random sequence (artifacts, inputs).
inline std::vector<uint8_t> RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> b(size);
  for (uint8_t& x : b) x = static_cast<uint8_t>(random());
  return b;
}

/// Fault rates per byte written.
struct Faults {
  double corrupt = 0;    // one bit flipped
  double drop = 0;       // byte lost
  double duplicate = 0;  // byte delivered twice
  uint32_t seed = 1;
};

/// One direction of a byte pipe; optionally a line of a given rate and latency, for benchmarks
/// (bytes become readable one after another at the line rate, `latency` after they were sent).
class ByteChannel {
 public:
  using Clock = std::chrono::steady_clock;

  void SetLine(double bytes_per_second, std::chrono::microseconds latency) {
    std::lock_guard<std::mutex> lock(mutex_);
    byte_time_ = bytes_per_second > 0 ? std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(1.0 / bytes_per_second))
                                      : Clock::duration::zero();
    latency_ = latency;
  }
  void SetFaults(const Faults& faults) {
    std::lock_guard<std::mutex> lock(mutex_);
    faults_ = faults;
    random_.seed(faults.seed);
  }
  /// Called with every byte written, before faults (to watch the frames a sender makes).
  void SetObserver(std::function<void(const uint8_t*, size_t)> observer) {
    std::lock_guard<std::mutex> lock(mutex_);
    observer_ = std::move(observer);
  }

  void Write(const uint8_t* data, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    if (observer_) observer_(data, size);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (size_t i = 0; i < size; ++i) {
      uint8_t b = data[i];
      if (faults_.drop > 0 && uniform(random_) < faults_.drop) {
        ++dropped_;
        continue;
      }
      if (faults_.corrupt > 0 && uniform(random_) < faults_.corrupt) {
        b ^= static_cast<uint8_t>(1u << (random_() % 8));
        ++corrupted_;
      }
      Push(b);
      if (faults_.duplicate > 0 && uniform(random_) < faults_.duplicate) {
        Push(b);
        ++duplicated_;
      }
    }
    written_ += size;
    ready_.notify_all();
  }

  /// Appends bytes as they are, without faults (noise on the line, a boot banner).
  void Inject(const std::vector<uint8_t>& bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint8_t b : bytes) Push(b);
    ready_.notify_all();
  }

  /// Up to `size` bytes, waiting at most `timeout_ms`; -1 when closed and empty.
  long Read(uint8_t* data, size_t size, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (timeout_ms > 0 && !closed_) {
      if (!queue_.empty() && queue_.front().at <= Clock::now()) break;
      const Clock::time_point until =
          queue_.empty() ? deadline : std::min(deadline, queue_.front().at);
      if (Clock::now() >= deadline) break;
      ready_.wait_until(lock, until);
    }
    const Clock::time_point now = Clock::now();
    if (queue_.empty() || queue_.front().at > now) return closed_ && queue_.empty() ? -1 : 0;
    size_t n = 0;
    while (n < size && !queue_.empty() && queue_.front().at <= now) {
      data[n++] = queue_.front().byte;
      queue_.pop_front();
    }
    return static_cast<long>(n);
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }
  /// Drops the bytes not read yet (a board reset loses what its UART held).
  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
  }

  uint64_t written() const { return written_; }
  uint64_t corrupted() const { return corrupted_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t duplicated() const { return duplicated_; }

 private:
  struct Timed {
    uint8_t byte;
    Clock::time_point at;  // when it can be read
  };
  // Queues a byte behind the others at the line rate (mutex_ held).
  void Push(uint8_t b) {
    const Clock::time_point now = Clock::now();
    line_free_ = std::max(line_free_, now) + byte_time_;
    queue_.push_back({b, line_free_ + latency_});
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Timed> queue_;
  Clock::duration byte_time_ = Clock::duration::zero();
  std::chrono::microseconds latency_{0};
  Clock::time_point line_free_;
  bool closed_ = false;
  Faults faults_;
  std::mt19937 random_{1};
  std::function<void(const uint8_t*, size_t)> observer_;
  std::atomic<uint64_t> written_{0}, corrupted_{0}, dropped_{0}, duplicated_{0};
};

/// A link's output into a channel (one end written frame by frame).
class ChannelOutput : public ByteOutput {
 public:
  explicit ChannelOutput(ByteChannel& channel) : channel_(channel) {}
  void Write(const uint8_t* data, size_t size) override { channel_.Write(data, size); }

 private:
  ByteChannel& channel_;
};

/// The host's ByteStream over a pair of channels.
class PipeStream : public ByteStream {
 public:
  PipeStream(ByteChannel& in, ByteChannel& out) : in_(in), out_(out) {}
  long Read(uint8_t* data, size_t size, int timeout_ms) override {
    const long n = in_.Read(data, size, timeout_ms);
    if (n < 0) error_ = "the pipe was closed";
    return n;
  }
  bool Write(const uint8_t* data, size_t size) override {
    out_.Write(data, size);
    return true;
  }
  std::string error() const override { return error_; }
  std::string description() const override { return "an in-memory pipe"; }

 private:
  ByteChannel& in_;
  ByteChannel& out_;
  std::string error_;
};

inline uint32_t SteadyMilliseconds() {
  return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

/// The board's side: reads and writes the channels, a real clock, a recorded reset.
class FakeBoardSupport : public BoardSupport {
 public:
  FakeBoardSupport(ByteChannel& rx, ByteChannel& tx) : rx_(rx), tx_(tx) {
    static const MemoryRegion kRegions[] = {{"ram", 0x20000000u, 1u << 20},
                                            {"flash", 0x28000000u, 4u << 20}};
    info_.board = "fake";
    info_.firmware_version = "9.8.7";
    info_.build_id = "test-build";
    info_.clock = "fake clock";
    info_.ticks_per_second = 1000000;
    info_.core_hz = 300000000;
    info_.npu = "none";
    info_.regions = kRegions;
    info_.num_regions = 2;
  }

  size_t Read(uint8_t* data, size_t size, uint32_t timeout_ms) override {
    const long n = rx_.Read(data, size, static_cast<int>(timeout_ms));
    if (n <= 0) return 0;
    received_ += static_cast<uint64_t>(n);
    if (reset_after_bytes_ > 0 && received_ >= reset_after_bytes_) {
      reset_after_bytes_ = 0;
      spontaneous_reset_ = true;  // a brown-out: the board thread restarts the endpoint
    }
    return static_cast<size_t>(n);
  }
  void Write(const uint8_t* data, size_t size) override { tx_.Write(data, size); }
  uint32_t Milliseconds() override { return SteadyMilliseconds(); }
  void KickWatchdog() override { ++kicks_; }
  ResetCause reset_cause() const override { return cause_; }
  bool fault_record(Fault* fault) const override {
    if (!has_fault_) return false;
    *fault = fault_;
    return true;
  }
  void Reset() override { Restarted(ResetCause::kSoftware); }
  bool CauseTestFault(TestFault fault) override {
    switch (fault) {
      case TestFault::kNone:
        return false;
      case TestFault::kReset:
        Reset();
        return true;
      case TestFault::kHardFault:
      case TestFault::kHang: {
        Fault f;
        f.cause = fault == TestFault::kHang ? ResetCause::kWatchdog : ResetCause::kFault;
        f.pc = 0x1234;
        fault_ = f;
        has_fault_ = true;
        Restarted(f.cause);
        return true;
      }
      case TestFault::kHangWithoutWatchdog:
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return true;
    }
    return false;
  }
  const BoardInfo& info() const override { return info_; }

  /// The state the next boot starts from.
  void Restarted(ResetCause cause) {
    cause_ = cause;
    if (cause == ResetCause::kSoftware || cause == ResetCause::kPowerOn) has_fault_ = false;
    rx_.Clear();  // what the UART held is lost
  }
  void SetFault(const Fault& fault) {
    fault_ = fault;
    has_fault_ = true;
    cause_ = fault.cause;
  }
  /// Resets the board once it received `bytes` more bytes.
  void ResetAfterBytes(uint64_t bytes) { reset_after_bytes_ = received_ + bytes; }
  bool TakeSpontaneousReset() { return spontaneous_reset_.exchange(false); }
  void Stop() { stop_ = true; }
  bool stopping() const { return stop_; }
  uint64_t kicks() const { return kicks_; }

 private:
  ByteChannel& rx_;
  ByteChannel& tx_;
  BoardInfo info_;
  ResetCause cause_ = ResetCause::kPowerOn;
  bool has_fault_ = false;
  Fault fault_;
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> reset_after_bytes_{0};
  std::atomic<bool> spontaneous_reset_{false};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> kicks_{0};
};

/// Output 0 = SHA-256 over the artifact and every input; output 1 = each byte of input 0 plus 1
/// (one per input). An artifact starting with "BAD" is invalid (exit 3). Compares the
/// expected outputs byte for byte; the ETDump is `etdump_bytes` bytes of a known pattern.
class FakeRunner : public BoardRunner {
 public:
  static std::vector<std::vector<uint8_t>> ExpectedOutputs(
      const std::vector<uint8_t>& artifact, const std::vector<std::vector<uint8_t>>& inputs) {
    Sha256 hash;
    hash.Update(artifact.data(), artifact.size());
    for (const auto& in : inputs) hash.Update(in.data(), in.size());
    const Digest d = hash.Finish();
    std::vector<std::vector<uint8_t>> out = {std::vector<uint8_t>(d.bytes, d.bytes + kDigestBytes)};
    for (const auto& in : inputs) {  // then every input, each byte plus one
      out.push_back(in);
      for (uint8_t& b : out.back()) ++b;
    }
    return out;
  }
  static std::vector<uint8_t> Etdump(size_t bytes) {
    std::vector<uint8_t> e(bytes);
    for (size_t i = 0; i < bytes; ++i) e[i] = static_cast<uint8_t>(i * 7 + 3);
    return e;
  }

  void Run(const RunRequest& request, RunOutcome* outcome) override {
    ++runs_;
    if (request.continue_loaded) ++continued_runs_;
    Result& r = outcome->result;
    const std::string head(reinterpret_cast<const char*>(request.artifact.data),
                           std::min<size_t>(3, request.artifact.size));
    if (head == "BAD") {
      r.exit_code = 3;
      r.verdict = Verdict::kError;
      std::snprintf(r.message, sizeof(r.message), "invalid artifact: not a program");
      return;
    }
    if (log_ != nullptr) log_->Log(1, "fake runner: running");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms_);
    do {
      request.BetweenKernels();
      if (run_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } while (std::chrono::steady_clock::now() < deadline);
    std::vector<std::vector<uint8_t>> inputs;
    for (uint8_t i = 0; i < request.num_inputs; ++i) {
      inputs.emplace_back(request.inputs[i].data, request.inputs[i].data + request.inputs[i].size);
    }
    outputs_ = ExpectedOutputs(
        std::vector<uint8_t>(request.artifact.data, request.artifact.data + request.artifact.size),
        inputs);
    etdump_ = Etdump(etdump_bytes_);
    bool all_pass = true;
    r.num_outputs = static_cast<uint8_t>(outputs_.size());
    for (size_t i = 0; i < outputs_.size(); ++i) {
      OutputCheck& o = r.outputs[i];
      o.bytes = static_cast<uint32_t>(outputs_[i].size());
      outcome->outputs[i] = {outputs_[i].data(), outputs_[i].size()};
      if (i < request.num_expected) {
        o.checked = 1;
        const ConstBytes& e = request.expected[i];
        o.pass = e.size == outputs_[i].size() &&
                 std::equal(outputs_[i].begin(), outputs_[i].end(), e.data);
        all_pass = all_pass && o.pass;
      }
    }
    if (request.want_etdump) outcome->etdump = {etdump_.data(), etdump_.size()};
    r.iterations = request.iterations;
    r.num_times = static_cast<uint16_t>(std::min<uint32_t>(request.iterations, kMaxIterationTimes));
    for (uint16_t i = 0; i < r.num_times; ++i) r.ticks[i] = 100 + i;
    r.mean_ticks = 100;
    r.verdict = request.num_expected == 0 ? Verdict::kUnverified
                : all_pass                ? Verdict::kPass
                                          : Verdict::kFail;
    r.exit_code = all_pass ? 0 : 1;
    std::snprintf(r.message, sizeof(r.message), "memory: fake");
  }

  void set_run_ms(int ms) { run_ms_ = ms; }
  void set_etdump_bytes(size_t bytes) { etdump_bytes_ = bytes; }
  void set_log(BoardEndpoint* endpoint) { log_ = endpoint; }
  int runs() const { return runs_; }
  int continued_runs() const { return continued_runs_; }  // asked to continue (protocol 6)

 private:
  std::atomic<int> runs_{0};
  std::atomic<int> continued_runs_{0};
  int run_ms_ = 0;
  size_t etdump_bytes_ = 5000;
  BoardEndpoint* log_ = nullptr;
  std::vector<std::vector<uint8_t>> outputs_;
  std::vector<uint8_t> etdump_;
};

struct FakeBoardOptions {
  size_t cache_bytes = 256 * 1024;
  size_t job_bytes = 64 * 1024;
  size_t max_payload = BoardEndpoint::kMaxPayload;  // what the board accepts
  uint8_t window = 4;                               // frames it sends ahead
  uint8_t receive_window = 8;                       // frames it keeps after a loss
  // The model slot's "flash memory" (kept over resets; not owned). Null: no slot.
  const std::vector<uint8_t>* model_slot = nullptr;
};

/// A board: the endpoint on its own thread, over the channels; restarted (fresh memory, as after
/// a reset) whenever it stops or its board support asks for a spontaneous reset.
class FakeBoard {
 public:
  FakeBoard(ByteChannel& to_board, ByteChannel& to_host, FakeBoardOptions options = {})
      : options_(options), support_(to_board, to_host) {}
  ~FakeBoard() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  void Stop() {
    support_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  FakeBoardSupport& support() { return support_; }
  FakeRunner& runner() { return runner_; }
  int boots() const { return boots_; }

 private:
  void Loop() {
    while (!support_.stopping()) {
      ++boots_;
      // Fresh memory on every boot, 64-byte aligned like a board's.
      std::vector<uint64_t> tx(options_.window * BoardEndpoint::kMaxPayload / 8 + 1);
      std::vector<uint64_t> rx((options_.max_payload + kFrameOverhead) / 8 + 1);
      std::vector<uint64_t> reorder(options_.receive_window * options_.max_payload / 8 + 1);
      std::vector<uint64_t> cache(options_.cache_bytes / 8 + 8);
      std::vector<uint64_t> job(options_.job_bytes / 8 + 8);
      BoardEndpointMemory memory;
      memory.tx = reinterpret_cast<uint8_t*>(tx.data());
      memory.tx_size = options_.window * BoardEndpoint::kMaxPayload;
      memory.rx = reinterpret_cast<uint8_t*>(rx.data());
      memory.rx_size = options_.max_payload + kFrameOverhead;
      memory.reorder = reinterpret_cast<uint8_t*>(reorder.data());
      memory.reorder_size = options_.receive_window * options_.max_payload;
      memory.cache = Aligned(cache);
      memory.cache_size = options_.cache_bytes;
      memory.job = Aligned(job);
      memory.job_size = options_.job_bytes;
      if (options_.model_slot != nullptr) {
        memory.model_slot = options_.model_slot->data();
        memory.model_slot_size = options_.model_slot->size();
      }
      LinkOptions link;
      link.window = options_.window;
      link.initial_timeout_ms = 200;
      link.min_timeout_ms = 20;
      link.max_timeout_ms = 500;
      auto endpoint = std::make_unique<BoardEndpoint>(support_, runner_, memory, link);
      runner_.set_log(endpoint.get());
      endpoint->Start();
      while (!support_.stopping() && endpoint->Step()) {
        if (support_.TakeSpontaneousReset()) {
          support_.Restarted(ResetCause::kPowerOn);
          break;
        }
      }
      runner_.set_log(nullptr);
    }
  }
  static uint8_t* Aligned(std::vector<uint64_t>& v) {
    const auto p = reinterpret_cast<uintptr_t>(v.data());
    return reinterpret_cast<uint8_t*>((p + 63) & ~uintptr_t{63});
  }

  FakeBoardOptions options_;
  FakeBoardSupport support_;
  FakeRunner runner_;
  std::thread thread_;
  std::atomic<int> boots_{0};
};

}  // namespace boardlab::link::testing
