// The TFLite WASM interpreter (@tensorflow/tfjs-tflite) as a peer for tests/bench/runtime_bench:
// loads one .tflite, runs predict on one input for at least MIN_SECONDS (and at least once) and
// prints one line of JSON: {"inferences_per_second": X, "iterations": N, "seconds": S}.
//
// Usage: node tflite_wasm_bench.js <node_modules dir> <model.tflite> <input.bin> [MIN_SECONDS]
// The input is the raw bytes of input 0 in the model input's type (int8, or float32
// little-endian). Packages and shims are those of tests/oracle/run_tflite.js (installed into
// <repo>/build-deps/node by deploy/install-node-deps.sh). Exit code 0 only on success.
'use strict';
const fs = require('fs');
const path = require('path');

const [modulesArg, modelPath, inputPath, secondsArg] = process.argv.slice(2);
if (!modulesArg || !modelPath || !inputPath) {
  console.error('usage: node tflite_wasm_bench.js <node_modules dir> <model.tflite> <input.bin> ' +
                '[MIN_SECONDS]');
  process.exit(2);
}
const modulesDir = path.resolve(modulesArg);
const minSeconds = secondsArg ? Number(secondsArg) : 1;

const {tf, tflite} = require('../../oracle/tflite_node.js').load(modulesDir);


(async () => {
  try {
    tflite.setWasmPath(path.join(modulesDir, '@tensorflow/tfjs-tflite/wasm') + '/');
    const bytes = fs.readFileSync(modelPath);
    const model = await tflite.loadTFLiteModel(
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), {numThreads: 1});
    const info = model.inputs[0];
    const raw = fs.readFileSync(inputPath);
    let input;
    if (info.dtype === 'float32') {
      const f = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
      input = tf.tensor(f, info.shape, 'float32');
    } else {
      const v = new Int32Array(raw.length);
      for (let k = 0; k < raw.length; ++k) v[k] = (raw[k] << 24) >> 24;
      input = tf.tensor(v, info.shape, 'int32');
    }
    const runOnce = () => {
      let out = model.predict(input);
      if (!(out instanceof tf.Tensor)) out = Array.isArray(out) ? out : Object.values(out);
      const outs = out instanceof tf.Tensor ? [out] : out;
      outs[0].dataSync();
      outs.forEach((t) => t.dispose());
    };
    runOnce();  // warm-up: the first call also prepares the interpreter
    let iterations = 0;
    const start = process.hrtime.bigint();
    let seconds = 0;
    do {
      runOnce();
      ++iterations;
      seconds = Number(process.hrtime.bigint() - start) / 1e9;
    } while (seconds < minSeconds);
    input.dispose();
    console.log(JSON.stringify(
        {inferences_per_second: iterations / seconds, iterations: iterations, seconds: seconds}));
    process.exit(0);
  } catch (e) {
    console.error(`tflite_wasm_bench: ${e && e.message ? e.message : e}`);
    process.exit(1);
  }
})();
