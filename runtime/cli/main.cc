// boardlab-run: loads a .pte artifact, runs it on the host (CPU kernels + the software NPU
// backend), checks the outputs against expected bytes and prints a per-op profile.
//
//   boardlab-run model.pte --input in.bin --expected out.bin --atol 1 --profile table
//
// Exit codes: 0 pass (or nothing to verify), 1 outputs mismatch, 2 usage (bad options, unreadable
// or wrongly sized input/expected files), 3 invalid artifact, 4 runtime error.
//
// random:SEED inputs are bytes of the splitmix64 stream seeded with SEED (each 64-bit output
// taken little-endian), so any tool can reproduce them.

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"
#include "runtime/cli/profile_collector.h"
#include "runtime/core/error.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/platform/platform.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "runtime/sim/sim_clock.h"
#include "runtime/timing/timing_model.h"
#include "runtime/verify/output_verifier.h"

namespace {

namespace rt = boardlab::runtime;
using nlohmann::json;

constexpr int kExitPass = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInvalidArtifact = 3;
constexpr int kExitRuntime = 4;

struct Args {
  std::string artifact;
  std::vector<std::string> inputs;
  std::vector<std::string> expected;
  double atol = 0;
  int iterations = 1;
  std::string etdump;
  std::string outputs_dir;
  std::string profile = "table";
  std::string clock = "sim";
  std::string target;
  size_t persistent_bytes = 16u << 20;
  size_t temp_bytes = 4u << 20;
  size_t etdump_bytes = 4u << 20;
};

int Fail(int code, const std::string& message) {
  std::cerr << "boardlab-run: " << message << "\n";
  return code;
}

std::string RuntimeError(rt::Error e) {
  return std::string(rt::ToString(e)) + ": " + rt::LastErrorMessage();
}

bool ReadFile(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

// Heap memory at a 64-byte boundary (Program::Load needs max_align_t, kernels like 16).
class Buffer {
 public:
  explicit Buffer(size_t size) : storage_(size + 64), size_(size) {
    const auto p = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - p % 64) % 64);
  }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  std::vector<uint8_t> storage_;
  uint8_t* data_;
  size_t size_;
};

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> RandomBytes(uint64_t seed, size_t size) {
  std::vector<uint8_t> out(size);
  uint64_t state = seed;
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t v = SplitMix64(state);
    for (size_t b = 0; b < 8 && i + b < size; ++b) out[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return out;
}

uint32_t Fnv1a32(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

const char* TypeName(rt::ScalarType t) {
  switch (t) {
    case rt::ScalarType::kByte:
      return "uint8";
    case rt::ScalarType::kChar:
      return "int8";
    case rt::ScalarType::kShort:
      return "int16";
    case rt::ScalarType::kInt:
      return "int32";
    case rt::ScalarType::kLong:
      return "int64";
    case rt::ScalarType::kFloat:
      return "float32";
    case rt::ScalarType::kBool:
      return "bool";
  }
  return "?";
}

std::vector<int32_t> Shape(const rt::TensorView& t) { return {t.dims, t.dims + t.rank}; }

std::string ShapeString(const rt::TensorView& t) {
  std::string s = "[";
  for (int32_t i = 0; i < t.rank; ++i) s += (i ? "," : "") + std::to_string(t.dims[i]);
  return s + "]";
}

// The first `n` elements as numbers (JSON, so floats stay floats).
json FirstValues(const rt::TensorView& t, size_t n) {
  json values = json::array();
  n = std::min<size_t>(n, static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < n; ++i) {
    switch (t.type) {
      case rt::ScalarType::kByte:
      case rt::ScalarType::kBool:
        values.push_back(t.As<uint8_t>()[i]);
        break;
      case rt::ScalarType::kChar:
        values.push_back(t.As<int8_t>()[i]);
        break;
      case rt::ScalarType::kShort:
        values.push_back(t.As<int16_t>()[i]);
        break;
      case rt::ScalarType::kInt:
        values.push_back(t.As<int32_t>()[i]);
        break;
      case rt::ScalarType::kLong:
        values.push_back(t.As<int64_t>()[i]);
        break;
      case rt::ScalarType::kFloat:
        values.push_back(t.As<float>()[i]);
        break;
    }
  }
  return values;
}

// Reads the "timing" object of a target spec (compiler/targets/*.json), the same fields the
// compiler's cost model reads; fields absent keep TimingParams' defaults.
bool ReadTimingParams(const std::string& path, rt::timing::TimingParams& p, std::string& error) {
  std::vector<uint8_t> bytes;
  if (!ReadFile(path, bytes)) {
    error = "reading target file '" + path + "': cannot open it";
    return false;
  }
  json doc = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("timing") ||
      !doc["timing"].is_object()) {
    error = "reading target file '" + path + "': not JSON with a \"timing\" object";
    return false;
  }
  const json& t = doc["timing"];
  const std::pair<const char*, double rt::timing::TimingParams::*> doubles[] = {
      {"cpu_clock_hz", &rt::timing::TimingParams::cpu_clock_hz},
      {"npu_clock_hz", &rt::timing::TimingParams::npu_clock_hz},
      {"npu_kernel_setup_cycles", &rt::timing::TimingParams::npu_kernel_setup_cycles},
      {"npu_row_overhead_cycles", &rt::timing::TimingParams::npu_row_overhead_cycles},
      {"sram_bytes_per_cycle", &rt::timing::TimingParams::sram_bytes_per_cycle},
      {"flash_bytes_per_second", &rt::timing::TimingParams::flash_bytes_per_second},
      {"flash_transfer_setup_cycles", &rt::timing::TimingParams::flash_transfer_setup_cycles},
      {"cpu_cycles_per_mac_conv", &rt::timing::TimingParams::cpu_cycles_per_mac_conv},
      {"cpu_cycles_per_mac_depthwise", &rt::timing::TimingParams::cpu_cycles_per_mac_depthwise},
      {"cpu_cycles_per_mac_fc", &rt::timing::TimingParams::cpu_cycles_per_mac_fc},
      {"cpu_cycles_per_element_elementwise",
       &rt::timing::TimingParams::cpu_cycles_per_element_elementwise},
      {"cpu_cycles_per_element_move", &rt::timing::TimingParams::cpu_cycles_per_element_move},
      {"cpu_cycles_per_element_lut", &rt::timing::TimingParams::cpu_cycles_per_element_lut},
      {"cpu_kernel_call_cycles", &rt::timing::TimingParams::cpu_kernel_call_cycles},
  };
  for (const auto& [key, member] : doubles) {
    if (t.contains(key) && t[key].is_number()) p.*member = t[key].get<double>();
  }
  if (t.contains("npu_macs_per_pipe") && t["npu_macs_per_pipe"].is_number_integer()) {
    p.npu_macs_per_pipe = t["npu_macs_per_pipe"].get<int32_t>();
  }
  if (t.contains("npu_pipes") && t["npu_pipes"].is_number_integer()) {
    p.npu_pipes = t["npu_pipes"].get<int32_t>();
  }
  return true;
}

struct ProfileRow {
  size_t instruction = 0;
  std::string op;
  bool npu = false;
  double ticks = 0;    // average per iteration
  double cycles = -1;  // -1 = unknown
  double us = 0;
  std::vector<ProfileRow> kernels;  // NPU kernels inside a delegate call (op = "kernel <id>")
};

struct Profile {
  std::string clock;
  double total_us = 0;
  double total_cycles = -1;
  std::vector<ProfileRow> rows;
};

std::string OpName(const rt::InstructionInfo& info) {
  std::string name = info.name == nullptr ? "?" : info.name;
  if (info.kind == rt::InstructionKind::kDelegateCall) {
    return "delegate " + std::to_string(info.delegate_index) + " (" + name + ")";
  }
  if (name.rfind("boardlab::", 0) == 0) name = name.substr(10);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".out") == 0) {
    name.resize(name.size() - 4);
  }
  return name;
}

