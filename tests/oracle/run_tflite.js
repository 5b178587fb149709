// Runs single-op .tflite models through the TFLite interpreter (the WebAssembly build shipped in
// @tensorflow/tfjs-tflite) under plain node, as the conformance oracle of the int8 kernels.
//
// Usage: node run_tflite.js <node_modules dir> <manifest.json>
//   manifest: {"cases": [{"model": "a.tflite", "inputs": ["a0.bin", ...], "output": "a.out"}]}
// Inputs are raw bytes in the model input's type (int8, or float32 little-endian); the output
// file receives output 0's raw bytes (int8 or float32). One process runs every case so the WASM
// module is compiled once. Exit code 0 only when every case ran.
'use strict';
const fs = require('fs');
const path = require('path');

const [modulesDir, manifestPath] = process.argv.slice(2);
if (!modulesDir || !manifestPath) {
  console.error('usage: node run_tflite.js <node_modules dir> <manifest.json>');
  process.exit(2);
}

const {tf, tflite} = require('./tflite_node.js').load(modulesDir);


async function runCase(c) {
  const bytes = fs.readFileSync(c.model);
  const model = await tflite.loadTFLiteModel(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), {numThreads: 1});
  const inputs = model.inputs.map((info, i) => {
    const raw = fs.readFileSync(c.inputs[i]);
    const shape = info.shape;
    if (info.dtype === 'float32') {
      const f = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
      return tf.tensor(f, shape, 'float32');
    }
    const v = new Int32Array(raw.length);
    for (let k = 0; k < raw.length; ++k) v[k] = (raw[k] << 24) >> 24;
    return tf.tensor(v, shape, 'int32');
  });
  let out = model.predict(inputs.length === 1 ? inputs[0] : inputs);
  if (!(out instanceof tf.Tensor)) out = Array.isArray(out) ? out[0] : Object.values(out)[0];
  const data = out.dataSync();
  let buf;
  if (out.dtype === 'float32') {
    buf = Buffer.from(new Float32Array(data).buffer);
  } else {
    buf = Buffer.alloc(data.length);
    for (let k = 0; k < data.length; ++k) buf[k] = data[k] & 0xff;
  }
  fs.writeFileSync(c.output, buf);
  inputs.forEach((t) => t.dispose());
  out.dispose();
}

(async () => {
  tflite.setWasmPath(path.join(modulesDir, '@tensorflow/tfjs-tflite/wasm') + '/');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  let failed = 0;
  for (const c of manifest.cases) {
    try {
      await runCase(c);
    } catch (e) {
      ++failed;
      console.error(`case ${c.model}: ${e && e.message ? e.message : e}`);
    }
  }
  process.exit(failed === 0 ? 0 : 1);
})();
