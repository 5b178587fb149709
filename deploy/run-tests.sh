#!/usr/bin/env bash
# Builds boardlab with clang, AddressSanitizer + UndefinedBehaviorSanitizer and runs the whole test
# suite, then the fuzzers (importer, requests, board data) for a bounded time each.
# Usage: deploy/run-tests.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BOARDLAB_TEST_BUILD_DIR:-build-asan}
jobs=${BOARDLAB_JOBS:-2}

# -O1 and line tables only, as the sanitizers' docs advise: the build takes half the time of -O2
# -g (an ASan test file: 61 s -> 29 s) and reports still name every frame's file and line.
# clang, and one build for the tests and the fuzzers (libFuzzer needs clang; its coverage goes into
# the libraries only): GCC took 2025 s for this build and clang 1392 s, and a second build for the
# fuzzers took another 500 s.
debug_flags="-O1 -g1 -DNDEBUG"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBOARDLAB_SANITIZE=ON -DBOARDLAB_FUZZ=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$debug_flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$debug_flags" \
  >/dev/null
cmake --build "$build" -j"$jobs"
echo "run-tests: sanitizer build done after ${SECONDS} s"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
deploy/install-node-deps.sh
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@"
echo "run-tests: tests done after ${SECONDS} s"

corpus=$(mktemp -d)
seeds=$(mktemp -d)
request_corpus=$(mktemp -d)
request_seeds=$(mktemp -d)
board_corpus=$(mktemp -d)
board_seeds=$(mktemp -d)
trap 'rm -rf "$corpus" "$seeds" "$request_corpus" "$request_seeds" "$board_corpus" "$board_seeds"' EXIT
# Seeds are small generated models (model files are never committed).
BOARDLAB_WRITE_FUZZ_SEEDS="$seeds" "$build"/tests/compiler_tests \
  --gtest_filter=TfliteBuilderTest.WriteFuzzSeeds >/dev/null
"$build"/tests/fuzz/importer_fuzzer -max_total_time="${BOARDLAB_FUZZ_SECONDS:-60}" \
  -rss_limit_mb=2048 -max_len=65536 "$corpus" "$seeds" 2>&1 | tail -n 3
echo "importer fuzzer: no crash in ${BOARDLAB_FUZZ_SECONDS:-60} s"

# Bytes as requests of every RPC and caller, handed to the server's handlers in-process.
BOARDLAB_WRITE_REQUEST_SEEDS="$request_seeds" "$build"/tests/fuzz/request_fuzzer
"$build"/tests/fuzz/request_fuzzer -max_total_time="${BOARDLAB_REQUEST_FUZZ_SECONDS:-60}" \
  -rss_limit_mb=2048 -max_len=4096 "$request_corpus" "$request_seeds" 2>&1 | tail -n 3
echo "request fuzzer: no crash in ${BOARDLAB_REQUEST_FUZZ_SECONDS:-60} s"

# Bytes as what a board sends back: the host side of the board link, and ETDumps drawn. Inputs
# that once crashed it (tests/fuzz/board_data_regressions) run first, every time.
BOARDLAB_WRITE_BOARD_SEEDS="$board_seeds" "$build"/tests/fuzz/board_data_fuzzer
"$build"/tests/fuzz/board_data_fuzzer -max_total_time="${BOARDLAB_BOARD_FUZZ_SECONDS:-60}" \
  -timeout=30 -rss_limit_mb=2048 -max_len=8192 "$board_corpus" "$board_seeds" \
  tests/fuzz/board_data_regressions 2>&1 | tail -n 3
echo "board data fuzzer: no crash in ${BOARDLAB_BOARD_FUZZ_SECONDS:-60} s"
