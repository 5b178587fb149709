#!/usr/bin/env bash
# Installs, into <repo>/build-deps/node: the TFLite interpreter (WebAssembly build) that the kernel
# oracle tests run under node; the Kubernetes API schema models (kubernetes-models, yaml) that
# check deploy/k8s offline; and playwright-core, which drives Debian's Chromium through the
# server's web pages in tests/service/web_pages_test.cc (it downloads no browser). tfjs-core and
# tfjs-backend-cpu are pinned to 4.9.0, the peer version tfjs-tflite names. Idempotent: does
# nothing when the pinned versions are present. Without node/npm it only warns, and the oracle
# and browser tests skip with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$PWD/build-deps/node"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-node-deps: node or npm not found; kernel oracle and browser tests will be skipped" >&2
  exit 0
fi
has_version() { [[ -f "$prefix/node_modules/$1/package.json" ]] &&
  grep -q "\"version\": \"$2\"" "$prefix/node_modules/$1/package.json"; }
if has_version @tensorflow/tfjs-tflite 0.0.1-alpha.10 && has_version @tensorflow/tfjs-core 4.9.0 &&
   has_version @tensorflow/tfjs-backend-cpu 4.9.0 && has_version kubernetes-models 5.1.0 &&
   has_version yaml 2.9.1 && has_version playwright-core 1.65.1; then
  exit 0
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts \
  @tensorflow/tfjs-tflite@0.0.1-alpha.10 @tensorflow/tfjs-core@4.9.0 \
  @tensorflow/tfjs-backend-cpu@4.9.0 \
  kubernetes-models@5.1.0 yaml@2.9.1 playwright-core@1.65.1
