#pragma once

// Small helpers for tests that build compiler IR graphs directly (no TFLite file in between).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir.h"

namespace boardlab::testing {

/// An op of `type` reading `inputs` and writing `outputs` (tensor indices), default options.
inline compiler::Op MakeOp(compiler::OpType type, std::vector<int> inputs,
                           std::vector<int> outputs) {
  compiler::Op op;
  op.type = type;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  return op;
}

/// An int8 activation tensor with per-tensor quantization.
inline compiler::Tensor Activations(std::string name, std::vector<int32_t> shape, float scale,
                                    int64_t zp) {
  compiler::Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.quant.scale = {scale};
  t.quant.zero_point = {zp};
  return t;
}

}  // namespace boardlab::testing
