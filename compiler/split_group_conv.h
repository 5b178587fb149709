#pragma once

#include "absl/status/status.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// Rewrites the grouped convolutions the NPU may run into what the Neutron flow takes, the way
/// ExecuTorch's NXP backend does before partitioning (neutron-rt700.md section 4.1: its
/// SplitGroupConvolution splits 2..10 groups, the target's conv_max_groups):
/// - groups = input channels = output channels: one DEPTHWISE_CONV_2D (weights [C,H,W,1] become
///   [1,H,W,C], per-channel scales move from axis 0 to axis 3);
/// - otherwise, up to NpuLimits::conv_max_groups groups: per group a SLICE of its input channels, a
///   CONV_2D with its share of the weights, bias and scales, and one CONCATENATION of the group
///   outputs along the channels.
/// Every new op keeps the source index of the convolution. Both forms compute the same numbers
/// as the grouped convolution (each output channel reads only its group's input channels, with
/// its own requantization), so the rewrite is bit-exact. Grouped convolutions that stay on the
/// CPU (--cpu-only, --no-npu CONV_2D, a convolution rule that fails, too many groups) are left
/// whole: the CPU kernel computes the groups itself, faster than the split form.
absl::Status SplitGroupConvolutions(Compilation& c);

}  // namespace boardlab::compiler
