// boardlab-firmware: runs one .pte artifact on a Cortex-M33 (QEMU mps2-an505) with the portable
// runtime, the way boardlab-run does on the host, with every file going over semihosting.
//
//   boardlab-firmware ARTIFACT.pte [--input FILE|random:SEED]... [--expected FILE]... [--atol N]
//                     [--etdump OUT.etdp] [--outputs DIR] [--iterations N] [--icount-shift N]
//   boardlab-firmware @ARGS_FILE          (the same arguments, one per line)
//
// Arguments come from `-semihosting-config arg=...`; firmware/run-qemu.sh writes them to a file
// and passes @FILE, because the semihosting command line is limited to 255 characters. The
// artifact goes to PSRAM; the planned buffers, the runtime's persistent and temp pools go to
// the RAM pool when they fit there, else PSRAM (firmware/board_memory.h). A model that needs more
// than the board has stops with "does not fit: needs X bytes, board has Y" before anything runs.
//
// Output: one line per output, then one result line:
//   result: PASS ticks 12345 ns 617250 instructions 617250 (per inference)
// Exit status = verdict: 0 pass (or nothing to verify), 1 mismatch, 2 bad arguments or
// unreadable files, 3 invalid artifact, 4 runtime error or does not fit, 5 CPU fault.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "firmware/an505_platform.h"
#include "firmware/board_memory.h"
#include "runtime/core/error.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/platform/platform.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "runtime/timing/timing_model.h"
#include "runtime/verify/output_verifier.h"

namespace boardlab::firmware {
namespace {

namespace rt = boardlab::runtime;

constexpr size_t kMaxFiles = 8;
constexpr size_t kMaxArgs = 64;
constexpr size_t kMaxPlannedBuffers = 8;
// Measured: every shared model loads with < 8 KB persistent and < 16 KB temp memory
// (boardlab-run --persistent-bytes / --temp-bytes sweeps); these leave ample headroom.
constexpr size_t kPersistentBytes = 128u * 1024u;
constexpr size_t kTempBytes = 256u * 1024u;
constexpr size_t kEtdumpBytes = 256u * 1024u;
constexpr char kMethod[] = "forward";

struct Args {
  const char* artifact = nullptr;
  const char* inputs[kMaxFiles] = {};
  size_t num_inputs = 0;
  const char* expected[kMaxFiles] = {};
  size_t num_expected = 0;
  double atol = 0;
  const char* etdump = nullptr;
  const char* outputs_dir = nullptr;
  int iterations = 1;
  int icount_shift = -1;  // -1: not run under -icount, instructions unknown
};

int Fail(int code, const char* format, ...) __attribute__((format(printf, 2, 3)));
int Fail(int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs("boardlab-firmware: ", stdout);
  vfprintf(stdout, format, args);
  fputc('\n', stdout);
  va_end(args);
  printf("result: %s\n", code == kExitInvalidArtifact ? "INVALID_ARTIFACT" : "ERROR");
  return code;
}

int Usage(const char* message) {
  return Fail(kExitUsage,
              "%s\nusage: boardlab-firmware ARTIFACT.pte [--input FILE]... [--expected FILE]... "
              "[--atol N] [--etdump OUT] [--outputs DIR] [--iterations N] [--icount-shift N]",
              message);
}

bool ParseArgs(int argc, char** argv, Args& args, int& exit_code) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a[0] != '-') {
      if (args.artifact != nullptr) {
        exit_code = Usage("more than one artifact given");
        return false;
      }
      args.artifact = a;
      continue;
    }
    if (!has_value) {
      exit_code = Usage("option without a value");
      return false;
    }
    const char* v = argv[++i];
    if (strcmp(a, "--input") == 0 || strcmp(a, "--expected") == 0) {
      const bool input = a[2] == 'i';
      size_t& n = input ? args.num_inputs : args.num_expected;
      if (n == kMaxFiles) {
        exit_code = Usage("too many files");
        return false;
      }
      (input ? args.inputs : args.expected)[n++] = v;
    } else if (strcmp(a, "--atol") == 0) {
      args.atol = strtod(v, nullptr);
    } else if (strcmp(a, "--etdump") == 0) {
      args.etdump = v;
    } else if (strcmp(a, "--outputs") == 0) {
      args.outputs_dir = v;
    } else if (strcmp(a, "--iterations") == 0) {
      args.iterations = atoi(v);
    } else if (strcmp(a, "--icount-shift") == 0) {
      args.icount_shift = atoi(v);
    } else {
      exit_code = Usage("unknown option");
      return false;
    }
  }
  if (args.artifact == nullptr) {
    exit_code = Usage("no artifact given");
    return false;
  }
  if (args.iterations < 1 || args.atol < 0) {
    exit_code = Usage("--iterations must be >= 1 and --atol >= 0");
    return false;
  }
  return true;
}

