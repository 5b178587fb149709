// Checks deploy/k8s offline (no cluster): every object against the Kubernetes API schema
// (kubernetes-models, generated from the Kubernetes OpenAPI definitions), the kustomization's
// resources, the references between objects, what the lab needs of them (two or more server
// replicas, gRPC health probes, board hosts only for agents, every listener of the server behind a
// declared container port and a Service), and the configuration files the ConfigMaps carry with
// the programs that read them (--check-config).
//
//   node check_k8s.mjs K8S_DIR NODE_MODULES BOARDLAB_SERVER BOARDLAB_AGENT BOARDLAB_CLI FIRMWARE_DIR
//
// FIRMWARE_DIR is the build's firmware directory: it stands for the image's /opt/boardlab/firmware
// (deploy/container/Containerfile), so an agent configuration must name a firmware we build.
//
// Exit status 0 when every check passes; otherwise each failure is printed and the status is 1.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dir, modules, serverBin, agentBin, cliBin, firmwareDir] = process.argv.slice(2);
const kImageFirmwareDir = "/opt/boardlab/firmware/";
const failures = [];
const fail = (what) => failures.push(what);

const { default: YAML } = await import(pathToFileURL(path.join(modules, "yaml/dist/index.js")));

function readObjects(file) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, file), "utf8"));
  const objects = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) fail(`${file}: ${doc.errors[0].message}`);
    const obj = doc.toJS();
    if (obj) objects.push({ file, obj });
  }
  return objects;
}

// The model class of an object's kind, e.g. apps/v1 Deployment -> kubernetes-models/apps/v1/
// Deployment.js (core kinds live under v1/).
async function modelOf(obj) {
  const file = path.join(modules, "kubernetes-models", obj.apiVersion, `${obj.kind}.js`);
  if (!fs.existsSync(file)) return null;
  return (await import(pathToFileURL(file)))[obj.kind];
}

async function checkSchemas(objects) {
  for (const { file, obj } of objects) {
    const Model = await modelOf(obj);
    if (Model === null) {
      fail(`${file}: ${obj.apiVersion} ${obj.kind} is not a Kubernetes API kind`);
      continue;
    }
    try {
      new Model(obj).validate();
    } catch (error) {
      fail(`${file}: ${obj.kind} ${obj.metadata?.name}: ${error.message}`);
    }
  }
}

function checkKustomization(kustomization, files) {
  if (kustomization.namespace !== "boardlab") fail("kustomization.yaml: namespace is not boardlab");
  const listed = new Set(kustomization.resources ?? []);
  for (const file of listed) {
    if (!fs.existsSync(path.join(dir, file))) fail(`kustomization.yaml: ${file} does not exist`);
  }
  for (const file of files) {
    const example = file.endsWith(".example.yaml");
    if (file === "kustomization.yaml") continue;
    if (example && listed.has(file)) fail(`kustomization.yaml: applies ${file}, a placeholder`);
    if (!example && !listed.has(file)) fail(`kustomization.yaml: ${file} is not in resources`);
  }
}

const byKind = (objects, kind) => objects.filter(({ obj }) => obj.kind === kind);
const named = (objects, kind, name) =>
  objects.find(({ obj }) => obj.kind === kind && obj.metadata.name === name);

