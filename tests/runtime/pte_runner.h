#pragma once

// Runs a compiled .pte in this process the way boardlab-run does: the registered CPU kernels,
// the NPU backend (emulated engine) and memory sized from the program. For tests that compare
// whole-model outputs without starting a process per case.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/npu/npu_backend.h"
#include "tests/runtime/executor_test_support.h"

namespace boardlab::runtime::testing {

struct PteRun {
  Error error = Error::kOk;
  std::string message;                        // the runtime's last error text on failure
  std::vector<std::vector<uint8_t>> outputs;  // bytes of each method output
  // Per inference: whether it ran to the end (Method::produced_outputs); the outputs of one that
  // did not are copied all the same.
  std::vector<bool> produced;
};

/// Loads `pte` once and runs one inference per entry of `inferences` (each the bytes of every
/// method input, in order), so that variable tensors carry their state from one to the next.
/// `outputs` holds the outputs of every inference in turn (inference i's output k at
/// i * num_outputs + k). A failure leaves `error` and `message` set and `outputs` empty.
inline PteRun RunPteInferences(const std::vector<uint8_t>& pte,
                               const std::vector<std::vector<std::vector<uint8_t>>>& inferences) {
  PteRun run;
  auto fail = [&run](Error e) {
    run.error = e;
    run.message = LastErrorMessage();
    run.outputs.clear();
    return run;
  };
  AlignedBytes bytes(pte);
  Result<Program> program = Program::Load(bytes.span());
  if (!program.ok()) return fail(program.error());
  TestMemory memory(*program, 1 << 20, 1 << 20);
  npu::NpuBackend npu_backend(timing::TimingParams{});
  BackendRegistry registry;
  if (Error e = registry.Register(&npu_backend); e != Error::kOk) return fail(e);
  MemoryManager manager = memory.manager();
  Result<Method> method = program->LoadMethod("forward", manager, registry, nullptr, FindKernel);
  if (!method.ok()) return fail(method.error());
  for (const std::vector<std::vector<uint8_t>>& inputs : inferences) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (Error e = method->SetInput(i, inputs[i].data(), inputs[i].size()); e != Error::kOk) {
        return fail(e);
      }
    }
    if (Error e = method->Execute(); e != Error::kOk) return fail(e);
    run.produced.push_back(method->produced_outputs());
    for (size_t i = 0; i < method->num_outputs(); ++i) {
      const TensorView* out = method->GetOutput(i);
      const auto* data = static_cast<const uint8_t*>(out->data);
      run.outputs.emplace_back(data, data + out->NumBytes());
    }
  }
  return run;
}

/// Loads `pte`, sets `inputs` (bytes per method input, in order), executes once and copies the
/// outputs. A failure leaves `error` and `message` set and `outputs` empty.
inline PteRun RunPte(const std::vector<uint8_t>& pte,
                     const std::vector<std::vector<uint8_t>>& inputs) {
  return RunPteInferences(pte, {inputs});
}

/// `model` compiled (CPU only with `cpu_only`), or empty bytes and a test failure when it does
/// not compile.
inline std::vector<uint8_t> CompiledPte(const std::vector<uint8_t>& model, bool cpu_only = false) {
  compiler::CompileOptions options;
  options.cpu_only = cpu_only;
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? compiled->pte : std::vector<uint8_t>();
}

/// Compiles `model` with the default options (the NPU where the rules allow) and runs it; a
/// compile or run failure leaves `error` set.
inline PteRun CompileAndRunCase(const std::vector<uint8_t>& model,
                                const std::vector<std::vector<uint8_t>>& inputs,
                                std::string* error) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  if (!compiled.ok()) {
    *error = compiled.status().ToString();
    return {};
  }
  PteRun run = RunPte(compiled->pte, inputs);
  if (run.error != Error::kOk) *error = "runtime: " + run.message;
  return run;
}

}  // namespace boardlab::runtime::testing
