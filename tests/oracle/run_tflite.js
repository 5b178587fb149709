// Runs single-op .tflite models through the TFLite interpreter (the WebAssembly build shipped in
// @tensorflow/tfjs-tflite) under plain node, as the conformance oracle of the int8 kernels.
//
// Usage: node run_tflite.js <node_modules dir> <manifest.json>
//   manifest: {"cases": [{"model": "a.tflite", "inputs": ["a0.bin", ...], "output": "a.out"}]}
// Inputs are raw bytes in the model input's type (int8, or float32 little-endian); the output
// file receives output 0's raw bytes (int8 or float32). One process runs every case so the WASM
// module is compiled once. Exit code 0 only when every case ran.
//
// A case may describe its tensors instead, for models with other element types or several
// outputs: "inputs": [{"file": "a0.bin", "type": "int8|uint8|int16|int32|float32|bool",
// "shape": [..]}] and "outputs": [{"file": "a.out0", "type":
// "int8|uint8|int16|int32|int64|float32|bool"}, ...]; every
// output is then written, little-endian in its TFLite type. With "nodes": "a.nodes" the run is
// profiled and the file receives the type of every node that ran, one per line:
// "TfLiteXNNPackDelegate" where the XNNPACK delegate (built into the package and applied by
// default) took the op over from TFLite's own kernel.
'use strict';
const fs = require('fs');
const path = require('path');

const [modulesDir, manifestPath] = process.argv.slice(2);
if (!modulesDir || !manifestPath) {
  console.error('usage: node run_tflite.js <node_modules dir> <manifest.json>');
  process.exit(2);
}

const {tf, tflite} = require('./tflite_node.js').load(modulesDir);


// A tfjs tensor from raw bytes of TFLite type `type`.
function inputTensor(raw, shape, type) {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.length);
  if (type === 'float32') {
    const f = new Float32Array(raw.length / 4);
    for (let k = 0; k < f.length; ++k) f[k] = view.getFloat32(4 * k, true);
    return tf.tensor(f, shape, 'float32');
  }
  if (type === 'bool') return tf.tensor(Array.from(raw, (b) => b !== 0), shape, 'bool');
  if (type === 'uint8') return tf.tensor(Int32Array.from(raw), shape, 'int32');
  if (type === 'int32') {
    const v = new Int32Array(raw.length / 4);
    for (let k = 0; k < v.length; ++k) v[k] = view.getInt32(4 * k, true);
    return tf.tensor(v, shape, 'int32');
  }
  if (type === 'int16') {
    // tfjs has no int16 dtype; the package narrows int32 tensors to the model's int16 input.
    const v = new Int32Array(raw.length / 2);
    for (let k = 0; k < v.length; ++k) v[k] = view.getInt16(2 * k, true);
    return tf.tensor(v, shape, 'int32');
  }
  const v = new Int32Array(raw.length);
  for (let k = 0; k < raw.length; ++k) v[k] = (raw[k] << 24) >> 24;
  return tf.tensor(v, shape, 'int32');
}

// The bytes of `data` (a tfjs dataSync() array) in TFLite type `type`.
function outputBytes(data, type) {
  const size = {int8: 1, uint8: 1, bool: 1, int16: 2, int32: 4, float32: 4, int64: 8}[type];
  const buf = Buffer.alloc(data.length * size);
  for (let k = 0; k < data.length; ++k) {
    const v = data[k];
    if (type === 'float32') buf.writeFloatLE(v, 4 * k);
    else if (type === 'int32') buf.writeInt32LE(v, 4 * k);
    else if (type === 'int16') buf.writeInt16LE(v, 2 * k);
    else if (type === 'int64') buf.writeBigInt64LE(BigInt(v), 8 * k);
    else buf[k] = Number(v) & 0xff;
  }
  return buf;
}

// The model's outputs in order, whatever shape predict() returned them in.
function outputList(model, out) {
  if (out instanceof tf.Tensor) return [out];
  if (Array.isArray(out)) return out;
  return model.outputs.map((info) => out[info.name]);
}

async function runCase(c) {
  const bytes = fs.readFileSync(c.model);
  const model = await tflite.loadTFLiteModel(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
      {numThreads: 1, enableProfiling: Boolean(c.nodes)});
  const inputs = model.inputs.map((info, i) => {
    const spec = c.inputs[i];
    if (typeof spec === 'object') {
      return inputTensor(fs.readFileSync(spec.file), spec.shape || info.shape, spec.type);
    }
    const raw = fs.readFileSync(spec);
    return inputTensor(raw, info.shape, info.dtype === 'float32' ? 'float32' : 'int8');
  });
  const predicted = model.predict(inputs.length === 1 ? inputs[0] : inputs);
  if (c.nodes) {
    fs.writeFileSync(c.nodes, model.getProfilingResults().map((p) => p.nodeType).join('\n'));
  }
  if (c.outputs) {
    const outs = outputList(model, predicted);
    c.outputs.forEach((spec, i) => {
      fs.writeFileSync(spec.file, outputBytes(outs[i].dataSync(), spec.type));
    });
    inputs.forEach((t) => t.dispose());
    outs.forEach((t) => t.dispose());
    return;
  }
  let out = predicted;
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
