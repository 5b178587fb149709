#pragma once

// Models with resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) and CALL_ONCE, the
// way TensorFlow exports a model with state: an init subgraph run once by CALL_ONCE assigns the
// initial values, the main graph reads and assigns them. For the importer, compiler, runtime and
// firmware tests; their arithmetic is exact, so the outputs can be derived by hand.

#include "tests/support/tflite_builder.h"

namespace boardlab::testing {

/// A running sum. Input x [1,4] of `type` (kInt8: scale 0.5, zero point -2; kInt16: scale 0.25,
/// zero point 0; kFloat32: no quantization). Subgraph 1 (init): VAR_HANDLE "counter",
/// ASSIGN_VARIABLE of a constant 0 (quantized: the zero point). Main: CALL_ONCE(1), VAR_HANDLE
/// "counter", v = READ_VARIABLE, s = ADD(v, x) (same quantization: exact; ADD_N in float32, the
/// float op boardlab has), ASSIGN_VARIABLE(s); output s. Inference n outputs x_1 + ... + x_n
/// (saturating in int8 and int16).
TfliteBuilder CounterModelBuilder(TflType type);

/// Two float32 [1] variables "a" and "b" set to 0 and 1 by the init subgraph; main reads both,
/// s = ADD_N(a, b), assigns a = b and b = s (the reads come before the assignments), outputs
/// ADD_N(s, x) for input x float32 [1]: the Fibonacci numbers 1, 2, 3, 5, 8, ... plus x.
TfliteBuilder FibonacciModelBuilder();

/// No CALL_ONCE: main reads variable "v" into `before`, assigns input x [1,4] of `type` (kInt8:
/// scale 0.5, zero point 3; others without quantization), reads it again into `after`; outputs
/// before, after. The first inference reads the variable before anything assigned it: TFLite
/// Micro's reset value, the zero point (3) in every byte, 0 without quantization.
TfliteBuilder ReadAssignReadModelBuilder(TflType type = TflType::kInt8);

/// A resource handle through WHILE: input x int8 [1,4] (scale 0.5, zero point -2). Init
/// (subgraph 1) assigns "acc" its zero point. Main: CALL_ONCE(1), h = VAR_HANDLE "acc",
/// (i', h', x') = WHILE(i = 0, h, x) with cond (subgraph 2) LESS(i, 3) and body (subgraph 3)
/// i + 1, READ_VARIABLE(h) + x ASSIGNed to h, passing h and x on; then y = READ_VARIABLE(h').
/// Output y: the variable after three more additions of x each inference (ADD with equal
/// quantization, exact and saturating in quantized units).
TfliteBuilder WhileAccumulatorModelBuilder();

/// A resource handle through IF: inputs `cond` bool [1] and x int8 [1,4] (as above). Init
/// assigns "acc" its zero point. Main: CALL_ONCE(1), h = VAR_HANDLE "acc", (z, h') = IF(cond, h,
/// x): then (subgraph 2) s = READ_VARIABLE(h) + x, ASSIGN_VARIABLE(h, s), outputs (s, h); else
/// (subgraph 3) outputs (READ_VARIABLE(h), h) and assigns nothing; then y = READ_VARIABLE(h').
/// Outputs z and y: the variable after the inference, which adds x only when cond is true.
/// With `uncalled_reader`, the model also holds a subgraph that nothing calls (index 4, the
/// else-branch again: READ_VARIABLE of its input handle), which TFLite Micro prepares and never
/// runs.
TfliteBuilder IfAssignModelBuilder(bool uncalled_reader = false);

/// Two variables through one pair of branch subgraphs: inputs cond_a, cond_b bool [1] and x int8
/// [1,4] (as above). Init assigns "a" and "b" their zero point. Main: CALL_ONCE(1), h_a =
/// VAR_HANDLE "a", h_b = VAR_HANDLE "b", (z_a, h_a') = IF(cond_a, h_a, x), (z_b, h_b') =
/// IF(cond_b, h_b, x), both IFs calling the same then and else subgraphs, y_a =
/// READ_VARIABLE(h_a'). The then-branch adds x into the variable its handle names and returns
/// the sum and the handle; with `nested_loop` it does so through a WHILE (IF -> WHILE -> body,
/// three additions of x, as WhileAccumulatorModelBuilder's loop); the else-branch returns the
/// variable and the handle. Outputs z_a, z_b, y_a: "a" after its IF, "b" after its IF, "a" at the
/// end. TFLite Micro's reads and assignments in the branches reach "a" from the first IF and "b"
/// from the second.
TfliteBuilder SharedBranchesModelBuilder(bool nested_loop = false);

/// A WHILE whose only loop state is a handle: input x int8 [1] (scale 0.5, zero point 0). Main:
/// h = VAR_HANDLE "v", ASSIGN_VARIABLE(h, x), h' = WHILE(h) with cond (subgraph 1)
/// LESS(READ_VARIABLE(h), 5) and body (subgraph 2) ASSIGN_VARIABLE(h, READ_VARIABLE(h) + 1),
/// then y = READ_VARIABLE(h'). Output y = max(x, 5) in quantized units. With
/// `body_replaces_handle`, the body outputs the handle of another variable "w" (a VAR_HANDLE of
/// its own) in place of its input, so the loop's handle names "v" on the first turn and "w" after.
TfliteBuilder RaiseToFiveModelBuilder(bool body_replaces_handle = false);

/// Handles whose variable depends on the run (TFLite Micro follows the handle's resource id at
/// run time). Both: input x int8 [1,4] (scale 0.5, zero point -2); init (CALL_ONCE) sets "v" to
/// 0.0 (the zero point) and "w" to quantized 10; main's VAR_HANDLE "w" comes before "v", so their
/// resource ids are 0 and 1. Outputs end with y_v, y_w: both variables at the end of the
/// inference. Additions are ADD with equal quantization: exact, saturating in quantized units.
///
/// Branch-chosen: inputs cond bool [1] and x. chosen = IF(cond) whose then-branch outputs
/// VAR_HANDLE "v" and else-branch VAR_HANDLE "w"; s = READ_VARIABLE(chosen) + x, ASSIGN_VARIABLE
/// (chosen, s). Outputs s, y_v, y_w: x added into "v" when cond is true, else into "w". With
/// `outputs_handles`, also outputs chosen and main's VAR_HANDLE "v" output: the resource ids
/// (int32 [] each; 1 for "v", 0 for "w").
TfliteBuilder BranchChosenVariableModelBuilder(bool outputs_handles = false);

/// Loop-switched: WHILE(i = 0, VAR_HANDLE "v", x) with cond i < 3 and a body that adds x into the
/// variable its handle names and hands on VAR_HANDLE "w" in place of its handle; then y =
/// READ_VARIABLE(the loop's handle). Outputs y, y_v, y_w: each inference adds x once into "v" and
/// twice into "w", and y is "w".
TfliteBuilder LoopSwitchedVariableModelBuilder();

/// The caller's handle: inputs handle (a resource handle: int32 [] holding a resource id) and x.
/// Init also sets a float32 [1] variable "f" (resource id 2) to 0. s = READ_VARIABLE(handle) + x,
/// ASSIGN_VARIABLE(handle, s). Outputs s, y_v, y_w: x added into "w" for id 0, "v" for id 1;
/// TFLite Micro copies "f"'s 4 bytes for id 2 (unchecked), boardlab fails that run.
TfliteBuilder CallersHandleModelBuilder();

}  // namespace boardlab::testing