// `@FILE` as the only argument: the arguments are the lines of host file FILE. newlib's crt0
// fetches the semihosting command line into a 256-byte buffer, too small for several absolute
// paths; a file has no such limit (and no trouble with QEMU's comma-separated arg= list).
bool ReadArgsFile(const char* path, int& argc, char**& argv, int& exit_code) {
  static char text[8192];
  static char* lines[kMaxArgs];
  FILE* f = fopen(path, "rb");
  if (f == nullptr) {
    exit_code = Fail(kExitUsage, "reading arguments file '%s': cannot open it", path);
    return false;
  }
  const size_t n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  if (n == sizeof(text) - 1) {
    exit_code = Fail(kExitUsage, "arguments file '%s' is larger than %lu bytes", path,
                     static_cast<unsigned long>(sizeof(text) - 2));
    return false;
  }
  text[n] = '\0';
  int count = 0;
  lines[count++] = argv[0];
  for (char* line = text; *line != '\0';) {
    char* end = strchr(line, '\n');
    if (end != nullptr) *end = '\0';
    if (*line != '\0') {
      if (count == static_cast<int>(kMaxArgs)) {
        exit_code = Usage("too many arguments");
        return false;
      }
      lines[count++] = line;
    }
    if (end == nullptr) break;
    line = end + 1;
  }
  argc = count;
  argv = lines;
  return true;
}

// Size of a host file (semihosting SYS_FLEN behind fseek/ftell); -1 when it cannot be opened.
long HostFileSize(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return -1;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  fclose(f);
  return size;
}

// Reads exactly `size` bytes of host file `path` into `data`. Unbuffered, so newlib passes the
// whole request to one semihosting SYS_READ instead of BUFSIZ-sized pieces.
bool ReadHostFile(const char* path, uint8_t* data, size_t size) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return false;
  setvbuf(f, nullptr, _IONBF, 0);
  const size_t n = fread(data, 1, size, f);
  fclose(f);
  return n == size;
}

bool WriteHostFile(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (f == nullptr) return false;
  setvbuf(f, nullptr, _IONBF, 0);
  const size_t n = fwrite(data, 1, size, f);
  return fclose(f) == 0 && n == size;
}

const char* ErrorText(rt::Error e) {
  static char text[320];
  snprintf(text, sizeof(text), "%s: %s", rt::ToString(e), rt::LastErrorMessage());
  return text;
}

// newlib as Debian builds it has no C99 size_t printf format (%zu prints literally), so sizes
// are printed as unsigned long, which is as wide as size_t on this target.
unsigned long U(size_t v) { return static_cast<unsigned long>(v); }

uint32_t Fnv1a32(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

bool IsRandomSpec(const char* spec) { return strncmp(spec, "random:", 7) == 0; }

// random:SEED inputs, as boardlab-run makes them (docs/runtime.md): the splitmix64 stream seeded
// with SEED, each 64-bit output little-endian.
void RandomBytes(uint64_t seed, uint8_t* out, size_t size) {
  uint64_t state = seed;
  for (size_t i = 0; i < size; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t b = 0; b < 8 && i + b < size; ++b) out[i + b] = static_cast<uint8_t>(z >> (8 * b));
  }
}

// What the model needs from the board, for the "does not fit" message.
struct Needs {
  size_t artifact = 0;
  size_t planned = 0;
  size_t pools = 0;  // persistent + temp + ETDump
  size_t io = 0;     // input and expected-output files
  size_t Total() const { return artifact + planned + pools + io; }
};

int DoesNotFit(const Needs& needs) {
  const BoardMemory& m = BoardMemory::Get();
  return Fail(kExitRuntime,
              "does not fit: needs %lu bytes, board has %lu (artifact %lu + planned buffers %lu + "
              "runtime pools %lu + I/O %lu; RAM pool %lu + PSRAM %lu)",
              U(needs.Total()), U(m.CapacityBytes()), U(needs.artifact), U(needs.planned),
              U(needs.pools), U(needs.io), U(m.ram_capacity()), U(m.psram_capacity()));
}

