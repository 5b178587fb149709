#!/usr/bin/env bash
# The main job: builds boardlab, compiles a real model for the i.MX RT700 (partition, memory plan,
# latency estimate), then runs the artifact on the simulated RT700 board, checks its outputs
# against the TensorFlow Lite Micro golden outputs and prints the per-op profile.
# (Later: the same through the server and board agents.)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BOARDLAB_BUILD_DIR:-build}
shared=../shared
model=${1:-$shared/models/mlperf-tiny/kws_dscnn_int8.tflite}
if [[ ! -f $model ]]; then
  echo "main-job: model $model not found (the shared model folder sits beside the checkout)" >&2
  exit 1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOARDLAB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"${BOARDLAB_JOBS:-2}" --target boardlab-compile boardlab-run
mkdir -p out
name=$(basename "$model" .tflite)
echo "== compile $name for imxrt700"
"$build"/compiler/boardlab-compile "$model" -o "out/$name.pte" --report "out/$name.report.json" \
  --debug-map "out/$name.map.json"
golden=$shared/golden/$name
run_args=(--etdump "out/$name.etdp" --outputs out --target compiler/targets/imxrt700.json)
if [[ -f $golden/seed1.input.bin ]]; then
  run_args+=(--input "$golden/seed1.input.bin" --expected "$golden/seed1.output.bin" --atol 0)
fi
echo
echo "== run $name on the simulated RT700 board"
"$build"/runtime/boardlab-run "out/$name.pte" "${run_args[@]}"
echo
echo "wrote out/$name.pte, out/$name.report.json, out/$name.map.json, out/$name.etdp"