// Every ConfigMap, Secret and claim a workload mounts or reads exists, every mount has its volume.
function checkReferences(objects, secrets) {
  for (const { file, obj } of [...byKind(objects, "Deployment"), ...byKind(objects, "DaemonSet")]) {
    const spec = obj.spec.template.spec;
    const where = `${file}: ${obj.kind} ${obj.metadata.name}`;
    const volumes = new Set(spec.volumes.map((v) => v.name));
    for (const v of spec.volumes) {
      if (v.configMap && !named(objects, "ConfigMap", v.configMap.name)) {
        fail(`${where}: volume ${v.name} names ConfigMap ${v.configMap.name}, which is not defined`);
      }
      if (v.secret && !named(secrets, "Secret", v.secret.secretName)) {
        fail(`${where}: volume ${v.name} names Secret ${v.secret.secretName}, not in secrets.example.yaml`);
      }
      const claim = v.persistentVolumeClaim?.claimName;
      if (claim && !named(objects, "PersistentVolumeClaim", claim)) {
        fail(`${where}: volume ${v.name} names claim ${claim}, which is not defined`);
      }
    }
    for (const c of spec.containers) {
      for (const m of c.volumeMounts ?? []) {
        if (!volumes.has(m.name)) fail(`${where}: mount ${m.mountPath} names no volume ${m.name}`);
      }
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        const secret = ref && named(secrets, "Secret", ref.name);
        if (ref && !(secret && ref.key in secret.obj.stringData)) {
          fail(`${where}: env ${e.name} reads ${ref.name}/${ref.key}, not in secrets.example.yaml`);
        }
      }
    }
  }
  for (const { file, obj } of byKind(objects, "Service")) {
    const pods = [...byKind(objects, "Deployment"), ...byKind(objects, "DaemonSet")].filter(
      ({ obj: w }) => Object.entries(obj.spec.selector).every(
        ([k, v]) => w.spec.template.metadata.labels[k] === v));
    if (pods.length === 0) fail(`${file}: Service ${obj.metadata.name} selects no workload`);
  }
}

function checkServer(objects) {
  const server = named(objects, "Deployment", "boardlab-server");
  if (!server) return fail("no Deployment boardlab-server");
  if (!(server.obj.spec.replicas >= 2)) fail("boardlab-server: fewer than 2 replicas");
  const container = server.obj.spec.template.spec.containers[0];
  for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
    const command = container[probe]?.exec?.command ?? [];
    if (command[0] !== "boardlab" || command.at(-1) !== "health") {
      fail(`boardlab-server: ${probe} is not the client's gRPC health check`);
    }
  }
  const agent = named(objects, "DaemonSet", "boardlab-agent");
  if (!agent) return fail("no DaemonSet boardlab-agent");
  if (agent.obj.spec.template.spec.nodeSelector?.["boardlab.io/board-host"] !== "true") {
    fail("boardlab-agent: not limited to nodes labelled boardlab.io/board-host=true");
  }
  return container;
}

// The server's listeners and their defaults (server/config.h): each that is on must listen beyond
// the pod's loopback, on a port its container declares, behind a Service, or nobody reaches it.
const kServerListeners = {
  listen: "127.0.0.1:7400",
  metrics_listen: "127.0.0.1:9400",
  http_listen: "127.0.0.1:9480",
};

function checkListeners(objects, serverContainer) {
  const serverConfig = named(objects, "ConfigMap", "boardlab-server-config");
  if (!serverConfig || !serverContainer) return;
  const config = YAML.parse(serverConfig.obj.data["server.yaml"]) ?? {};
  const declared = new Map((serverContainer.ports ?? []).map((p) => [p.containerPort, p.name]));
  const services = byKind(objects, "Service").filter(
    ({ obj }) => obj.spec.selector["app.kubernetes.io/name"] === "boardlab-server");
  for (const [key, fallback] of Object.entries(kServerListeners)) {
    const address = String(config[key] ?? fallback);
    if (address === "" || address === "off") continue;
    const colon = address.lastIndexOf(":");
    const host = address.slice(0, colon);
    const port = Number(address.slice(colon + 1));
    if (host === "127.0.0.1" || host === "localhost" || host === "[::1]") {
      fail(`server.yaml: ${key} ${address} listens on the pod's loopback only`);
      continue;
    }
    if (!declared.has(port)) {
      fail(`boardlab-server: no container port ${port} for ${key} ${address}`);
      continue;
    }
    const name = declared.get(port);
    const served = services.some(({ obj }) => obj.spec.ports.some(
      (p) => p.targetPort === name || p.targetPort === port));
    if (!served) fail(`boardlab-server: no Service sends traffic to ${key} (port ${port})`);
  }
}

// Every Service's target port is one the containers it selects declare (by name or number).
function checkServicePorts(objects) {
  const workloads = [...byKind(objects, "Deployment"), ...byKind(objects, "DaemonSet")];
  for (const { file, obj } of byKind(objects, "Service")) {
    const selected = workloads.filter(({ obj: w }) => Object.entries(obj.spec.selector).every(
      ([k, v]) => w.spec.template.metadata.labels[k] === v));
    const ports = selected.flatMap(
      ({ obj: w }) => w.spec.template.spec.containers.flatMap((c) => c.ports ?? []));
    for (const p of obj.spec.ports) {
      const target = p.targetPort ?? p.port;
      if (!ports.some((c) => c.name === target || c.containerPort === target)) {
        fail(`${file}: Service ${obj.metadata.name} port ${p.name} targets ${target}, ` +
             "which no selected container declares");
      }
    }
  }
}