// One buffer from the board, or the "does not fit" failure naming it (the total fits but no
// single region has room for this buffer).
uint8_t* Take(size_t size, BoardMemory::Preference preference, const char* what, int& exit_code) {
  BoardMemory& m = BoardMemory::Get();
  uint8_t* p = m.Allocate(size, preference);
  if (p == nullptr) {
    exit_code = Fail(kExitRuntime,
                     "does not fit: %s needs %lu bytes, board has %lu free in RAM pool and %lu "
                     "free in PSRAM",
                     what, U(size), U(m.ram_capacity() - m.ram_used()),
                     U(m.psram_capacity() - m.psram_used()));
  }
  return p;
}

int Run(const Args& args) {
  rt_pal_init();
  BoardMemory& memory = BoardMemory::Get();
  int exit_code = kExitPass;

  // The artifact: its size first, so that a model too big for the board is refused before any
  // byte is read.
  Needs needs;
  const long artifact_size = HostFileSize(args.artifact);
  if (artifact_size < 0) {
    return Fail(kExitUsage, "reading artifact '%s': cannot open it", args.artifact);
  }
  needs.artifact = BoardMemory::Rounded(static_cast<size_t>(artifact_size));
  needs.pools = BoardMemory::Rounded(kPersistentBytes) + BoardMemory::Rounded(kTempBytes) +
                (args.etdump != nullptr ? BoardMemory::Rounded(kEtdumpBytes) : 0);
  if (needs.Total() > memory.CapacityBytes()) return DoesNotFit(needs);
  uint8_t* artifact =
      Take(static_cast<size_t>(artifact_size), BoardMemory::kBulk, "the artifact", exit_code);
  if (artifact == nullptr) return exit_code;
  if (!ReadHostFile(args.artifact, artifact, static_cast<size_t>(artifact_size))) {
    return Fail(kExitUsage, "reading artifact '%s': short read", args.artifact);
  }
  rt::Result<rt::Program> program =
      rt::Program::Load({artifact, static_cast<size_t>(artifact_size)});
  if (!program.ok()) {
    return Fail(kExitInvalidArtifact, "invalid artifact '%s': %s", args.artifact,
                ErrorText(program.error()));
  }

  // Everything else the model needs, checked as a whole before allocating.
  rt::Result<size_t> num_planned = program->NumPlannedBuffers(kMethod);
  if (!num_planned.ok()) {
    return Fail(kExitInvalidArtifact, "invalid artifact: %s", ErrorText(num_planned.error()));
  }
  if (*num_planned > kMaxPlannedBuffers) {
    return Fail(kExitRuntime, "%lu planned buffers; the firmware supports %lu", U(*num_planned),
                U(kMaxPlannedBuffers));
  }
  size_t planned_sizes[kMaxPlannedBuffers] = {};
  for (size_t i = 0; i < *num_planned; ++i) {
    rt::Result<size_t> size = program->PlannedBufferSize(kMethod, i);
    if (!size.ok()) {
      return Fail(kExitInvalidArtifact, "invalid artifact: %s", ErrorText(size.error()));
    }
    planned_sizes[i] = *size;
    needs.planned += BoardMemory::Rounded(*size);
  }
  long input_sizes[kMaxFiles] = {};
  long expected_sizes[kMaxFiles] = {};
  for (size_t i = 0; i < args.num_inputs + args.num_expected; ++i) {
    const bool input = i < args.num_inputs;
    const char* path = input ? args.inputs[i] : args.expected[i - args.num_inputs];
    if (input && IsRandomSpec(path)) continue;  // sized by its tensor, allocated later
    const long size = HostFileSize(path);
    if (size < 0) return Fail(kExitUsage, "reading file '%s': cannot open it", path);
    (input ? input_sizes[i] : expected_sizes[i - args.num_inputs]) = size;
    needs.io += BoardMemory::Rounded(static_cast<size_t>(size));
  }
  if (needs.Total() > memory.CapacityBytes()) return DoesNotFit(needs);

  rt::Span<uint8_t> planned[kMaxPlannedBuffers];
  for (size_t i = 0; i < *num_planned; ++i) {
    char what[48];
    snprintf(what, sizeof(what), "planned buffer %lu", U(i));
    uint8_t* p = Take(planned_sizes[i], BoardMemory::kFast, what, exit_code);
    if (p == nullptr) return exit_code;
    planned[i] = {p, planned_sizes[i]};
  }
  uint8_t* persistent_base = Take(kPersistentBytes, BoardMemory::kFast, "persistent", exit_code);
  uint8_t* temp_base = Take(kTempBytes, BoardMemory::kFast, "temp", exit_code);
  if (persistent_base == nullptr || temp_base == nullptr) return exit_code;
  rt::MemoryAllocator persistent(persistent_base, kPersistentBytes);
  rt::MemoryAllocator temp(temp_base, kTempBytes);
  rt::MemoryManager memory_manager(&persistent, {planned, *num_planned}, &temp);

  // ETDump events are stamped with the board clock (rt_pal_current_ticks, timer 0 ticks).
  uint8_t* etdump_base = nullptr;
  if (args.etdump != nullptr) {
    etdump_base = Take(kEtdumpBytes, BoardMemory::kBulk, "the ETDump buffer", exit_code);
    if (etdump_base == nullptr) return exit_code;
  }
  // Static storage: the writer and the backend live until exit, and no heap is involved.
  static rt::etdump::EtdumpWriter* etdump = nullptr;
  alignas(rt::etdump::EtdumpWriter) static uint8_t etdump_storage[sizeof(rt::etdump::EtdumpWriter)];
  if (etdump_base != nullptr) {
    etdump = new (etdump_storage) rt::etdump::EtdumpWriter(etdump_base, kEtdumpBytes);
  }

  // No NPU driver here: the software NPU engine runs the NPU kernels on this core, and the board
  // clock times them, so no profile mistakes the M33's time for the NPU's.
  static const rt::timing::TimingParams params;
  static rt::npu::NpuBackend npu(params, rt::npu::EmulatedOnCore{&rt_pal_current_ticks});
  rt::BackendRegistry backends;
  if (rt::Error e = backends.Register(&npu); e != rt::Error::kOk) {
    return Fail(kExitRuntime, "%s", ErrorText(e));
  }
  rt::Result<rt::Method> method =
      program->LoadMethod(kMethod, memory_manager, backends, etdump, rt::FindKernel);
  if (!method.ok()) {
    const rt::Error e = method.error();
    const bool bad = e == rt::Error::kInvalidProgram || e == rt::Error::kIncompatibleVersion;
    return Fail(bad ? kExitInvalidArtifact : kExitRuntime, "loading method 'forward': %s",
                ErrorText(e));
  }

  if (etdump != nullptr) rt::etdump::WriteClockRecord(*etdump, BoardClockRecord(args.icount_shift));

  if (args.num_inputs > method->num_inputs() || args.num_expected > method->num_outputs()) {
    return Fail(kExitUsage, "%lu inputs and %lu expected outputs given, the model has %lu and %lu",
                U(args.num_inputs), U(args.num_expected), U(method->num_inputs()),
                U(method->num_outputs()));
  }
  // Inputs are FILE or random:SEED; inputs not given keep the arena's initial zero bytes.
  const uint8_t* input_data[kMaxFiles] = {};
  for (size_t i = 0; i < args.num_inputs; ++i) {
    const size_t bytes = static_cast<size_t>(method->input(i)->NumBytes());
    if (IsRandomSpec(args.inputs[i])) {
      uint8_t* data = Take(bytes, BoardMemory::kBulk, "an input", exit_code);
      if (data == nullptr) return exit_code;
      RandomBytes(strtoull(args.inputs[i] + 7, nullptr, 10), data, bytes);
      input_data[i] = data;
      continue;
    }
    if (static_cast<size_t>(input_sizes[i]) != bytes) {
      return Fail(kExitUsage, "input %lu '%s' has %ld bytes, the tensor takes %lu", U(i),
                  args.inputs[i], input_sizes[i], U(bytes));
    }
    uint8_t* data = Take(bytes, BoardMemory::kBulk, "an input file", exit_code);
    if (data == nullptr) return exit_code;
    if (!ReadHostFile(args.inputs[i], data, bytes)) {
      return Fail(kExitUsage, "reading input file '%s': short read", args.inputs[i]);
    }
    input_data[i] = data;
  }

  uint64_t ticks = 0;
  for (int it = 0; it < args.iterations; ++it) {
    // Inputs are set before every run: the memory plan may reuse their arena bytes.
    for (size_t i = 0; i < args.num_inputs; ++i) {
      const size_t bytes = static_cast<size_t>(method->input(i)->NumBytes());
      if (rt::Error e = method->SetInput(i, input_data[i], bytes); e != rt::Error::kOk) {
        return Fail(kExitRuntime, "input %lu: %s", U(i), ErrorText(e));
      }
    }
    const uint64_t start = rt_pal_current_ticks();
    if (rt::Error e = method->Execute(); e != rt::Error::kOk) {
      return Fail(kExitRuntime, "execute: %s", ErrorText(e));
    }
    ticks += rt_pal_current_ticks() - start;
  }
  ticks /= static_cast<uint64_t>(args.iterations);

  bool all_pass = true;
  for (size_t i = 0; i < method->num_outputs(); ++i) {
    const rt::TensorView& t = *method->GetOutput(i);
    const size_t bytes = static_cast<size_t>(t.NumBytes());
    const auto* data = static_cast<const uint8_t*>(t.data);
    printf("output %lu: %lu bytes fnv1a32 %08lx", U(i), U(bytes),
           static_cast<unsigned long>(Fnv1a32(data, bytes)));
    if (i < args.num_expected) {
      const size_t size = static_cast<size_t>(expected_sizes[i]);
      uint8_t* expected = Take(size, BoardMemory::kBulk, "an expected file", exit_code);
      if (expected == nullptr) return exit_code;
      if (!ReadHostFile(args.expected[i], expected, size)) {
        return Fail(kExitUsage, "reading expected file '%s': short read", args.expected[i]);
      }
      rt::OutputComparison c;
      if (rt::Error e = rt::CompareOutput(t, {expected, size}, args.atol, &c);
          e != rt::Error::kOk) {
        printf(" FAIL: %s\n", ErrorText(e));
        all_pass = false;
      } else {
        printf(" %s: max abs diff %g, %lu of %lu elements outside atol\n", c.pass ? "pass" : "FAIL",
               c.max_abs_diff, U(c.mismatches), U(c.num_elements));
        all_pass = all_pass && c.pass;
      }
    } else {
      printf("\n");
    }
    if (args.outputs_dir != nullptr) {
      char path[256];
      snprintf(path, sizeof(path), "%s/output%lu.bin", args.outputs_dir, U(i));
      if (!WriteHostFile(path, data, bytes)) {
        return Fail(kExitRuntime, "writing output file '%s' failed (does the directory exist?)",
                    path);
      }
    }
  }

  if (etdump != nullptr) {
    rt::Result<rt::Span<const uint8_t>> etdp = etdump->Finish();
    if (!etdp.ok()) return Fail(kExitRuntime, "finishing the ETDump: %s", ErrorText(etdp.error()));
    if (!WriteHostFile(args.etdump, etdp->data(), etdp->size())) {
      return Fail(kExitRuntime, "writing ETDump '%s' failed", args.etdump);
    }
    if (etdump->dropped_events() > 0) {
      printf("etdump: %lu events dropped (buffer full)\n", U(etdump->dropped_events()));
    }
  }

  printf("memory: RAM pool %lu of %lu bytes used, PSRAM %lu of %lu; persistent %lu, arena %s\n",
         U(memory.ram_used()), U(memory.ram_capacity()), U(memory.psram_used()),
         U(memory.psram_capacity()), U(method->persistent_bytes()),
         *num_planned > 0 && memory.InRam(planned[0].data()) ? "in RAM" : "in PSRAM");
  const char* verdict = args.num_expected == 0 ? "UNVERIFIED" : all_pass ? "PASS" : "FAIL";
  const uint64_t ns = rt_pal_ticks_to_ns(ticks);
  if (args.icount_shift >= 0) {
    printf("result: %s ticks %llu ns %llu instructions %llu (per inference, icount shift %d)\n",
           verdict, static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(ns),
           static_cast<unsigned long long>(ns >> args.icount_shift), args.icount_shift);
  } else {
    printf("result: %s ticks %llu ns %llu (per inference, no icount: host time)\n", verdict,
           static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(ns));
  }
  return all_pass ? kExitPass : kExitMismatch;
}

}  // namespace
}  // namespace boardlab::firmware

int main(int argc, char** argv) {
  boardlab::firmware::Args args;
  int exit_code = 0;
  if (argc == 2 && argv[1][0] == '@') {
    if (!boardlab::firmware::ReadArgsFile(argv[1] + 1, argc, argv, exit_code)) return exit_code;
  }
  if (!boardlab::firmware::ParseArgs(argc, argv, args, exit_code)) return exit_code;
  const int code = boardlab::firmware::Run(args);
  fflush(stdout);
  return code;
}