Profile BuildProfile(const rt::Method& method, const boardlab::run::ProfileCollector& collector,
                     bool sim, const rt::timing::TimingParams& params) {
  Profile profile;
  profile.clock = sim ? "sim" : "wall";
  const auto& runs = collector.runs();
  const double n = runs.empty() ? 1.0 : static_cast<double>(runs.size());
  // Ticks per instruction (and per NPU kernel id inside it), summed over runs.
  std::map<size_t, double> instr_ticks;
  std::map<size_t, std::map<int32_t, double>> kernel_ticks;
  double total_ticks = 0;
  for (const auto& run : runs) {
    for (const boardlab::run::CollectedEvent& e : run) {
      if (e.name.empty()) {
        kernel_ticks[static_cast<size_t>(e.instruction)][e.delegate_id] += e.duration();
      } else if (e.name == "OPERATOR_CALL" || e.name == "DELEGATE_CALL") {
        instr_ticks[static_cast<size_t>(e.instruction)] += e.duration();
      } else if (e.name == "Method::execute") {
        total_ticks += e.duration();
      }
    }
  }
  // Sim ticks are CPU cycles; wall ticks are the platform's (ns on POSIX).
  const auto to_us = [&](double ticks) {
    return sim ? ticks / params.cpu_clock_hz * 1e6
               : static_cast<double>(rt_pal_ticks_to_ns(static_cast<uint64_t>(ticks))) / 1e3;
  };
  for (size_t i = 0; i < method.num_instructions(); ++i) {
    const rt::InstructionInfo info = method.instruction_info(i);
    if (info.kind != rt::InstructionKind::kKernelCall &&
        info.kind != rt::InstructionKind::kDelegateCall) {
      continue;
    }
    ProfileRow row;
    row.instruction = i;
    row.op = OpName(info);
    row.npu = info.kind == rt::InstructionKind::kDelegateCall;
    row.ticks = instr_ticks[i] / n;
    row.us = to_us(row.ticks);
    if (sim) {
      row.cycles = row.ticks;
    } else if (row.npu && method.LastDelegateCycles(i) > 0) {
      row.cycles = static_cast<double>(method.LastDelegateCycles(i));  // simulated NPU cycles
    }
    for (const auto& [id, ticks] : kernel_ticks[i]) {
      ProfileRow k;
      k.instruction = i;
      k.op = "kernel " + std::to_string(id);
      k.npu = true;
      k.ticks = ticks / n;
      // Without the sim clock the backend stamps its own NPU cycle counter.
      k.cycles = k.ticks;
      k.us = sim ? to_us(k.ticks) : k.ticks / params.npu_clock_hz * 1e6;
      row.kernels.push_back(k);
    }
    profile.rows.push_back(row);
  }
  profile.total_us = to_us(total_ticks / n);
  if (sim) profile.total_cycles = total_ticks / n;
  return profile;
}

