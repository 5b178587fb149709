#include "runtime/timing/timing_model.h"

// How the model maps work onto the Neutron N3-64 (docs/cost-model.md has the calibration).
//
// The MAC array is output-stationary: `npu_pipes` dot-product units each own one output channel
// and consume `npu_macs_per_pipe` int8 products per cycle. One "output block" is one output pixel
// times one group of `npu_pipes` output channels; its dot product takes
// ceil(reduction / npu_macs_per_pipe) cycles, so channel counts that are not multiples of the pipe
// and MAC widths waste lanes (the utilisation losses NXP's small models show).
//
// The int32 accumulators stay in the core, so a block's `npu_pipes` results leave through the
// requantisation stage one element per cycle before the pipes can start the next block. That
// drain is what makes short reductions (depthwise, Cin = 8..64 pointwise) expensive.
//
// Kernels without weights (pools, element-wise, data movement, softmax) run on the same pipes as a
// vector unit: `npu_pipes` elements per cycle, plus streaming their bytes over the SRAM port.

namespace boardlab::runtime::timing {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

uint64_t CeilToCycles(double cycles) {
  if (cycles <= 0) return 0;
  const uint64_t whole = static_cast<uint64_t>(cycles);
  return static_cast<double>(whole) < cycles ? whole + 1 : whole;
}

// Softmax passes over its row: max, exp lookup + sum, reciprocal, scale and store.
constexpr int64_t kSoftmaxPasses = 4;

bool UsesMacArray(NpuKernelClass kind) {
  return kind == NpuKernelClass::kConv || kind == NpuKernelClass::kDepthwise ||
         kind == NpuKernelClass::kMatMul;
}

// Cycles the dot-product units are busy (without drain and overheads).
int64_t MacArrayCycles(const NpuKernelShape& s, const TimingParams& p) {
  const int64_t blocks = s.out_rows * s.out_cols * CeilDiv(s.out_channels, p.npu_pipes);
  if (s.kind == NpuKernelClass::kDepthwise) {
    // One channel per pipe; the dot product runs along the kernel taps, padded to the MAC width
    // (a 3x3 kernel takes two cycles, 9/16 of the lanes useful).
    return blocks * CeilDiv(s.kernel_taps, p.npu_macs_per_pipe);
  }
  // Conv / FC / matmul: input channels along the MACs, one pass per kernel tap.
  return blocks * CeilDiv(s.in_channels, p.npu_macs_per_pipe) * s.kernel_taps;
}

// Cycles of a weight-less kernel on the pipes used as a vector unit.
int64_t VectorCycles(const NpuKernelShape& s, const TimingParams& p) {
  const int64_t out_elements = s.out_rows * s.out_cols * s.out_channels;
  int64_t elements = out_elements;
  if (s.kind == NpuKernelClass::kPool) elements = out_elements * s.kernel_taps;
  if (s.kind == NpuKernelClass::kSoftmax) elements = out_elements * kSoftmaxPasses;
  const double stream =
      p.sram_bytes_per_cycle > 0
          ? static_cast<double>(s.input_bytes + s.output_bytes) / p.sram_bytes_per_cycle
          : 0;
  return CeilDiv(elements, p.npu_pipes) + static_cast<int64_t>(CeilToCycles(stream));
}

uint64_t MemoryCycles(const NpuKernelShape& s, const TimingParams& p) {
  if (p.sram_bytes_per_cycle <= 0) return 0;
  int64_t bytes = s.input_bytes + s.output_bytes;
  if (!s.weights_in_flash) bytes += s.weight_bytes;
  return CeilToCycles(static_cast<double>(bytes) / p.sram_bytes_per_cycle);
}

uint64_t PrefetchCycles(const NpuKernelShape& s, const TimingParams& p) {
  if (!s.weights_in_flash || s.weight_bytes == 0 || p.flash_bytes_per_second <= 0) return 0;
  const double bytes_per_cycle = p.flash_bytes_per_second / p.npu_clock_hz;
  return CeilToCycles(static_cast<double>(s.weight_bytes) / bytes_per_cycle +
                      p.flash_transfer_setup_cycles);
}

}  // namespace

NpuKernelCost NpuKernelCycles(const NpuKernelShape& shape, const TimingParams& params) {
  NpuKernelCost cost;
  const double overhead = params.npu_kernel_setup_cycles +
                          params.npu_row_overhead_cycles * static_cast<double>(shape.out_rows);
  int64_t work = 0;
  if (UsesMacArray(shape.kind)) {
    const int64_t mac_cycles = MacArrayCycles(shape, params);
    const int64_t drain = shape.out_rows * shape.out_cols *
                          CeilDiv(shape.out_channels, params.npu_pipes) * params.npu_pipes;
    work = mac_cycles + drain;
    const int64_t useful = shape.out_rows * shape.out_cols * shape.out_channels *
                           shape.in_channels * shape.kernel_taps;
    const double peak = static_cast<double>(params.npu_pipes) * params.npu_macs_per_pipe;
    cost.utilization =
        mac_cycles > 0 ? static_cast<double>(useful) / (static_cast<double>(mac_cycles) * peak) : 0;
  } else {
    work = VectorCycles(shape, params);
  }
  cost.compute = CeilToCycles(static_cast<double>(work) + overhead);
  cost.memory = MemoryCycles(shape, params);
  cost.prefetch = PrefetchCycles(shape, params);
  cost.total = cost.compute;
  if (cost.memory > cost.total) cost.total = cost.memory;
  if (cost.prefetch > cost.total) cost.total = cost.prefetch;
  return cost;
}

uint64_t CpuKernelCycles(const CpuKernelShape& shape, const TimingParams& params) {
  double per_mac = 0;
  double per_element = 0;
  switch (shape.kind) {
    case CpuKernelClass::kConv:
      per_mac = params.cpu_cycles_per_mac_conv;
      break;
    case CpuKernelClass::kDepthwise:
      per_mac = params.cpu_cycles_per_mac_depthwise;
      break;
    case CpuKernelClass::kFullyConnected:
      per_mac = params.cpu_cycles_per_mac_fc;
      break;
    case CpuKernelClass::kElementwise:
      // Pools and reductions carry MACs (window taps) on top of their per-output cost.
      per_mac = params.cpu_cycles_per_element_elementwise;
      per_element = params.cpu_cycles_per_element_elementwise;
      break;
    case CpuKernelClass::kLut:
      per_element = params.cpu_cycles_per_element_lut;
      break;
    case CpuKernelClass::kDataMovement:
      per_element = params.cpu_cycles_per_element_move;
      break;
  }
  return CeilToCycles(params.cpu_kernel_call_cycles + static_cast<double>(shape.macs) * per_mac +
                      static_cast<double>(shape.elements) * per_element);
}

double CyclesToMicroseconds(uint64_t cycles, double clock_hz) {
  if (clock_hz <= 0) return 0;
  return static_cast<double>(cycles) * 1e6 / clock_hz;
}

}  // namespace boardlab::runtime::timing
