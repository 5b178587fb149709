#!/usr/bin/env bash
# The main job: builds boardlab and compiles a real model for the i.MX RT700, printing the
# partition, memory plan and latency estimate. (Later: server + simulated boards end to end.)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BOARDLAB_BUILD_DIR:-build}
model=${1:-../shared/models/mlperf-tiny/kws_dscnn_int8.tflite}
if [[ ! -f $model ]]; then
  echo "main-job: model $model not found (the shared model folder sits beside the checkout)" >&2
  exit 1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOARDLAB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"${BOARDLAB_JOBS:-2}" --target boardlab-compile
mkdir -p out
name=$(basename "$model" .tflite)
"$build"/compiler/boardlab-compile "$model" -o "out/$name.pte" --report "out/$name.report.json"
echo "wrote out/$name.pte and out/$name.report.json"