void PrintProfileTable(const Profile& profile, int iterations) {
  double sum_us = 0;
  for (const ProfileRow& r : profile.rows) sum_us += r.us;
  std::printf("profile (%s clock, average of %d iteration%s):\n", profile.clock.c_str(), iterations,
              iterations == 1 ? "" : "s");
  std::printf("  %-4s %-36s %-4s %14s %12s %7s\n", "#", "op", "unit", "cycles", "us", "%");
  const auto print = [&](const ProfileRow& r, const std::string& label, const char* index) {
    const std::string cycles =
        r.cycles < 0 ? "-" : std::to_string(static_cast<uint64_t>(r.cycles + 0.5));
    std::printf("  %-4s %-36s %-4s %14s %12.2f %6.1f%%\n", index, label.c_str(),
                r.npu ? "NPU" : "CPU", cycles.c_str(), r.us,
                sum_us > 0 ? 100.0 * r.us / sum_us : 0.0);
  };
  for (const ProfileRow& r : profile.rows) {
    print(r, r.op, std::to_string(r.instruction).c_str());
    for (const ProfileRow& k : r.kernels) print(k, "  " + k.op, "");
  }
  const std::string total_cycles =
      profile.total_cycles < 0 ? "-"
                               : std::to_string(static_cast<uint64_t>(profile.total_cycles + 0.5));
  std::printf("  %-4s %-36s %-4s %14s %12.2f\n", "", "total (Method::execute)", "",
              total_cycles.c_str(), profile.total_us);
}

