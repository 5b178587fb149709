#!/usr/bin/env bash
# The main job: builds boardlab, starts a server and an agent with two simulated RT700 boards on
# loopback, submits a real model (MLPerf Tiny keyword spotting) with TensorFlow Lite Micro's golden
# input and output, shows the job's progress, verdict and per-op profile, writes the job's files
# to out/, and shuts everything down.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BOARDLAB_BUILD_DIR:-build}
shared=../shared
model=${1:-$shared/models/mlperf-tiny/kws_dscnn_int8.tflite}
if [[ ! -f $model ]]; then
  echo "main-job: model $model not found (the shared model folder sits beside the checkout)" >&2
  exit 1
fi
# Warnings are shown, not fatal: CI keeps -Werror on the builds it makes, and does not make this
# -O3 one, where GCC 12 has raised false -Wrestrict errors before.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOARDLAB_BUILD_TESTS=OFF \
  -DBOARDLAB_WERROR=OFF >/dev/null
cmake --build "$build" -j"${BOARDLAB_JOBS:-2}" \
  --target boardlab-server boardlab-agent boardlab boardlab-compile boardlab-run

work=$(mktemp -d /tmp/boardlab-main-job.XXXXXX)
pids=()
cleanup() {
  # SIGTERM: the server and the agent shut down cleanly (state is on disk already).
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== start boardlab-server (loopback, data in $work/server)"
"$build"/server/boardlab-server --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --http-listen 127.0.0.1:0 --data-dir "$work/server" >"$work/server.out" 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
  grep -q "listening on" "$work/server.out" 2>/dev/null && break
  sleep 0.1
done
read -r address metrics_port < <(sed -n 's/.*listening on \([^ ]*\) metrics \([0-9]*\).*/\1 \2/p' "$work/server.out")
if [[ -z ${address:-} ]]; then
  echo "main-job: the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "   gRPC on $address, metrics on http://127.0.0.1:$metrics_port/metrics"

echo "== start boardlab-agent with two simulated RT700 boards"
"$build"/agent/boardlab-agent --server "$address" --agent-id lab-host-1 --sim-boards 2 \
  --state-dir "$work/agent" >"$work/agent.log" 2>&1 &
pids+=($!)
export BOARDLAB_SERVER=$address
# `boardlab boards --json` is one line: count the idle boards in it, not its lines.
idle_boards() {
  "$build"/cli/boardlab boards --json 2>/dev/null | grep -o '"BOARD_STATE_IDLE"' | wc -l
}
for _ in $(seq 100); do
  (($(idle_boards) >= 2)) && break
  sleep 0.1
done
"$build"/cli/boardlab boards

name=$(basename "$model" .tflite)
golden=$shared/golden/$name
submit_args=(--board-type imxrt700-sim --wait --out "out/$name")
if [[ -f $golden/seed1.input.bin ]]; then
  submit_args+=(--input "$golden/seed1.input.bin" --expected "$golden/seed1.output.bin" --atol 0)
else
  submit_args+=(--input random:1 --expect-reference)
fi
echo
echo "== boardlab submit $model"
status=0
"$build"/cli/boardlab submit "$model" "${submit_args[@]}" || status=$?
echo
echo "== where the compiler put each operator (out/$name/report.json)"
"$build"/compiler/boardlab-compile "$model" -o "$work/local.pte" | sed -n '1,40p'
echo
echo "== metrics (excerpt)"
{
  exec 3<>"/dev/tcp/127.0.0.1/$metrics_port"
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  cat <&3
  exec 3<&-
} 2>/dev/null | grep -E '^boardlab_(jobs_finished_total|compile_cache_requests_total|boards\{)' || true
echo
echo "job files in out/$name: $(ls "out/$name" | tr '\n' ' ')"
exit $status
