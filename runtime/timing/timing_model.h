#pragma once

// The RT700 timing model: cycles of one NPU kernel or one Cortex-M kernel call. One
// implementation serves the compiler's cost model (estimates in the report) and the simulator
// board (ETDump ticks), so the two always agree.
//
// Portable C++17, no allocation, no dependencies: it also builds into the firmware.
//
// Usage:
//   TimingParams params;                 // filled from the target spec
//   NpuKernelShape shape{...};            // from the compiled kernel
//   uint64_t cycles = NpuKernelCycles(shape, params).total;

#include <cstdint>

namespace boardlab::runtime::timing {

/// Numbers that calibrate the model; they live in the target spec file (compiler/targets/).
struct TimingParams {
  double cpu_clock_hz = 325e6;
  double npu_clock_hz = 325e6;
  int32_t npu_macs_per_pipe = 8;  // NUM_MACS: dot-product length (input channels per cycle)
  int32_t npu_pipes = 8;          // NUM_PIPES: output channels in parallel
  /// Fixed cost of starting one NPU kernel (microcode dispatch by the CM33, setup, drain).
  double npu_kernel_setup_cycles = 0;
  /// Per output row of a kernel (line setup / address generation).
  double npu_row_overhead_cycles = 0;
  /// Bytes per NPU cycle the NPU reads/writes activations from/to SRAM.
  double sram_bytes_per_cycle = 0;
  /// Bytes per second from external XSPI flash into SRAM (weight prefetch DMA).
  double flash_bytes_per_second = 0;
  /// Fixed cost of one prefetch DMA transfer (descriptor setup), in NPU cycles.
  double flash_transfer_setup_cycles = 0;
  /// Cortex-M33 costs (CMSIS-NN-class kernels): cycles per MAC for each kernel family and
  /// cycles per element for data movement and element-wise work.
  double cpu_cycles_per_mac_conv = 0;
  double cpu_cycles_per_mac_depthwise = 0;
  double cpu_cycles_per_mac_fc = 0;
  double cpu_cycles_per_element_elementwise = 0;
  double cpu_cycles_per_element_move = 0;
  double cpu_cycles_per_element_lut = 0;  // softmax, logistic, tanh
  double cpu_kernel_call_cycles = 0;
};

/// What the NPU does in one kernel, in the terms the cost depends on.
enum class NpuKernelClass : uint8_t {
  kConv,           // dot product over kernel taps x input channels (CONV_2D, FULLY_CONNECTED)
  kDepthwise,      // one input channel per output channel (DEPTHWISE_CONV_2D)
  kPool,           // window reduction without weights (AVERAGE/MAX_POOL, MEAN)
  kElementwise,    // ADD, SUB, MUL, MAXIMUM, MINIMUM, activations
  kDataMovement,   // TRANSPOSE, PAD, SLICE, CONCATENATION, RESHAPE, RESIZE
  kSoftmax,
  kMatMul,         // BATCH_MATMUL
};

struct NpuKernelShape {
  NpuKernelClass kind = NpuKernelClass::kConv;
  int64_t out_rows = 1;        // N * H_out (rows of output the kernel produces)
  int64_t out_cols = 1;        // W_out
  int64_t out_channels = 1;    // C_out
  int64_t in_channels = 1;     // C_in reduced per tap (1 for depthwise)
  int64_t kernel_taps = 1;     // kernel_h * kernel_w
  int64_t input_bytes = 0;     // activation bytes read
  int64_t output_bytes = 0;    // activation bytes written
  int64_t weight_bytes = 0;    // weights + requantisation parameters read
  bool weights_in_flash = false;  // weights must be prefetched from XSPI flash first
};

struct NpuKernelCost {
  uint64_t compute = 0;   // MAC array cycles incl. utilisation losses and setup
  uint64_t memory = 0;    // SRAM activation traffic cycles
  uint64_t prefetch = 0;  // flash -> SRAM DMA cycles for this kernel's weights
  uint64_t total = 0;     // max(compute, memory, prefetch): transfers overlap compute
  double utilization = 0; // useful MACs / (MAC array cycles * peak)
};

/// Cycles of one NPU kernel (at the NPU clock).
NpuKernelCost NpuKernelCycles(const NpuKernelShape& shape, const TimingParams& params);

enum class CpuKernelClass : uint8_t {
  kConv,
  kDepthwise,
  kFullyConnected,  // also BATCH_MATMUL
  kElementwise,     // ADD, SUB, MUL, MAXIMUM, MINIMUM, pools, MEAN, activations
  kLut,             // SOFTMAX, LOGISTIC, TANH, HARD_SWISH
  kDataMovement,    // TRANSPOSE, PAD, SLICE, CONCATENATION, RESHAPE, RESIZE, (DE)QUANTIZE
};

struct CpuKernelShape {
  CpuKernelClass kind = CpuKernelClass::kConv;
  int64_t macs = 0;
  int64_t elements = 0;  // output elements (or input elements for reductions)
};

/// Cycles of one Cortex-M33 kernel call (at the CPU clock).
uint64_t CpuKernelCycles(const CpuKernelShape& shape, const TimingParams& params);

/// Converts cycles at `clock_hz` to microseconds.
double CyclesToMicroseconds(uint64_t cycles, double clock_hz);

}  // namespace boardlab::runtime::timing