json ProfileJson(const Profile& profile, int iterations) {
  const auto row_json = [](const ProfileRow& r) {
    json j = {{"instruction", r.instruction},
              {"op", r.op},
              {"unit", r.npu ? "NPU" : "CPU"},
              {"us", r.us}};
    j["cycles"] = r.cycles < 0 ? json(nullptr) : json(static_cast<uint64_t>(r.cycles + 0.5));
    return j;
  };
  json rows = json::array();
  for (const ProfileRow& r : profile.rows) {
    json j = row_json(r);
    json kernels = json::array();
    for (const ProfileRow& k : r.kernels) kernels.push_back(row_json(k));
    j["npu_kernels"] = kernels;
    rows.push_back(j);
  }
  json out = {{"clock", profile.clock},
              {"iterations", iterations},
              {"total_us", profile.total_us},
              {"ops", rows}};
  out["total_cycles"] = profile.total_cycles < 0
                            ? json(nullptr)
                            : json(static_cast<uint64_t>(profile.total_cycles + 0.5));
  return out;
}

void AddOptions(CLI::App& app, Args& args) {
  app.add_option("artifact", args.artifact, ".pte artifact to run")->required();
  app.add_option("--input", args.inputs,
                 "input i (in order): FILE.bin with the tensor's raw bytes, or random:SEED "
                 "(splitmix64 bytes); inputs not given are random:<index>");
  app.add_option("--expected", args.expected, "expected raw bytes of output i (in order)");
  app.add_option("--atol", args.atol, "absolute tolerance per element (int8: |a-b| <= atol)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", args.iterations, "runs to average the profile over")
      ->check(CLI::PositiveNumber);
  app.add_option("--etdump", args.etdump, "write an ExecuTorch ETDump (.etdp) here");
  app.add_option("--outputs", args.outputs_dir, "write raw outputs to DIR/output<i>.bin");
  app.add_option("--profile", args.profile, "profile format: table or json")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--clock", args.clock,
                 "profile clock: sim (simulated RT700 cycles) or wall (host time)")
      ->check(CLI::IsMember({"sim", "wall"}));
  app.add_option("--target", args.target,
                 "target spec JSON (compiler/targets/imxrt700.json) for the timing model");
  app.add_option("--persistent-bytes", args.persistent_bytes, "persistent memory pool size");
  app.add_option("--temp-bytes", args.temp_bytes, "kernel scratch pool size");
  app.add_option("--etdump-bytes", args.etdump_bytes, "ETDump buffer size");
}

