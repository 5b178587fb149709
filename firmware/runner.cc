#include "firmware/runner.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <new>
#include <optional>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/random_bytes.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/platform/platform.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "runtime/timing/timing_model.h"
#include "runtime/verify/output_verifier.h"

namespace boardlab::firmware {
namespace {

namespace rt = boardlab::runtime;

constexpr size_t kMaxPlannedBuffers = 8;
// Measured: every shared model loads with < 8 KB persistent and < 16 KB temp memory
// (boardlab-run --persistent-bytes / --temp-bytes sweeps); these leave ample headroom.
constexpr size_t kPersistentBytes = 128u * 1024u;
constexpr size_t kTempBytes = 256u * 1024u;
constexpr size_t kEtdumpBytes = 256u * 1024u;
constexpr char kMethod[] = "forward";

// newlib as Debian builds it has no C99 size_t printf format (%zu prints literally), so sizes
// are printed as unsigned long, which is as wide as size_t on this target.
unsigned long U(size_t v) { return static_cast<unsigned long>(v); }

int Fail(RunnerResult* result, int code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
int Fail(RunnerResult* result, int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(result->message, sizeof(result->message), format, args);
  va_end(args);
  result->exit_code = code;
  return code;
}

const char* ErrorText(rt::Error e) {
  static char text[320];
  snprintf(text, sizeof(text), "%s: %s", rt::ToString(e), rt::LastErrorMessage());
  return text;
}

// The profiling clock, with the caller's between-kernels hook: the executor reads it before
// and after every kernel, which is where a board kicks its watchdog and services its link.
void (*g_between_kernels)(void*) = nullptr;
void* g_between_kernels_context = nullptr;
rt::Ticks ClockWithHook() {
  if (g_between_kernels != nullptr) g_between_kernels(g_between_kernels_context);
  return rt_pal_current_ticks();
}

// Installs the hook for one run and removes it on every return.
class BetweenKernelsHook {
 public:
  BetweenKernelsHook(void (*hook)(void*), void* context) {
    g_between_kernels = hook;
    g_between_kernels_context = context;
  }
  ~BetweenKernelsHook() { g_between_kernels = nullptr; }
  BetweenKernelsHook(const BetweenKernelsHook&) = delete;
  BetweenKernelsHook& operator=(const BetweenKernelsHook&) = delete;
};

// What the model needs from the board, for the "does not fit" message.
struct Needs {
  size_t artifact = 0;
  size_t planned = 0;
  size_t pools = 0;  // persistent + temp + ETDump
  size_t io = 0;     // input and expected-output bytes
  size_t Total() const { return artifact + planned + pools + io; }
};

int DoesNotFit(RunnerResult* result, const Needs& needs) {
  const BoardMemory& m = BoardMemory::Get();
  const size_t capacity = m.CapacityBytes();
  return Fail(result, kExitRuntime,
              "does not fit: needs %lu bytes, board has %lu (artifact %lu + planned buffers %lu + "
              "runtime pools %lu + I/O %lu; RAM pool %lu + %s %lu + non-cacheable %lu)",
              U(needs.Total()), U(capacity), U(needs.artifact), U(needs.planned), U(needs.pools),
              U(needs.io), U(m.ram_capacity()), BoardMemory::bulk_name(), U(m.psram_capacity()),
              U(m.scratch_capacity()));
}

// One buffer from the board, or the "does not fit" failure naming it (the total fits but no
// single region has room for this buffer).
uint8_t* Take(RunnerResult* result, size_t size, BoardMemory::Preference preference,
              const char* what) {
  BoardMemory& m = BoardMemory::Get();
  uint8_t* p = m.Allocate(size, preference);
  if (p == nullptr) {
    Fail(result, kExitRuntime,
         "does not fit: %s needs %lu bytes, board has %lu free in RAM pool and %lu free in %s",
         what, U(size), U(m.ram_capacity() - m.ram_used()), U(m.psram_capacity() - m.psram_used()),
         BoardMemory::bulk_name());
  }
  return p;
}

// Compares output `t` with `expected` into `out`; false when the verifier refused the pair.
void CheckOutput(const rt::TensorView& t, Bytes expected, double atol, OutputResult* out) {
  out->checked = true;
  rt::OutputComparison c;
  if (rt::Error e = rt::CompareOutput(t, {expected.data, expected.size}, atol, &c);
      e != rt::Error::kOk) {
    out->comparable = false;
    out->pass = false;
    // Cut to fit on purpose (GCC cannot see that error texts are short).
    snprintf(out->error_text, sizeof(out->error_text), "%.*s",
             static_cast<int>(sizeof(out->error_text) - 1), ErrorText(e));
    return;
  }
  out->pass = c.pass;
  out->max_abs_diff = c.max_abs_diff;
  out->mismatches = c.mismatches;
  out->elements = c.num_elements;
}

// The case's inputs as the method takes them: its bytes, or random:SEED made here; inputs not
// given keep the arena's initial zero bytes (null).
int PrepareInputs(const rt::Method& method, const RunnerCase& c, const uint8_t** input_data,
                  RunnerResult* result) {
  if (c.num_inputs > method.num_inputs() || c.num_expected > method.num_outputs()) {
    return Fail(
        result, kExitUsage, "%lu inputs and %lu expected outputs given, the model has %lu and %lu",
        U(c.num_inputs), U(c.num_expected), U(method.num_inputs()), U(method.num_outputs()));
  }
  for (size_t i = 0; i < c.num_inputs; ++i) {
    const InputSpec& spec = c.inputs[i];
    const size_t bytes = static_cast<size_t>(method.input(i)->NumBytes());
    if (spec.random) {
      uint8_t* data = Take(result, bytes, BoardMemory::kBulk, "an input");
      if (data == nullptr) return result->exit_code;
      rt::FillRandomBytes(spec.seed, data, bytes);
      input_data[i] = data;
    } else if (spec.bytes.size != bytes) {
      return Fail(result, kExitUsage, "input %lu has %lu bytes, the tensor takes %lu", U(i),
                  U(spec.bytes.size), U(bytes));
    } else {
      input_data[i] = spec.bytes.data;
    }
  }
  return kExitPass;
}

// `iterations` runs of the method on the inputs; their times go to `result`.
int ExecuteIterations(rt::Method& method, const uint8_t* const* input_data, size_t num_inputs,
                      int iterations, RunnerResult* result) {
  uint64_t total = 0, output_total = 0;
  result->num_times = 0;
  result->early_times_mask = 0;
  result->inferences_with_output = 0;
  for (int it = 0; it < iterations; ++it) {
    // Inputs are set before every run: the memory plan may reuse their arena bytes.
    for (size_t i = 0; i < num_inputs; ++i) {
      const size_t bytes = static_cast<size_t>(method.input(i)->NumBytes());
      if (rt::Error e = method.SetInput(i, input_data[i], bytes); e != rt::Error::kOk) {
        return Fail(result, kExitRuntime, "input %lu: %s", U(i), ErrorText(e));
      }
    }
    const uint64_t start = rt_pal_current_ticks();
    if (rt::Error e = method.Execute(); e != rt::Error::kOk) {
      return Fail(result, kExitRuntime, "execute: %s", ErrorText(e));
    }
    const uint64_t ticks = rt_pal_current_ticks() - start;
    if (method.produced_outputs()) {
      ++result->inferences_with_output;
      output_total += ticks;
    }
    if (result->num_times < kMaxIterationTimes) {
      if (!method.produced_outputs()) result->early_times_mask |= uint64_t{1} << result->num_times;
      result->ticks[result->num_times++] = ticks;
    }
    total += ticks;
  }
  const uint64_t runs = static_cast<uint64_t>(iterations);
  const uint64_t with_output = result->inferences_with_output;
  result->mean_ticks = total / runs;
  result->output_mean_ticks = with_output == 0 ? 0 : output_total / with_output;
  result->early_mean_ticks =
      with_output == runs ? 0 : (total - output_total) / (runs - with_output);
  return kExitPass;
}

// The outputs, compared with the case's expected bytes; returns kExitPass or kExitMismatch.
// After an inference that ended early nothing is compared: the outputs are not its own.
int CheckOutputs(const rt::Method& method, const RunnerCase& c, double atol, RunnerResult* result) {
  bool all_pass = true;
  result->no_output = !method.produced_outputs();
  const size_t num_expected = result->no_output ? 0 : c.num_expected;
  result->num_outputs = method.num_outputs();
  for (size_t i = 0; i < result->num_outputs; ++i) {
    const rt::TensorView& t = *method.GetOutput(i);
    OutputResult& out = result->outputs[i];
    out = OutputResult{};
    out.bytes = {static_cast<const uint8_t*>(t.data), static_cast<size_t>(t.NumBytes())};
    out.fnv1a32 = Fnv1a32(out.bytes.data, out.bytes.size);
    if (i < num_expected) {
      CheckOutput(t, c.expected[i], atol, &out);
      all_pass = all_pass && out.pass;
    }
  }
  result->verified = num_expected > 0;
  result->pass = all_pass;
  return all_pass ? kExitPass : kExitMismatch;
}

// One case on the loaded method: kExitPass, kExitMismatch, or an error (2-4).
int RunCase(rt::Method& method, const RunnerCase& c, const RunnerRequest& request,
            RunnerResult* result) {
  const uint8_t* input_data[kMaxTensors] = {};
  int code = PrepareInputs(method, c, input_data, result);
  if (code == kExitPass) {
    code = ExecuteIterations(method, input_data, c.num_inputs, request.iterations, result);
  }
  return code == kExitPass ? CheckOutputs(method, c, request.atol, result) : code;
}

// Every case of request.cases on the loaded method, each case's memory given back after it.
// Returns kExitMismatch when a case failed, an error (2-4) that stopped the run, or kExitPass.
int RunCases(rt::Method& method, const RunnerRequest& request, RunnerResult* result) {
  BoardMemory& memory = BoardMemory::Get();
  static RunnerCase c;
  bool all_pass = true;
  for (size_t index = 0;; ++index) {
    const BoardMemory::Mark mark = memory.mark();
    c = RunnerCase{};
    int code = request.cases->next(request.cases->context, index, &c, result);
    if (code == kCaseSourceEnd) break;
    if (code == kExitPass) code = RunCase(method, c, request, result);
    if (code == kExitPass || code == kExitMismatch) {
      result->cases_run++;
      if (result->no_output) {
        result->cases_no_output++;
      } else if (code == kExitPass) {
        result->cases_passed++;
      }
      all_pass = all_pass && code == kExitPass;
      code = request.cases->done(request.cases->context, index, result);
    }
    memory.Release(mark);
    if (code != kExitPass) {
      result->exit_code = code;
      return code;
    }
  }
  return all_pass ? kExitPass : kExitMismatch;
}

// The model a run loaded, with everything its Method points to (program, allocators, planned
// buffer list, backends, ETDump writer): in static storage rather than on RunModel's stack, so
// that a later RUN of the same job can continue on it with its state (ContinueModel). Its
// buffers are BoardMemory's, taken by RunModel; the caller gives them back.
struct LoadedModel {
  std::optional<rt::Program> program;
  rt::Span<uint8_t> planned[kMaxPlannedBuffers];
  size_t num_planned = 0;
  std::optional<rt::MemoryAllocator> persistent;
  std::optional<rt::MemoryAllocator> temp;
  std::optional<rt::MemoryManager> memory_manager;
  std::optional<rt::BackendRegistry> backends;
  std::optional<rt::Method> method;
  rt::etdump::EtdumpWriter* etdump = nullptr;
  uint8_t* etdump_base = nullptr;
  Bytes artifact;
  bool kept = false;  // loaded by a run that asked to keep it, and that ran
};

LoadedModel& Loaded() {
  static LoadedModel model;
  return model;
}

alignas(rt::etdump::EtdumpWriter) uint8_t etdump_storage[sizeof(rt::etdump::EtdumpWriter)];

// A fresh, empty ETDump writer in the one storage the loaded Method's tracer pointer names
// (each RUN's ETDump holds that run only, as when every RUN loaded the model).
void StartEtdump(LoadedModel& m, const runtime::etdump::ClockRecord& clock) {
  if (m.etdump != nullptr) m.etdump->~EtdumpWriter();
  m.etdump = new (etdump_storage) rt::etdump::EtdumpWriter(m.etdump_base, kEtdumpBytes);
  rt::etdump::WriteClockRecord(*m.etdump, clock);
}

void Forget(LoadedModel& m) {
  m.kept = false;
  m.method.reset();
  m.backends.reset();
  m.memory_manager.reset();
  m.temp.reset();
  m.persistent.reset();
  m.program.reset();
  if (m.etdump != nullptr) m.etdump->~EtdumpWriter();
  m.etdump = nullptr;
  m.etdump_base = nullptr;
  m.num_planned = 0;
}

// The planned buffers' sizes, checked against the board's memory with everything else the model
// needs before anything is allocated.
int PlanBuffers(const RunnerRequest& request, bool want_tracer, LoadedModel& m,
                size_t* planned_sizes, RunnerResult* result) {
  Needs needs;
  needs.artifact = request.preallocated_artifact;
  needs.io = request.preallocated_io;
  needs.pools = RunnerPoolBytes(want_tracer);
  rt::Result<size_t> num_planned = m.program->NumPlannedBuffers(kMethod);
  if (!num_planned.ok()) {
    return Fail(result, kExitInvalidArtifact, "invalid artifact: %s",
                ErrorText(num_planned.error()));
  }
  if (*num_planned > kMaxPlannedBuffers) {
    return Fail(result, kExitRuntime, "%lu planned buffers; the firmware supports %lu",
                U(*num_planned), U(kMaxPlannedBuffers));
  }
  m.num_planned = *num_planned;
  for (size_t i = 0; i < m.num_planned; ++i) {
    rt::Result<size_t> size = m.program->PlannedBufferSize(kMethod, i);
    if (!size.ok()) {
      return Fail(result, kExitInvalidArtifact, "invalid artifact: %s", ErrorText(size.error()));
    }
    planned_sizes[i] = *size;
    needs.planned += BoardMemory::Rounded(*size);
  }
  // The artifact and I/O bytes the caller took from BoardMemory are in its used bytes already.
  if (needs.Total() > BoardMemory::Get().CapacityBytes()) return DoesNotFit(result, needs);
  return kExitPass;
}

// The planned buffers, the runtime pools and the ETDump buffer, from BoardMemory.
int TakeBuffers(const size_t* planned_sizes, bool want_tracer, LoadedModel& m,
                RunnerResult* result) {
  for (size_t i = 0; i < m.num_planned; ++i) {
    char what[48];
    snprintf(what, sizeof(what), "planned buffer %lu", U(i));
    // Planned buffer 1 is the NPU weight-scratch window (docs/artifact-format.md): the NPU reads
    // it behind the core's cache, so it goes to non-cacheable SRAM where the board has some.
    const BoardMemory::Preference where = i == 1 ? BoardMemory::kWeightScratch : BoardMemory::kFast;
    uint8_t* p = Take(result, planned_sizes[i], where, what);
    if (p == nullptr) return result->exit_code;
    m.planned[i] = {p, planned_sizes[i]};
  }
  uint8_t* persistent_base = Take(result, kPersistentBytes, BoardMemory::kFast, "persistent");
  if (persistent_base == nullptr) return result->exit_code;
  uint8_t* temp_base = Take(result, kTempBytes, BoardMemory::kFast, "temp");
  if (temp_base == nullptr) return result->exit_code;
  m.persistent.emplace(persistent_base, kPersistentBytes);
  m.temp.emplace(temp_base, kTempBytes);
  m.memory_manager.emplace(&*m.persistent, rt::Span<rt::Span<uint8_t>>{m.planned, m.num_planned},
                           &*m.temp);
  if (want_tracer) {
    m.etdump_base = Take(result, kEtdumpBytes, BoardMemory::kBulk, "the ETDump buffer");
    if (m.etdump_base == nullptr) return result->exit_code;
  }
  return kExitPass;
}

// Loads request.artifact into `m`: program, buffers, backends, the method "forward".
int LoadModel(const RunnerRequest& request, LoadedModel& m, RunnerResult* result) {
  const bool want_tracer = request.etdump || request.between_kernels != nullptr;
  rt::Result<rt::Program> program =
      rt::Program::Load({request.artifact.data, request.artifact.size});
  if (!program.ok()) {
    return Fail(result, kExitInvalidArtifact, "invalid artifact: %s", ErrorText(program.error()));
  }
  m.program.emplace(std::move(*program));
  size_t planned_sizes[kMaxPlannedBuffers] = {};
  if (const int code = PlanBuffers(request, want_tracer, m, planned_sizes, result);
      code != kExitPass) {
    return code;
  }
  if (const int code = TakeBuffers(planned_sizes, want_tracer, m, result); code != kExitPass) {
    return code;
  }
  // ETDump events are stamped with the board clock (rt_pal_current_ticks).
  if (want_tracer) StartEtdump(m, request.clock);

  // No NPU driver here: the software NPU engine runs the NPU kernels on this core, and the board
  // clock times them, so no profile mistakes the M33's time for the NPU's. Static storage: no
  // heap is involved; the backend is stateless between runs.
  static const rt::timing::TimingParams params;
  static rt::npu::NpuBackend npu(params, rt::npu::EmulatedOnCore{&rt_pal_current_ticks});
  m.backends.emplace();
  if (rt::Error e = m.backends->Register(&npu); e != rt::Error::kOk) {
    return Fail(result, kExitRuntime, "%s", ErrorText(e));
  }
  rt::MethodOptions options;
  if (request.between_kernels != nullptr) options.clock = &ClockWithHook;
  rt::Result<rt::Method> method = m.program->LoadMethod(kMethod, *m.memory_manager, *m.backends,
                                                        m.etdump, rt::FindKernel, options);
  if (!method.ok()) {
    const rt::Error e = method.error();
    const bool bad = e == rt::Error::kInvalidProgram || e == rt::Error::kIncompatibleVersion;
    return Fail(result, bad ? kExitInvalidArtifact : kExitRuntime, "loading method 'forward': %s",
                ErrorText(e));
  }
  m.method.emplace(std::move(*method));
  if (m.method->num_outputs() > kMaxOutputs) {
    return Fail(result, kExitRuntime,
                "the model has %lu outputs; this firmware returns at most %lu",
                U(m.method->num_outputs()), U(kMaxOutputs));
  }
  m.artifact = request.artifact;
  return kExitPass;
}

// The request's cases (or its one case) on the loaded method, then the ETDump and memory facts.
int RunLoaded(const RunnerRequest& request, LoadedModel& m, RunnerResult* result) {
  rt::Method& method = *m.method;
  int code = kExitPass;
  if (request.cases != nullptr) {
    code = RunCases(method, request, result);
  } else {
    static RunnerCase single;
    single = RunnerCase{};
    for (size_t i = 0; i < kMaxTensors; ++i) {
      single.inputs[i] = request.inputs[i];
      single.expected[i] = request.expected[i];
    }
    single.num_inputs = request.num_inputs;
    single.num_expected = request.num_expected;
    code = RunCase(method, single, request, result);
  }
  if (code > kExitMismatch) return code;

  if (m.etdump != nullptr) {
    rt::Result<rt::Span<const uint8_t>> etdp = m.etdump->Finish();
    if (!etdp.ok()) {
      return Fail(result, kExitRuntime, "finishing the ETDump: %s", ErrorText(etdp.error()));
    }
    result->etdump = {etdp->data(), etdp->size()};
    result->etdump_dropped_events = m.etdump->dropped_events();
  }
  result->persistent_bytes = method.persistent_bytes();
  result->arena_in_ram = m.num_planned > 0 && BoardMemory::Get().InRam(m.planned[0].data());
  result->exit_code = code;
  return code;
}

}  // namespace

size_t RunnerPoolBytes(bool etdump) {
  return BoardMemory::Rounded(kPersistentBytes) + BoardMemory::Rounded(kTempBytes) +
         (etdump ? BoardMemory::Rounded(kEtdumpBytes) : 0);
}

uint32_t Fnv1a32(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

int RunModel(const RunnerRequest& request, RunnerResult* result) {
  *result = RunnerResult{};
  rt_pal_init();
  LoadedModel& m = Loaded();
  Forget(m);
  const BetweenKernelsHook hook(request.between_kernels, request.context);
  int code = LoadModel(request, m, result);
  if (code == kExitPass) code = RunLoaded(request, m, result);
  m.kept = request.keep_loaded && code <= kExitMismatch;
  return code;
}

int ContinueModel(const RunnerRequest& request, RunnerResult* result) {
  *result = RunnerResult{};
  LoadedModel& m = Loaded();
  if (!m.kept || m.artifact.data != request.artifact.data ||
      m.artifact.size != request.artifact.size) {
    return Fail(result, kExitUsage,
                "no model to continue on: the last run did not keep this artifact loaded");
  }
  BoardMemory& memory = BoardMemory::Get();
  const BoardMemory::Mark mark = memory.mark();  // what this case takes (random inputs)
  const BetweenKernelsHook hook(request.between_kernels, request.context);
  if (m.etdump != nullptr) StartEtdump(m, request.clock);
  const int code = RunLoaded(request, m, result);
  memory.Release(mark);
  if (code > kExitMismatch) Forget(m);  // a kernel failed mid-chain: its state is not to be kept
  return code;
}

}  // namespace boardlab::firmware