// Runs `program args...`; a failure is recorded with the program's own message.
function run(what, program, args) {
  try {
    execFileSync(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    fail(`${what}: ${program} ${args.join(" ")}: ${String(error.stderr || error.message).trim()}`);
  }
}

// The probe's command line, run against a port nobody listens on (with a CA of our own in place
// of the Secret's): the client must accept every option and say the server is unreachable
// (exit 5), not refuse the command line (exit 2).
function checkProbeCommand(command, tmp) {
  const ca = path.join(tmp, "ca.crt");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                           "-subj", "/CN=boardlab-server", "-keyout", path.join(tmp, "ca.key"),
                           "-out", ca], { stdio: "ignore" });
  const args = command.slice(1).map((arg, i, all) =>
    all[i - 1] === "--server" ? "127.0.0.1:1" : all[i - 1] === "--tls-ca" ? ca : arg);
  try {
    execFileSync(cliBin, args, { stdio: ["ignore", "pipe", "pipe"] });
    fail("probe: `boardlab health` passed against a port nobody listens on");
  } catch (error) {
    if (error.status !== 5) {
      fail(`probe: boardlab ${args.join(" ")} exited ${error.status}, not 5 (unreachable): ` +
           String(error.stderr).trim());
    }
  }
}

// A workload's command line with its configuration file at `config` and `--check-config` added:
// the program checks the file as the pod would start it (`$(NODE_NAME)` is `node`).
function checkArgs(workload, config, node) {
  const args = workload.spec.template.spec.containers[0].args.slice(1).map((arg, i, all) =>
    all[i - 1] === "--config" ? config : arg.replaceAll("$(NODE_NAME)", node));
  return ["--check-config", ...args];
}

// The ConfigMaps' configuration files, checked by the programs that read them.
function checkConfigs(objects, serverContainer) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "boardlab-k8s-"));
  const server = named(objects, "Deployment", "boardlab-server");
  const serverConfig = named(objects, "ConfigMap", "boardlab-server-config");
  if (!serverConfig) fail("no ConfigMap boardlab-server-config");
  else if (server) {
    const file = path.join(tmp, "server.yaml");
    fs.writeFileSync(file, serverConfig.obj.data["server.yaml"]);
    run("server.yaml", serverBin, checkArgs(server.obj, file, ""));
  }
  const agent = named(objects, "DaemonSet", "boardlab-agent");
  const agentConfig = named(objects, "ConfigMap", "boardlab-agent-config");
  for (const [name, text] of Object.entries(agentConfig?.obj.data ?? {})) {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, text.replaceAll(kImageFirmwareDir, `${firmwareDir}/`));
    if (agent) run(`agent ${name}`, agentBin, checkArgs(agent.obj, file, name.replace(/\.yaml$/, "")));
  }
  if (serverContainer) checkProbeCommand(serverContainer.readinessProbe.exec.command, tmp);
  fs.rmSync(tmp, { recursive: true, force: true });
}

const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort();
const kustomization = readObjects("kustomization.yaml")[0]?.obj ?? {};
checkKustomization(kustomization, files);
const objects = (kustomization.resources ?? []).flatMap(readObjects);
const secrets = files.filter((f) => f.endsWith(".example.yaml")).flatMap(readObjects);
await checkSchemas([...objects, ...secrets]);
checkReferences(objects, secrets);
const serverContainer = checkServer(objects);
checkServicePorts(objects);
checkListeners(objects, serverContainer);
checkConfigs(objects, serverContainer);

for (const failure of failures) console.error(`FAIL ${failure}`);
console.log(`${objects.length + secrets.length} objects in ${files.length} files: ` +
            `${failures.length === 0 ? "ok" : `${failures.length} failures`}`);
process.exit(failures.length === 0 ? 0 : 1);
