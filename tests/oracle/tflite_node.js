// Loads the TFLite interpreter (the WebAssembly build shipped in @tensorflow/tfjs-tflite) under
// plain node. Shared by the kernel oracle (run_tflite.js) and the benchmark peer
// (tests/bench/peers/tflite_wasm_bench.js).
//
//   const {tf, tflite} = require('./tflite_node.js').load(modulesDir);
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

// The package is written for browsers; these shims (local-tools.md section 2) let it load under
// node: a `self` global, a page location whose empty origin keeps script paths plain file paths,
// no MessageChannel (so the non-threaded SIMD build is chosen), an importScripts that evaluates a
// local file, and a fetch that can read local paths.
function installShims() {
  globalThis.self = globalThis;
  if (!globalThis.location) globalThis.location = {origin: '', href: ''};
  globalThis.MessageChannel = undefined;
  globalThis.importScripts = (p) => vm.runInThisContext(fs.readFileSync(p, 'utf8'), {filename: p});
  const originalFetch = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    const s = String(url);
    if (!/^[a-z]+:\/\//i.test(s) && fs.existsSync(s)) {
      return new Response(fs.readFileSync(s), {headers: {'Content-Type': 'application/wasm'}});
    }
    return originalFetch(url, init);
  };
}

function load(modulesDir) {
  installShims();
  const tf = require(path.join(modulesDir, '@tensorflow/tfjs-core'));
  require(path.join(modulesDir, '@tensorflow/tfjs-backend-cpu'));
  const tflite = require(path.join(modulesDir, '@tensorflow/tfjs-tflite'));
  // Silence the library's int32 -> int8 conversion warning; it would drown the logs.
  const warn = console.warn;
  console.warn = (...a) => {
    if (!/int8|int16/.test(String(a[0]))) warn(...a);
  };
  return {tf, tflite};
}

module.exports = {load};