// The runtime library is built without RTTI, so NpuBackend and EtdumpWriter have no typeinfo
// for UBSan's vptr check to reference; the check is off for the code that owns them.
__attribute__((no_sanitize("vptr"))) int Run(const Args& args) {
  rt_pal_init();
  std::vector<uint8_t> file;
  if (!ReadFile(args.artifact, file)) {
    return Fail(kExitUsage, "reading artifact '" + args.artifact + "': cannot open it");
  }
  Buffer artifact(file.size());
  std::copy(file.begin(), file.end(), artifact.data());
  rt::Result<rt::Program> program = rt::Program::Load({artifact.data(), artifact.size()});
  if (!program.ok()) {
    return Fail(kExitInvalidArtifact,
                "invalid artifact '" + args.artifact + "': " + RuntimeError(program.error()));
  }

  rt::timing::TimingParams params;
  if (!args.target.empty()) {
    std::string error;
    if (!ReadTimingParams(args.target, params, error)) return Fail(kExitUsage, error);
  }
  const bool sim = args.clock == "sim";
  boardlab::runtime::sim::SimClock sim_clock(params);
  rt::KernelLookupFn lookup = rt::FindKernel;
  rt::MethodOptions options;
  if (sim) {
    rt::sim::SimClock::Install(&sim_clock);
    rt::sim::SimKernelLookup::SetBase(rt::FindKernel);
    lookup = &rt::sim::SimKernelLookup::Find;
    options.clock = &rt::sim::SimClock::Read;
  }
  rt::npu::NpuBackend npu(params, sim ? &sim_clock : nullptr);
  rt::BackendRegistry backends;
  if (rt::Error e = backends.Register(&npu); e != rt::Error::kOk) {
    return Fail(kExitRuntime, RuntimeError(e));
  }

  // Memory: planned buffers exactly as the artifact says, pools as the options say.
  rt::Result<size_t> num_planned = program->NumPlannedBuffers("forward");
  if (!num_planned.ok()) {
    return Fail(kExitInvalidArtifact, "invalid artifact: " + RuntimeError(num_planned.error()));
  }
  std::vector<std::unique_ptr<Buffer>> planned_storage;
  std::vector<rt::Span<uint8_t>> planned;
  for (size_t i = 0; i < *num_planned; ++i) {
    rt::Result<size_t> size = program->PlannedBufferSize("forward", i);
    if (!size.ok()) {
      return Fail(kExitInvalidArtifact, "invalid artifact: " + RuntimeError(size.error()));
    }
    planned_storage.push_back(std::make_unique<Buffer>(*size));
    planned.emplace_back(planned_storage.back()->data(), *size);
  }
  Buffer persistent_pool(args.persistent_bytes);
  Buffer temp_pool(args.temp_bytes);
  rt::MemoryAllocator persistent(persistent_pool.data(), persistent_pool.size());
  rt::MemoryAllocator temp(temp_pool.data(), temp_pool.size());
  rt::MemoryManager memory(&persistent, {planned.data(), planned.size()}, &temp);

  std::unique_ptr<Buffer> etdump_buffer;
  std::unique_ptr<rt::etdump::EtdumpWriter> etdump;
  if (!args.etdump.empty()) {
    etdump_buffer = std::make_unique<Buffer>(args.etdump_bytes);
    etdump =
        std::make_unique<rt::etdump::EtdumpWriter>(etdump_buffer->data(), etdump_buffer->size());
  }
  boardlab::run::ProfileCollector collector(etdump.get());

  rt::Result<rt::Method> method =
      program->LoadMethod("forward", memory, backends, &collector, lookup, options);
  if (!method.ok()) {
    const rt::Error e = method.error();
    const bool bad_artifact =
        e == rt::Error::kInvalidProgram || e == rt::Error::kIncompatibleVersion;
    return Fail(bad_artifact ? kExitInvalidArtifact : kExitRuntime,
                "loading method 'forward': " + RuntimeError(e));
  }

  // Inputs.
  for (size_t i = 0; i < method->num_inputs(); ++i) {
    const rt::TensorView& t = *method->input(i);
    const size_t bytes = static_cast<size_t>(t.NumBytes());
    const std::string spec =
        i < args.inputs.size() ? args.inputs[i] : "random:" + std::to_string(i);
    std::vector<uint8_t> data;
    if (spec.rfind("random:", 0) == 0) {
      uint64_t seed = 0;
      try {
        seed = std::stoull(spec.substr(7));
      } catch (const std::exception&) {
        return Fail(kExitUsage, "input " + std::to_string(i) + ": bad seed in '" + spec + "'");
      }
      data = RandomBytes(seed, bytes);
    } else if (!ReadFile(spec, data)) {
      return Fail(kExitUsage, "reading input file '" + spec + "': cannot open it");
    }
    if (data.size() != bytes) {
      return Fail(kExitUsage, "input " + std::to_string(i) + " '" + spec + "' has " +
                                  std::to_string(data.size()) + " bytes, the tensor " +
                                  TypeName(t.type) + ShapeString(t) + " takes " +
                                  std::to_string(bytes));
    }
    if (rt::Error e = method->SetInput(i, data.data(), data.size()); e != rt::Error::kOk) {
      return Fail(kExitRuntime, RuntimeError(e));
    }
  }
  if (args.inputs.size() > method->num_inputs()) {
    return Fail(kExitUsage, std::to_string(args.inputs.size()) + " --input given, the model has " +
                                std::to_string(method->num_inputs()) + " inputs");
  }
  if (args.expected.size() > method->num_outputs()) {
    return Fail(kExitUsage, std::to_string(args.expected.size()) +
                                " --expected given, the model has " +
                                std::to_string(method->num_outputs()) + " outputs");
  }
  std::vector<std::vector<uint8_t>> expected(args.expected.size());
  for (size_t i = 0; i < args.expected.size(); ++i) {
    if (!ReadFile(args.expected[i], expected[i])) {
      return Fail(kExitUsage, "reading expected file '" + args.expected[i] + "': cannot open it");
    }
  }

  for (int it = 0; it < args.iterations; ++it) {
    if (rt::Error e = method->Execute(); e != rt::Error::kOk) {
      return Fail(kExitRuntime, "execute: " + RuntimeError(e));
    }
  }

  // Outputs, verification.
  json outputs = json::array();
  bool all_pass = true;
  for (size_t i = 0; i < method->num_outputs(); ++i) {
    const rt::TensorView& t = *method->GetOutput(i);
    const size_t bytes = static_cast<size_t>(t.NumBytes());
    const auto* data = static_cast<const uint8_t*>(t.data);
    char checksum[16];
    std::snprintf(checksum, sizeof(checksum), "%08" PRIx32, Fnv1a32(data, bytes));
    json o = {{"index", i},     {"type", TypeName(t.type)},   {"shape", Shape(t)},
              {"bytes", bytes}, {"first", FirstValues(t, 8)}, {"fnv1a32", checksum}};
    if (i < expected.size()) {
      rt::OutputComparison c;
      const rt::Error e =
          rt::CompareOutput(t, {expected[i].data(), expected[i].size()}, args.atol, &c);
      if (e != rt::Error::kOk) {
        o["verification"] = {{"pass", false}, {"error", rt::LastErrorMessage()}};
        all_pass = false;
      } else {
        o["verification"] = {{"pass", c.pass},
                             {"max_abs_diff", c.max_abs_diff},
                             {"mismatches", c.mismatches},
                             {"elements", c.num_elements}};
        all_pass = all_pass && c.pass;
      }
    }
    if (!args.outputs_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(args.outputs_dir, ec);
      const std::string path =
          (std::filesystem::path(args.outputs_dir) / ("output" + std::to_string(i) + ".bin"))
              .string();
      if (!WriteFile(path, data, bytes)) {
        return Fail(kExitRuntime, "writing output file '" + path + "' failed");
      }
      o["path"] = path;
    }
    outputs.push_back(o);
  }
  const std::string verdict = expected.empty() ? "unverified" : all_pass ? "pass" : "fail";

  if (etdump != nullptr) {
    rt::Result<rt::Span<const uint8_t>> bytes = etdump->Finish();
    if (!bytes.ok())
      return Fail(kExitRuntime, "finishing the ETDump: " + RuntimeError(bytes.error()));
    if (!WriteFile(args.etdump, bytes->data(), bytes->size())) {
      return Fail(kExitRuntime, "writing ETDump '" + args.etdump + "' failed");
    }
  }

  const Profile profile = BuildProfile(*method, collector, sim, params);
  if (args.profile == "json") {
    json doc = {{"artifact", args.artifact}, {"verdict", verdict},
                {"atol", args.atol},         {"persistent_bytes", method->persistent_bytes()},
                {"outputs", outputs},        {"profile", ProfileJson(profile, args.iterations)}};
    std::cout << doc.dump(2) << "\n";
  } else {
    if (verdict == "unverified") {
      std::printf("verdict: UNVERIFIED (no --expected outputs)\n");
    } else {
      std::printf("verdict: %s (atol %g)\n", verdict == "pass" ? "PASS" : "FAIL", args.atol);
    }
    std::printf("outputs:\n");
    for (const json& o : outputs) {
      std::string first;
      for (const json& v : o["first"]) first += (first.empty() ? "" : " ") + v.dump();
      std::printf("  output %zu: %s %s first [%s%s] fnv1a32 %s\n", o["index"].get<size_t>(),
                  o["type"].get<std::string>().c_str(), o["shape"].dump().c_str(), first.c_str(),
                  o["first"].size() < o["bytes"].get<size_t>() ? " ..." : "",
                  o["fnv1a32"].get<std::string>().c_str());
      if (o.contains("verification")) {
        const json& v = o["verification"];
        if (v.contains("error")) {
          std::printf("    FAIL: %s\n", v["error"].get<std::string>().c_str());
        } else {
          std::printf("    %s: max abs diff %g, %zu of %zu elements outside atol\n",
                      v["pass"].get<bool>() ? "pass" : "FAIL", v["max_abs_diff"].get<double>(),
                      v["mismatches"].get<size_t>(), v["elements"].get<size_t>());
        }
      }
    }
    PrintProfileTable(profile, args.iterations);
  }
  if (sim) rt::sim::SimClock::Install(nullptr);
  return verdict == "fail" ? kExitMismatch : kExitPass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"boardlab-run: run a boardlab .pte artifact on the host and check its outputs"};
  Args args;
  AddOptions(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return Run(args);
}
