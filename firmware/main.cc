// boardlab-firmware (the semihosting build): runs one .pte artifact on a Cortex-M33 (QEMU
// mps2-an505) with the portable runtime, the way boardlab-run does on the host, with every file
// going over semihosting. The running itself is firmware/runner.h, shared with the board-link
// build (main_link.cc).
//
//   boardlab-firmware ARTIFACT.pte [--input FILE|random:SEED]... [--expected FILE]... [--atol N]
//                     [--etdump OUT.etdp] [--outputs DIR] [--iterations N] [--icount-shift N]
//   boardlab-firmware ARTIFACT.pte --cases FILE --case-results FILE [the options above but
//                     --input and --expected]     (many cases on one load: CaseReader below)
//   boardlab-firmware @ARGS_FILE          (the same arguments, one per line)
//
// Arguments come from `-semihosting-config arg=...`; firmware/run-qemu.sh writes them to a file
// and passes @FILE, because the semihosting command line is limited to 255 characters. The
// artifact, inputs and expected outputs go to PSRAM; the planned buffers, the runtime's
// persistent and temp pools go to the RAM pool when they fit there, else PSRAM
// (firmware/board_memory.h). A model that needs more
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

#include "firmware/an505_platform.h"
#include "firmware/board_memory.h"
#include "firmware/runner.h"
#include "runtime/platform/platform.h"

