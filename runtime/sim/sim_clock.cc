#include "runtime/sim/sim_clock.h"

#include <cstring>
#include <utility>

namespace boardlab::runtime::sim {
namespace {

using timing::CpuKernelClass;

SimClock* g_installed = nullptr;

// Operator key without namespace and overload: "boardlab::conv_2d.out" -> "conv_2d".
bool OpIs(const char* key, const char* op) {
  const char* name = std::strstr(key, "::");
  name = name ? name + 2 : key;
  const size_t n = std::strlen(op);
  return std::strncmp(name, op, n) == 0 && (name[n] == '.' || name[n] == '\0');
}

// The signal library's filter bank stage: a few operations per element each.
bool IsSignalFilterBankStage(const char* key) {
  return OpIs(key, "signal_energy") || OpIs(key, "signal_filter_bank") ||
         OpIs(key, "signal_filter_bank_square_root") || OpIs(key, "signal_filter_bank_log") ||
         OpIs(key, "signal_pcan") || OpIs(key, "signal_filter_bank_spectral_subtraction");
}

// TFLite Micro's streaming ops: copies (and adds) over every element.
bool IsStreamKernel(const char* key) {
  return OpIs(key, "signal_framer") || OpIs(key, "signal_stacker") ||
         OpIs(key, "signal_overlap_add") || OpIs(key, "circular_buffer");
}

// TFLite Micro's real FFTs: timed per element (a lower bound: a butterfly stage per 2 bits of
// fft_length).
bool IsSignalFft(const char* key) { return OpIs(key, "signal_rfft") || OpIs(key, "signal_irfft"); }

const TensorView* TensorArg(Span<Value* const> args, size_t i) {
  return i < args.size() && args[i] != nullptr && args[i]->is_tensor() ? args[i]->tensor : nullptr;
}

const TensorView* LastTensor(Span<Value* const> args) {
  for (size_t i = args.size(); i > 0; --i) {
    if (const TensorView* t = TensorArg(args, i - 1)) return t;
  }
  return nullptr;
}

int64_t IntListProduct(Span<Value* const> args, size_t i) {
  if (i >= args.size() || args[i] == nullptr || args[i]->tag != ValueTag::kIntList) return 1;
  int64_t p = 1;
  for (size_t k = 0; k < args[i]->int_list.size; ++k) p *= args[i]->int_list.At(k);
  return p;
}

bool BoolArg(Span<Value* const> args, size_t i) {
  return i < args.size() && args[i] != nullptr && args[i]->tag == ValueTag::kBool &&
         args[i]->bool_value;
}

}  // namespace

Ticks SimClock::NpuCyclesToTicks(uint64_t npu_cycles) const {
  if (params_.npu_clock_hz <= 0 || params_.cpu_clock_hz == params_.npu_clock_hz) {
    return npu_cycles;
  }
  const double ticks =
      static_cast<double>(npu_cycles) * params_.cpu_clock_hz / params_.npu_clock_hz;
  const uint64_t whole = static_cast<uint64_t>(ticks);
  return static_cast<double>(whole) < ticks ? whole + 1 : whole;
}

uint64_t SimClock::AdvanceForKernelCall(const char* kernel_name, Span<Value* const> args) {
  const uint64_t cycles =
      timing::CpuKernelCycles(CpuShapeForKernelCall(kernel_name, args), params_);
  now_ += cycles;
  return cycles;
}

void SimClock::Install(SimClock* clock) { g_installed = clock; }
SimClock* SimClock::Installed() { return g_installed; }
Ticks SimClock::Read() { return g_installed != nullptr ? g_installed->now() : 0; }

timing::CpuKernelShape CpuShapeForKernelCall(const char* name, Span<Value* const> args) {
  timing::CpuKernelShape shape;
  shape.kind = CpuKernelClass::kDataMovement;
  const TensorView* out = LastTensor(args);
  const TensorView* in = TensorArg(args, 0);
  const TensorView* in1 = TensorArg(args, 1);
  shape.elements = out != nullptr ? out->NumElements() : 0;
  if (name == nullptr) return shape;
  const int64_t out_elements = shape.elements;
  if (OpIs(name, "conv_2d") && in1 != nullptr && in1->rank == 4) {
    shape.kind = CpuKernelClass::kConv;
    shape.macs = out_elements * in1->dims[1] * in1->dims[2] * in1->dims[3];
    shape.elements = 0;
  } else if (OpIs(name, "depthwise_conv_2d") && in1 != nullptr && in1->rank == 4) {
    shape.kind = CpuKernelClass::kDepthwise;
    shape.macs = out_elements * in1->dims[1] * in1->dims[2];
    shape.elements = 0;
  } else if (OpIs(name, "fully_connected") && in1 != nullptr && in1->rank >= 1) {
    shape.kind = CpuKernelClass::kFullyConnected;
    shape.macs = out_elements * in1->Dim(-1);
    shape.elements = 0;
  } else if (OpIs(name, "svdf") && in != nullptr && in1 != nullptr &&
             TensorArg(args, 2) != nullptr) {
    // Feature matmul [batch, input] x [filters, input], then the time matmul over the memory.
    shape.kind = CpuKernelClass::kFullyConnected;
    shape.macs = int64_t{in->dims[0]} * in1->dims[0] * (in1->dims[1] + TensorArg(args, 2)->dims[1]);
    shape.elements = 0;
  } else if (OpIs(name, "unidirectional_sequence_lstm") && in != nullptr && in->rank == 3 &&
             TensorArg(args, 2) != nullptr && TensorArg(args, 2)->rank == 2) {
    // Per step and batch row, four gates of an input FC and a recurrent FC (compiler Macs).
    const TensorView* w = TensorArg(args, 2);  // [state, input]
    shape.kind = CpuKernelClass::kFullyConnected;
    shape.macs = int64_t{in->dims[0]} * in->dims[1] * 4 * w->dims[0] * (w->dims[1] + w->dims[0]);
    shape.elements = 0;
  } else if (OpIs(name, "batch_matmul") && in != nullptr && in->rank >= 2) {
    shape.kind = CpuKernelClass::kFullyConnected;
    // Options follow the inputs: adj_x, adj_y Bools.
    const bool adj_x = BoolArg(args, 2);
    shape.macs = out_elements * (adj_x ? in->Dim(-2) : in->Dim(-1));
    shape.elements = 0;
  } else if (OpIs(name, "average_pool_2d") || OpIs(name, "max_pool_2d")) {
    shape.kind = CpuKernelClass::kElementwise;
    shape.macs = out_elements * IntListProduct(args, 3);  // filter [h, w]
  } else if (OpIs(name, "mean")) {
    shape.kind = CpuKernelClass::kElementwise;
    shape.macs = in != nullptr ? in->NumElements() : 0;  // output elements x window
  } else if (OpIs(name, "add") || OpIs(name, "sub") || OpIs(name, "mul") || OpIs(name, "maximum") ||
             OpIs(name, "minimum") || OpIs(name, "relu") || OpIs(name, "relu6") ||
             OpIs(name, "leaky_relu") || OpIs(name, "signal_window") ||
             OpIs(name, "signal_fft_auto_scale") || OpIs(name, "signal_delay") ||
             IsSignalFilterBankStage(name) || IsStreamKernel(name) || IsSignalFft(name)) {
    shape.kind = CpuKernelClass::kElementwise;
  } else if (OpIs(name, "detection_postprocess") && in != nullptr && in1 != nullptr) {
    shape.kind = CpuKernelClass::kElementwise;  // every box and score is read (a lower bound)
    shape.elements = in->NumElements() + in1->NumElements();
  } else if (OpIs(name, "softmax") || OpIs(name, "logistic") || OpIs(name, "tanh") ||
             OpIs(name, "hard_swish")) {
    shape.kind = CpuKernelClass::kLut;
  }
  return shape;
}

// ---- Wrapped kernel registrations --------------------------------------------------------------

namespace {

const KernelRegistration* (*g_base)(const char*) = nullptr;
KernelRegistration g_wrapped[SimKernelLookup::kMaxKernels];
const KernelRegistration* g_original[SimKernelLookup::kMaxKernels];
int g_count = 0;

// One trampoline per table slot: the executor's KernelEvalFn carries no user pointer, so the
// slot index is baked into the function.
template <int kSlot>
Error WrappedEval(KernelContext& ctx, Span<Value* const> args) {
  const Error err = g_original[kSlot]->eval(ctx, args);
  if (SimClock* clock = SimClock::Installed()) {
    clock->AdvanceForKernelCall(g_original[kSlot]->name, args);
  }
  return err;
}

template <size_t... kSlots>
constexpr auto MakeTrampolines(std::index_sequence<kSlots...>) {
  struct Table {
    KernelEvalFn fns[sizeof...(kSlots)];
  };
  return Table{{&WrappedEval<static_cast<int>(kSlots)>...}};
}

constexpr auto kTrampolines =
    MakeTrampolines(std::make_index_sequence<SimKernelLookup::kMaxKernels>());

}  // namespace

void SimKernelLookup::SetBase(const KernelRegistration* (*base)(const char* name)) {
  g_base = base;
  g_count = 0;
}

const KernelRegistration* SimKernelLookup::Find(const char* name) {
  if (g_base == nullptr || name == nullptr) return nullptr;
  const KernelRegistration* original = g_base(name);
  if (original == nullptr) return nullptr;
  for (int i = 0; i < g_count; ++i) {
    if (g_original[i] == original) return &g_wrapped[i];
  }
  if (g_count >= kMaxKernels) return nullptr;
  g_original[g_count] = original;
  g_wrapped[g_count] = *original;
  g_wrapped[g_count].eval = kTrampolines.fns[g_count];
  return &g_wrapped[g_count++];
}

}  // namespace boardlab::runtime::sim
