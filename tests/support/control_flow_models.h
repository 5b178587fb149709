#pragma once

// Models with several subgraphs (IF, WHILE) for the importer, compiler, runtime and firmware
// tests. Every op inside them has an int8 kernel in TFLite Micro and in TFLite's interpreter, so
// the interpreter is their oracle.

#include "tests/support/tflite_builder.h"

namespace boardlab::testing {

/// Inputs: `cond` bool [1] and `x` int8 [1,8] (0.05, -3). Main graph: y = ADD(x, x) (NPU-able,
/// 0.1, -3), then z = IF(cond, y): subgraph 1 (then) ADD(a, a) (0.2, -3), subgraph 2 (else)
/// RELU(a) (0.1, -3). Output z int8 [1,8].
TfliteBuilder IfModelBuilder();

/// IfModelBuilder whose then-branch (subgraph 1) is ADD(a, a) (0.2, -3) then RELU6 of the same
/// quantization, which the compiler fuses into the ADD inside the subgraph; the else-branch
/// (subgraph 2) stays RELU(a), which reads the branch's input and so cannot be fused.
TfliteBuilder IfWithAFusableBranchBuilder();

/// Inputs: `n` int8 [1] (scale 0.5, zero point 0) and `x` int8 [1,8] (0.05, 0). Main graph:
/// (n', x') = WHILE(n, x) with subgraph 1 (cond) LESS(n, 5) and subgraph 2 (body)
/// n + 1, ADD(x, x) (same quantization, so x doubles and saturates); then y = RELU(x').
/// Outputs n' and y. The loop runs max(0, 5 - n) times.
TfliteBuilder WhileModelBuilder();

/// A WHILE inside IF's then-branch: inputs `cond` bool [1], `n` int8 [1], `x` int8 [1,8]; the
/// then-branch (subgraph 1) runs the loop of WhileModelBuilder (its cond and body are subgraphs
/// 3 and 4) and the else-branch (subgraph 2) passes n and x through with no operators. Outputs
/// n' and x'.
TfliteBuilder NestedControlFlowBuilder();

/// One stateful op called from two places: inputs `cond_a`, `cond_b` bool [1] and `x` int16 [4].
/// Subgraph 1 (then) is SIGNAL_DELAY with delay_length 3 over its frame of 4 samples, subgraph 2
/// (else) passes its input through with no operators; main runs y_a = IF(cond_a, x) and then
/// y_b = IF(cond_b, x) over those two subgraphs. Outputs y_a and y_b. TFLite Micro has one delay
/// line for subgraph 1's one operator: every frame either IF feeds it comes out 3 samples later,
/// whichever IF runs next. With `through_handles`, main also assigns x to resource variables "a"
/// and "b" and passes their handles to the IFs (first branch input), the then-branch assigning
/// its delayed frame to the variable its handle names: boardlab copies subgraph 1 for "b", and
/// the copy's delay must still be the original's.
TfliteBuilder SharedDelayModelBuilder(bool through_handles = false);

/// The IF and WHILE of the models above as the only op of their main graph (for the tests that
/// import one model per op type).
TfliteBuilder SingleIfBuilder();
TfliteBuilder SingleWhileBuilder();

}  // namespace boardlab::testing