namespace boardlab::firmware {
namespace {

constexpr size_t kMaxFiles = kMaxTensors;
constexpr size_t kMaxArgs = 64;

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
  int icount_shift = -1;               // -1: not run under -icount, instructions unknown
  const char* cases = nullptr;         // --cases FILE: many cases on one load (see CaseReader)
  const char* case_results = nullptr;  // --case-results FILE: one line per case
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
              "[--atol N] [--etdump OUT] [--outputs DIR] [--iterations N] [--icount-shift N] "
              "[--cases FILE --case-results FILE]",
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
    } else if (strcmp(a, "--cases") == 0) {
      args.cases = v;
    } else if (strcmp(a, "--case-results") == 0) {
      args.case_results = v;
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
  if ((args.cases != nullptr) != (args.case_results != nullptr) ||
      (args.cases != nullptr && args.num_inputs + args.num_expected > 0)) {
    exit_code = Usage("--cases and --case-results go together, without --input or --expected");
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

// newlib as Debian builds it has no C99 size_t printf format (%zu prints literally), so sizes
// are printed as unsigned long, which is as wide as size_t on this target.
unsigned long U(size_t v) { return static_cast<unsigned long>(v); }

bool IsRandomSpec(const char* spec) { return strncmp(spec, "random:", 7) == 0; }

// The early "does not fit" check, before any byte is read: artifact, files and pools alone.
int DoesNotFit(size_t artifact, size_t io, bool etdump) {
  const BoardMemory& m = BoardMemory::Get();
  const size_t pools = RunnerPoolBytes(etdump);
  return Fail(kExitRuntime,
              "does not fit: needs %lu bytes, board has %lu (artifact %lu + planned buffers %lu + "
              "runtime pools %lu + I/O %lu; RAM pool %lu + PSRAM %lu)",
              U(artifact + pools + io), U(m.CapacityBytes()), U(artifact), U(0ul), U(pools), U(io),
              U(m.ram_capacity()), U(m.psram_capacity()));
}

// Reads host file `path` (of `size` bytes) into board memory; the exit code on failure.
bool LoadFile(const char* path, size_t size, const char* what, Bytes* out, int& exit_code) {
  uint8_t* data = BoardMemory::Get().Allocate(size, BoardMemory::kBulk);
  if (data == nullptr) {
    exit_code = Fail(kExitRuntime, "does not fit: %s '%s' needs %lu bytes", what, path, U(size));
    return false;
  }
  if (!ReadHostFile(path, data, size)) {
    exit_code = Fail(kExitUsage, "reading %s '%s': short read", what, path);
    return false;
  }
  *out = {data, size};
  return true;
}

// Prints the output lines (after `indent`) and writes the output files to `outputs_dir` (null:
// none); false (with exit_code) on a write error.
bool ReportOutputs(const char* outputs_dir, const char* indent, const RunnerResult& result,
                   int& exit_code) {
  for (size_t i = 0; i < result.num_outputs; ++i) {
    const OutputResult& o = result.outputs[i];
    printf("%soutput %lu: %lu bytes fnv1a32 %08lx", indent, U(i), U(o.bytes.size),
           static_cast<unsigned long>(o.fnv1a32));
    if (!o.checked) {
      printf("\n");
    } else if (!o.comparable) {
      printf(" FAIL: %s\n", o.error_text);
    } else {
      printf(" %s: max abs diff %g, %lu of %lu elements outside atol\n", o.pass ? "pass" : "FAIL",
             o.max_abs_diff, U(o.mismatches), U(o.elements));
    }
    if (outputs_dir != nullptr) {
      char path[512];
      snprintf(path, sizeof(path), "%s/output%lu.bin", outputs_dir, U(i));
      if (!WriteHostFile(path, o.bytes.data, o.bytes.size)) {
        exit_code =
            Fail(kExitRuntime, "writing output file '%s' failed (does the directory exist?)", path);
        return false;
      }
    }
  }
  return true;
}

// The verdict word of a run's or a case's result line. NO_OUTPUT: the last inference ended
// early (a streaming op waits for more input), so its outputs were not compared.
const char* VerdictWord(const RunnerResult& result) {
  if (result.no_output) return "NO_OUTPUT";
  return !result.verified ? "UNVERIFIED" : result.pass ? "PASS" : "FAIL";
}

// "ticks T ns N[ instructions I]" of a mean of `ticks`.
void PrintTime(uint64_t ticks, int icount_shift) {
  const uint64_t ns = rt_pal_ticks_to_ns(ticks);
  printf("ticks %llu ns %llu", static_cast<unsigned long long>(ticks),
         static_cast<unsigned long long>(ns));
  if (icount_shift >= 0)
    printf(" instructions %llu", static_cast<unsigned long long>(ns >> icount_shift));
}

// The inferences of `iterations` a streaming op ended early (they ran part of the chain).
unsigned long EarlyInferences(const RunnerResult& result, int iterations) {
  const size_t runs = static_cast<size_t>(iterations);
  return U(runs - (result.inferences_with_output < runs ? result.inferences_with_output : runs));
}

// The result line of a run or a case: its verdict and the mean time of its inferences that
// produced output, then apart that of those a streaming op ended early:
//   result: PASS ticks T ns N; ended early: 1 inference, ticks T ns N (per inference, ...)
// When none produced output there is no inference time: "result: NO_OUTPUT no inference
// produced output; ended early: ...".
void PrintTimes(const char* prefix, const RunnerResult& result, int iterations, int icount_shift) {
  printf("%s%s ", prefix, VerdictWord(result));
  if (result.inferences_with_output > 0) {
    PrintTime(result.output_mean_ticks, icount_shift);
  } else {
    printf("no inference produced output");
  }
  const unsigned long early = EarlyInferences(result, iterations);
  if (early > 0) {
    printf("; ended early: %lu %s, ", early, early == 1 ? "inference" : "inferences");
    PrintTime(result.early_mean_ticks, icount_shift);
  }
  if (icount_shift >= 0) {
    printf(" (per inference, icount shift %d)\n", icount_shift);
  } else {
    printf(" (per inference, no icount: host time)\n");
  }
}

// --cases FILE: the cases, read one at a time while they run, so that only one case's files are
// in board memory. boardlab-run writes the file (runtime/cli/qemu_board.cc), one item a line:
//   case NAME
//   input PATH            (or input random:SEED; one line per model input, in order)
//   expected PATH         (one per output, in order; none: nothing to compare)
// --case-results FILE gets one line per case, fields separated by tabs:
//   NAME  EXIT (0, 1, or no_output: the case's last inference ended early, nothing was
//   checked)  OUTPUT_MEAN_TICKS  NS (of the inferences that produced output; 0 when none did)
//   EARLY_INFERENCES  EARLY_MEAN_TICKS  EARLY_NS (those a streaming op ended early; 0 0 0 when
//   none did)  then per output: - (not checked), or
//   pass|fail:MAX_ABS_DIFF:MISMATCHES:ELEMENTS, or error
// Outputs go to OUTPUTS_DIR/NAME/output<i>.bin (the host makes the directories).
class CaseReader {
 public:
  static constexpr size_t kMaxLine = 1024;

  CaseReader(const Args& args, FILE* cases, FILE* results)
      : args_(args), cases_(cases), results_(results) {}

  static int Next(void* self, size_t index, RunnerCase* out, RunnerResult* result) {
    return static_cast<CaseReader*>(self)->ReadCase(index, out, result);
  }
  static int Done(void* self, size_t, RunnerResult* result) {
    return static_cast<CaseReader*>(self)->Report(*result);
  }

 private:
  // The next line without its newline; false at the end of the file.
  bool ReadLine(RunnerResult* result, int& code) {
    if (fgets(line_, sizeof(line_), cases_) == nullptr) return false;
    const size_t n = strlen(line_);
    if (n > 0 && line_[n - 1] == '\n') {
      line_[n - 1] = '\0';
    } else if (!feof(cases_)) {
      code = FailCase(result, kExitUsage, "a line of the cases file is longer than %lu bytes",
                      U(kMaxLine - 2));
      return false;
    }
    return true;
  }

  static int FailCase(RunnerResult* result, int code, const char* format, ...)
      __attribute__((format(printf, 3, 4))) {
    va_list list;
    va_start(list, format);
    vsnprintf(result->message, sizeof(result->message), format, list);
    va_end(list);
    return code;
  }

  // One "input X" or "expected X" line of the current case, loaded into board memory.
  int AddFile(const char* key, const char* value, RunnerCase* out, RunnerResult* result) {
    const bool input = strcmp(key, "input") == 0;
    size_t& n = input ? out->num_inputs : out->num_expected;
    if (n == kMaxTensors) {
      return FailCase(result, kExitUsage, "case '%s': more than %lu files", name_, U(kMaxTensors));
    }
    if (input && IsRandomSpec(value)) {
      out->inputs[n].random = true;
      out->inputs[n++].seed = strtoull(value + 7, nullptr, 10);
      return kExitPass;
    }
    const long size = HostFileSize(value);
    if (size < 0) return FailCase(result, kExitUsage, "reading file '%s': cannot open it", value);
    uint8_t* data = BoardMemory::Get().Allocate(static_cast<size_t>(size), BoardMemory::kBulk);
    if (data == nullptr) {
      return FailCase(result, kExitRuntime, "does not fit: case '%s' file '%s' needs %lu bytes",
                      name_, value, U(static_cast<size_t>(size)));
    }
    if (!ReadHostFile(value, data, static_cast<size_t>(size))) {
      return FailCase(result, kExitUsage, "reading file '%s': short read", value);
    }
    Bytes& bytes = input ? out->inputs[n].bytes : out->expected[n];
    bytes = {data, static_cast<size_t>(size)};
    ++n;
    return kExitPass;
  }

  int ReadCase(size_t index, RunnerCase* out, RunnerResult* result) {
    int code = kExitPass;
    if (index == 0 && !ReadLine(result, code)) {
      return code != kExitPass ? code : FailCase(result, kExitUsage, "the cases file is empty");
    }
    if (at_end_) return kCaseSourceEnd;
    if (strncmp(line_, "case ", 5) != 0) {
      return FailCase(result, kExitUsage, "cases file: expected 'case NAME', got '%s'", line_);
    }
    snprintf(name_, sizeof(name_), "%s", line_ + 5);
    for (;;) {
      if (!ReadLine(result, code)) {
        at_end_ = true;
        return code;
      }
      if (strncmp(line_, "case ", 5) == 0) return kExitPass;  // the next case's; kept in line_
      char* space = strchr(line_, ' ');
      if (space == nullptr) {
        return FailCase(result, kExitUsage, "cases file: bad line '%s'", line_);
      }
      *space = '\0';
      if (strcmp(line_, "input") != 0 && strcmp(line_, "expected") != 0) {
        return FailCase(result, kExitUsage, "cases file: unknown item '%s'", line_);
      }
      if ((code = AddFile(line_, space + 1, out, result)) != kExitPass) return code;
    }
  }

  int Report(const RunnerResult& result) {
    char prefix[160];
    snprintf(prefix, sizeof(prefix), "case %s: ", name_);
    PrintTimes(prefix, result, args_.iterations, args_.icount_shift);
    char dir[400] = {};
    if (args_.outputs_dir != nullptr) snprintf(dir, sizeof(dir), "%s/%s", args_.outputs_dir, name_);
    int code = kExitPass;
    if (!ReportOutputs(args_.outputs_dir != nullptr ? dir : nullptr, "  ", result, code)) {
      return code;
    }
    if (result.no_output) {
      fprintf(results_, "%s\tno_output", name_);
    } else {
      fprintf(results_, "%s\t%d", name_, result.pass ? kExitPass : kExitMismatch);
    }
    fprintf(results_, "\t%llu\t%llu\t%lu\t%llu\t%llu",
            static_cast<unsigned long long>(result.output_mean_ticks),
            static_cast<unsigned long long>(rt_pal_ticks_to_ns(result.output_mean_ticks)),
            EarlyInferences(result, args_.iterations),
            static_cast<unsigned long long>(result.early_mean_ticks),
            static_cast<unsigned long long>(rt_pal_ticks_to_ns(result.early_mean_ticks)));
    for (size_t i = 0; i < result.num_outputs; ++i) {
      const OutputResult& o = result.outputs[i];
      if (!o.checked) {
        fputs("\t-", results_);
      } else if (!o.comparable) {
        fputs("\terror", results_);
      } else {
        fprintf(results_, "\t%s:%.17g:%lu:%lu", o.pass ? "pass" : "fail", o.max_abs_diff,
                U(o.mismatches), U(o.elements));
      }
    }
    fputc('\n', results_);
    return kExitPass;
  }

  const Args& args_;
  FILE* cases_;
  FILE* results_;
  char line_[kMaxLine] = {};
  char name_[136] = {};
  bool at_end_ = false;
};

int Run(const Args& args) {
  rt_pal_init();
  BoardMemory& memory = BoardMemory::Get();
  int exit_code = kExitPass;

  // Sizes first, so that a model too big for the board is refused before any byte is read.
  const long artifact_size = HostFileSize(args.artifact);
  if (artifact_size < 0) {
    return Fail(kExitUsage, "reading artifact '%s': cannot open it", args.artifact);
  }
  long sizes[2 * kMaxFiles] = {};
  size_t io = 0;
  for (size_t i = 0; i < args.num_inputs + args.num_expected; ++i) {
    const bool input = i < args.num_inputs;
    const char* path = input ? args.inputs[i] : args.expected[i - args.num_inputs];
    if (input && IsRandomSpec(path)) continue;  // sized by its tensor, made by the runner
    sizes[i] = HostFileSize(path);
    if (sizes[i] < 0) return Fail(kExitUsage, "reading file '%s': cannot open it", path);
    io += BoardMemory::Rounded(static_cast<size_t>(sizes[i]));
  }
  const size_t artifact_bytes = BoardMemory::Rounded(static_cast<size_t>(artifact_size));
  if (artifact_bytes + RunnerPoolBytes(args.etdump != nullptr) + io > memory.CapacityBytes()) {
    return DoesNotFit(artifact_bytes, io, args.etdump != nullptr);
  }

  RunnerRequest request;
  if (!LoadFile(args.artifact, static_cast<size_t>(artifact_size), "artifact", &request.artifact,
                exit_code)) {
    return exit_code;
  }
  for (size_t i = 0; i < args.num_inputs; ++i) {
    InputSpec& spec = request.inputs[i];
    if (IsRandomSpec(args.inputs[i])) {
      spec.random = true;
      spec.seed = strtoull(args.inputs[i] + 7, nullptr, 10);
    } else if (!LoadFile(args.inputs[i], static_cast<size_t>(sizes[i]), "input file", &spec.bytes,
                         exit_code)) {
      return exit_code;
    }
  }
  for (size_t i = 0; i < args.num_expected; ++i) {
    if (!LoadFile(args.expected[i], static_cast<size_t>(sizes[args.num_inputs + i]),
                  "expected file", &request.expected[i], exit_code)) {
      return exit_code;
    }
  }
  request.num_inputs = args.num_inputs;
  request.num_expected = args.num_expected;
  request.atol = args.atol;
  request.iterations = args.iterations;
  request.etdump = args.etdump != nullptr;
  request.clock = BoardClockRecord(args.icount_shift);
  request.preallocated_artifact = artifact_bytes;
  request.preallocated_io = io;

  // --cases: the cases come from the file while they run; their results go to --case-results.
  FILE* cases = nullptr;
  FILE* results = nullptr;
  if (args.cases != nullptr) {
    cases = fopen(args.cases, "rb");
    if (cases == nullptr) return Fail(kExitUsage, "reading '%s': cannot open it", args.cases);
    results = fopen(args.case_results, "wb");
    if (results == nullptr) {
      fclose(cases);
      return Fail(kExitRuntime, "writing '%s': cannot open it", args.case_results);
    }
  }
  CaseReader reader(args, cases, results);
  CaseSource source;
  source.next = &CaseReader::Next;
  source.done = &CaseReader::Done;
  source.context = &reader;
  if (args.cases != nullptr) request.cases = &source;

  static RunnerResult result;
  const int code = RunModel(request, &result);
  if (cases != nullptr) {
    fclose(cases);
    if (fclose(results) != 0 && code <= kExitMismatch) {
      return Fail(kExitRuntime, "writing '%s' failed", args.case_results);
    }
  }
  if (code > kExitMismatch) {
    // The runner does not know file names; name the artifact as the host tools do.
    static const char kInvalid[] = "invalid artifact: ";
    if (strncmp(result.message, kInvalid, sizeof(kInvalid) - 1) == 0) {
      return Fail(code, "invalid artifact '%s': %s", args.artifact,
                  result.message + sizeof(kInvalid) - 1);
    }
    return Fail(code, "%s", result.message);
  }
  if (args.cases == nullptr && !ReportOutputs(args.outputs_dir, "", result, exit_code)) {
    return exit_code;
  }
  if (args.etdump != nullptr) {
    if (!WriteHostFile(args.etdump, result.etdump.data, result.etdump.size)) {
      return Fail(kExitRuntime, "writing ETDump '%s' failed", args.etdump);
    }
    if (result.etdump_dropped_events > 0) {
      printf("etdump: %lu events dropped (buffer full)\n", U(result.etdump_dropped_events));
    }
  }

  printf("memory: RAM pool %lu of %lu bytes used, PSRAM %lu of %lu; persistent %lu, arena %s\n",
         U(memory.ram_used()), U(memory.ram_capacity()), U(memory.psram_used()),
         U(memory.psram_capacity()), U(result.persistent_bytes),
         result.arena_in_ram ? "in RAM" : "in PSRAM");
  if (args.cases != nullptr) {
    const bool none = result.cases_run > 0 && result.cases_no_output == result.cases_run;
    printf("result: %s (%lu of %lu cases passed",
           code != kExitPass ? "FAIL"
           : none            ? "NO_OUTPUT"
                             : "PASS",
           U(result.cases_passed), U(result.cases_run));
    if (result.cases_no_output > 0) printf(", %lu no output yet", U(result.cases_no_output));
    printf(")\n");
    return code;
  }
  if (result.no_output) {
    printf(
        "no output yet: a streaming op ended the last inference early (%lu of %d inferences "
        "produced output); the outputs were not checked\n",
        U(result.inferences_with_output), args.iterations);
  }
  PrintTimes("result: ", result, args.iterations, args.icount_shift);
  return code;
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
