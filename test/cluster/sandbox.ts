/**
 * The sandbox: the local control plane with a demo, reachable from an ordinary shell.
 *
 *   up      build (once) and start it in the background, then print how to use it
 *   down    stop it; nothing is left running
 *   status  say whether it runs and how to reach it
 *
 * Internally `up` starts `serve` (host side: loopback ports bridged to Unix sockets), which starts
 * `inner` inside the network namespace (the cluster, the pod backend, the other ends of the sockets).
 */
import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ApiException, KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { serverSideApply } from "../../kube/apply.ts";
import { ensureBinaries } from "./binaries.ts";
import { harnessFieldManager } from "./bootstrap.ts";
import { dialTcp, dialUnix, listen, type PipeServer, pipeServer } from "./bridge.ts";
import { kubeconfigYaml } from "./cluster-pki.ts";
import { startControlPlane } from "./control-plane.ts";
import { demo, demoHistory, demoManagedWorkload, demoObjects } from "./demo.ts";
import { network, ports } from "./layout.ts";
import {
  applyOverlay,
  injectedCaBundle,
  operatorEndpoints,
  serviceAccountKubeconfig,
  startOperatorProcess,
  waitForOperatorReady,
} from "./napwake-install.ts";
import { repoRoot } from "./paths.ts";
import { startPodBackend } from "./pod-backend.ts";
import { waitFor } from "./process.ts";
import { startServiceClient } from "./service-client.ts";

const here = dirname(fileURLToPath(import.meta.url));

interface SandboxConfig {
  command: string;
  stateDir: string;
  apiPort: number;
  demoPort: number;
}

interface SandboxState {
  pid: number;
  apiPort: number;
  demoPort: number;
  kubeconfig: string;
  binDir: string;
  envFile: string;
}

/** `status`'s exit code when no sandbox runs or starts. */
const notRunningExitCode = 3;

const USAGE = `usage: ./scripts/sandbox.sh [up|down|status] [--api-port=PORT] [--demo-port=PORT] [--state=DIR]

  up (the default)  build what is missing, start the sandbox in the background, say how to reach it
  down              stop it, cluster and all, even while it is still starting
  status            say whether it runs (or is starting) and how to reach it; exit code 3 when it does not

  --api-port PORT   the API server on 127.0.0.1 (default 16443; env NAPWAKE_SANDBOX_API_PORT)
  --demo-port PORT  the demo Service on 127.0.0.1 (default 18080; env NAPWAKE_SANDBOX_DEMO_PORT)
  --state DIR       where its files and logs go (default .napwake/sandbox; env NAPWAKE_SANDBOX_STATE)
`;

function parseConfig(argv: string[]): SandboxConfig | "help" {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: "boolean", short: "h" },
      state: {
        type: "string",
        default: process.env.NAPWAKE_SANDBOX_STATE ?? join(repoRoot, ".napwake", "sandbox"),
      },
      "api-port": { type: "string", default: process.env.NAPWAKE_SANDBOX_API_PORT ?? "16443" },
      "demo-port": { type: "string", default: process.env.NAPWAKE_SANDBOX_DEMO_PORT ?? "18080" },
    },
  });
  const command = positionals[0] ?? "status";
  if (positionals.length > 1) {
    throw new Error(`one command at a time, got ${positionals.join(" and ")}: use up, down or status`);
  }
  if (values.help || command === "help") return "help";
  if (!["up", "down", "status", "serve", "inner"].includes(command)) {
    throw new Error(`unknown command "${command}": use up, down or status (--help says more)`);
  }
  const port = (name: string, value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 65535)
      throw new Error(`--${name} must be a TCP port, got "${value}"`);
    return n;
  };
  return {
    command,
    // The real path: a sandbox is known by it, however a later command names the directory (a symlink).
    stateDir: realPath(resolve(values.state)),
    apiPort: port("api-port", values["api-port"]),
    demoPort: port("demo-port", values["demo-port"]),
  };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Empties `stateDir` for a new sandbox, an earlier one's logs included. Anything in it a sandbox does not write
 * is refused rather than deleted, and so is a file: `--state` may name any path.
 */
async function freshStateDir(stateDir: string): Promise<void> {
  const entries = await readdir(stateDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw new Error(
      `--state ${stateDir} cannot be the sandbox's directory (${err.code}): name a new directory`,
    );
  });
  const ours = new Set(Object.values(files(stateDir)).map((path) => basename(path)));
  const foreign = entries.filter((entry) => !ours.has(entry));
  if (foreign.length > 0) {
    throw new Error(
      `--state ${stateDir} holds files no sandbox wrote (${foreign.slice(0, 3).join(", ")}` +
        `${foreign.length > 3 ? ", ..." : ""}): name an empty or new directory`,
    );
  }
  await rm(stateDir, { recursive: true, force: true });
  await mkdir(stateDir, { recursive: true });
}

const files = (stateDir: string) => ({
  state: join(stateDir, "sandbox.json"),
  // The pid of a sandbox still starting: sandbox.json is written only once it is ready.
  starting: join(stateDir, "starting.pid"),
  log: join(stateDir, "sandbox.log"),
  innerReady: join(stateDir, "inner-ready"),
  kubeconfig: join(stateDir, "kubeconfig"),
  env: join(stateDir, "env.sh"),
  clusterDir: join(stateDir, "cluster"),
  apiSocket: join(stateDir, "apiserver.sock"),
  demoSocket: join(stateDir, "demo.sock"),
  // kubectl's discovery cache, for the shells that source env.sh.
  kubectlCache: join(stateDir, "kubectl-cache"),
});

const say = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Whether `pid` runs, and, given `stateDir`, is the sandbox of that state directory (started from any checkout),
 * not another process that reused the pid of one that ended.
 */
function alive(pid: number, stateDir?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (stateDir === undefined) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(`--state=${stateDir}`);
  } catch {
    return true;
  }
}

async function readState(stateDir: string): Promise<SandboxState | undefined> {
  try {
    const state = JSON.parse(await readFile(files(stateDir).state, "utf8")) as SandboxState;
    return alive(state.pid, stateDir) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** The pid of a sandbox that was started and is still starting, or undefined. */
async function readStarting(stateDir: string): Promise<number | undefined> {
  const pid = Number(await readFile(files(stateDir).starting, "utf8").catch(() => ""));
  return Number.isInteger(pid) && pid > 0 && alive(pid, stateDir) ? pid : undefined;
}

async function up(config: SandboxConfig): Promise<void> {
  const running = await readState(config.stateDir);
  if (running) {
    printUsage(running);
    return;
  }
  const starting = await readStarting(config.stateDir);
  if (starting) {
    say(`napwake sandbox: already starting (pid ${starting}, log: ${files(config.stateDir).log})`);
    return;
  }
  say("napwake sandbox: building the control plane binaries if needed (a first build takes several minutes)");
  await ensureBinaries();
  await freshStateDir(config.stateDir);
  const f = files(config.stateDir);
  const log = openSync(f.log, "a");
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(import.meta.url),
      "serve",
      `--state=${config.stateDir}`,
      `--api-port=${config.apiPort}`,
      `--demo-port=${config.demoPort}`,
    ],
    { detached: true, stdio: ["ignore", log, log] },
  );
  child.unref();
  // A sandbox that ends before it is ready (stopped by `down`, or failed) is reported at once: an error thrown in
  // waitFor's check would only be retried until its deadline. Listened for before anything else is awaited.
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code, signal) => {
      void rm(f.starting, { force: true });
      reject(new Error(`the sandbox exited (${signal ?? code}) before it was ready; see ${f.log}`));
    }),
  );
  await writeFile(f.starting, String(child.pid));
  say(`napwake sandbox: starting (log: ${f.log})`);
  const ready = waitFor(() => readState(config.stateDir), {
    what: "the sandbox to be ready",
    timeoutMs: 300_000,
    intervalMs: 500,
  });
  // Timed out, it may still be starting: its pid file stays, so `down` can stop it.
  const state = await Promise.race([ready, exited]).catch(async (err: Error) => {
    const tail = (await readFile(f.log, "utf8").catch(() => "")).split("\n").slice(-20).join("\n");
    throw new Error(`${err.message}\n--- last lines of ${f.log} ---\n${tail}`);
  });
  printUsage(state);
}

function printUsage(state: SandboxState): void {
  const operatorLog = join(files(dirname(state.kubeconfig)).clusterDir, "logs", "napwake-operator.log");
  say(`
Napwake sandbox is running (pid ${state.pid}).

From any shell on this machine:
  source ${state.envFile}          # sets KUBECONFIG and puts kubectl on PATH
  kubectl get nodes
  kubectl -n ${demo.namespace} get deploy,pods,endpointslices
  curl -sS http://127.0.0.1:${state.demoPort}/       # the demo Service; one of its pods answers
  kubectl top pods -n ${demo.namespace}               # metrics-server, about a minute after a pod starts

Napwake runs in it (log: ${operatorLog}).
The demo is idle: Napwake pauses it when it has been idle for its window (${demo.idleWindow}; shorter while the
forecast is trusted), remembering its replica count. Its forecast starts from the demo's two weeks in Prometheus (busy 08:00-18:00
UTC), so it is trusted at once: in those hours it vetoes the pause until the expected activity fails to come
(45 to 60 minutes after the last activity), and it pre-wakes the demo just before 08:00 UTC.
  kubectl napwake status -n ${demo.namespace}         # phase, why (REASON), replicas held, idle for, forecast
  kubectl -n ${demo.namespace} get managedworkloads -o wide
  kubectl -n ${demo.namespace} get events             # ForecastHistoryLearned: what the forecast learned
  kubectl napwake resume ${demo.name} -n ${demo.namespace}   # wakes it (if paused) to exactly its old count
  kubectl napwake pause ${demo.name} -n ${demo.namespace}    # pauses it now, by hand: no pre-wake then;
                                                     # curl -sS: "Empty reply from server" (no pod answers)
  kubectl -n ${demo.namespace} get managedworkload ${demo.name}.deployment \\
    -o jsonpath='{.status.conditions[?(@.type=="Paused")].message}{"\\n"}'   # why it is paused, or awake

It also recommends requests from two weeks of the demo's usage in Prometheus (audit: nothing is changed):
  kubectl napwake recommendations -n ${demo.namespace}   # current, recommended, change, mode, why
  kubectl get rightsizings -A

Its admission webhooks stamp napwake.dev/managed-by on a managed workload's next write, and refuse bad
napwake metadata:
  kubectl -n ${demo.namespace} annotate deploy ${demo.name} --overwrite napwake.dev/paused-from=abc  # refused, with the fix

Stop it with: ./scripts/sandbox.sh down
`);
}

async function down(config: SandboxConfig): Promise<void> {
  const pid = (await readState(config.stateDir))?.pid ?? (await readStarting(config.stateDir));
  if (!pid) {
    say("napwake sandbox: not running");
    return;
  }
  say(`napwake sandbox: stopping (pid ${pid})`);
  process.kill(pid, "SIGTERM");
  await waitFor(async () => (alive(pid) ? undefined : true), {
    what: `sandbox process ${pid} to exit`,
    timeoutMs: 60_000,
  }).catch(() => process.kill(pid, "SIGKILL"));
  // The kubeconfig and env.sh of the sandbox just stopped point at ports nothing serves any more: sourced later,
  // they would mislead. The log stays, for what happened.
  const f = files(config.stateDir);
  const left = [f.state, f.starting, f.innerReady, f.kubeconfig, f.env];
  await Promise.all(left.map((path) => rm(path, { force: true })));
  say("napwake sandbox: stopped (a shell that sourced its env.sh now points at nothing: open a new one)");
}

async function status(config: SandboxConfig): Promise<void> {
  const state = await readState(config.stateDir);
  if (state) return printUsage(state);
  const starting = await readStarting(config.stateDir);
  if (starting) {
    say(
      `napwake sandbox: starting (pid ${starting}, log: ${files(config.stateDir).log}); ask again in a minute`,
    );
    return;
  }
  say("napwake sandbox: not running (start it with: ./scripts/sandbox.sh)");
  // As service managers answer (LSB's "not running"), so a script can ask.
  process.exitCode = notRunningExitCode;
  // A sandbox that ended without `down` (the machine restarted, the process was killed) leaves these behind.
  if (existsSync(files(config.stateDir).env)) {
    say(
      `  ${files(config.stateDir).env} and its kubeconfig are left from an earlier sandbox: they point at nothing`,
    );
  }
}

/** Host side: bridges loopback ports to the cluster's sockets and keeps the inner process alive. */
async function serve(config: SandboxConfig): Promise<void> {
  const f = files(config.stateDir);
  const binDir = await ensureBinaries();
  const inner = spawn(
    join(here, "netns-run.sh"),
    [process.execPath, fileURLToPath(import.meta.url), "inner", `--state=${config.stateDir}`],
    { stdio: ["pipe", "inherit", "inherit"] },
  );
  let stopping = false;
  const bridges: PipeServer[] = [];
  const innerExited = new Promise<number | null>((res) => inner.once("exit", res));
  innerExited.then((code) => {
    if (!stopping) {
      process.stderr.write(`sandbox: the cluster exited (${code}); stopping\n`);
      process.exit(1);
    }
  });
  // From the start, so `down` stops a sandbox still starting: the namespace's processes end with the inner side.
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.all(bridges.map((b) => b.close()));
    inner.stdin?.end();
    // Still starting, the inner side reads no stdin yet: the signal ends its network namespace instead.
    if (!existsSync(f.innerReady)) inner.kill("SIGTERM");
    await innerExited;
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  await waitFor(async () => (existsSync(f.innerReady) ? true : undefined), {
    what: "the cluster inside the network namespace",
    timeoutMs: 300_000,
    intervalMs: 500,
  });
  const apiBridge = pipeServer(dialUnix(f.apiSocket));
  const demoBridge = pipeServer(dialUnix(f.demoSocket));
  bridges.push(apiBridge, demoBridge);
  await listen(apiBridge.server, config.apiPort, "127.0.0.1");
  await listen(demoBridge.server, config.demoPort, "127.0.0.1");
  const admin = new KubeConfig();
  admin.loadFromFile(join(f.clusterDir, "kubeconfig"));
  const user = admin.getCurrentUser();
  await writeFile(
    f.kubeconfig,
    kubeconfigYaml({
      server: `https://127.0.0.1:${config.apiPort}`,
      caCert: admin.getCurrentCluster()?.caFile ?? "",
      clientCert: user?.certFile ?? "",
      clientKey: user?.keyFile ?? "",
    }),
  );
  // The repository's bin/ holds kubectl-napwake, so `kubectl napwake` works.
  await writeFile(
    f.env,
    // Its own kubectl discovery cache: a new sandbox is a new cluster at the same address.
    `export KUBECONFIG=${f.kubeconfig}\nexport KUBECACHEDIR=${f.kubectlCache}\nexport PATH=${join(repoRoot, "bin")}:${binDir}:$PATH\n`,
  );
  const state: SandboxState = {
    pid: process.pid,
    apiPort: config.apiPort,
    demoPort: config.demoPort,
    kubeconfig: f.kubeconfig,
    binDir,
    envFile: f.env,
  };
  await writeFile(f.state, JSON.stringify(state, null, 2));
  // Ready: sandbox.json says so from now on, whether or not `up` is still there to tidy up.
  await rm(f.starting, { force: true });
}

/** Inside the network namespace: the cluster, the pod backend, the demo and the far ends of the bridges. */
/**
 * Creates the demo's objects as `kubectl create` would, once: a one-off write, not a declarative apply that would
 * set spec.replicas again, so Napwake's GitOps check has nothing to report on the demo.
 */
async function createDemo(objects: KubernetesObjectApi): Promise<void> {
  for (const object of demoObjects()) {
    try {
      await objects.create(object, undefined, undefined, "kubectl-create");
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
    }
  }
}

async function inner(config: SandboxConfig): Promise<void> {
  const f = files(config.stateDir);
  const binDir = await ensureBinaries();
  const cluster = await startControlPlane({ binDir, stateDir: f.clusterDir });
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const backend = await startPodBackend(kc);
  const services = await startServiceClient(kc);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  await createDemo(objects);
  process.stderr.write("sandbox: loading two weeks of the demo's usage into Prometheus...\n");
  await cluster.prometheus.loadHistory(demoHistory(Date.now() - 10 * 60_000));
  // Napwake installed from its sandbox overlay, as `kubectl apply -k` installs it anywhere; the operator runs
  // as a process here (kwok runs no containers), as the install's ServiceAccount, behind the install's
  // Services (their EndpointSlices point at the process).
  await applyOverlay({ binDir, kubeconfig: cluster.kubeconfig, overlay: "kustomize/overlays/sandbox" });
  await serverSideApply(
    objects,
    operatorEndpoints({
      namespace: "napwake-system",
      ip: network.operatorIp,
      webhookPort: ports.operatorWebhook,
      metricsPort: ports.operatorMetrics,
    }),
    harnessFieldManager,
  );
  const operatorKubeconfig = await serviceAccountKubeconfig({
    kc,
    namespace: "napwake-system",
    serviceAccount: "napwake-operator",
    server: `https://127.0.0.1:${ports.apiServer}`,
    caFile: cluster.pki.caCert,
    file: join(f.clusterDir, "napwake-operator.kubeconfig"),
  });
  // The sandbox's short check intervals, so the demo pauses within minutes: the same as its overlay's.
  const operator = startOperatorProcess({
    kubeconfig: operatorKubeconfig,
    logDir: cluster.paths.logs,
    flags: [
      "--namespace=napwake-system",
      "--pod-name=napwake-sandbox",
      "--check-interval=10s",
      "--paused-check-interval=30s",
      `--prometheus-url=${cluster.prometheus.url}`,
      `--health-port=${ports.operatorHealth}`,
      `--webhook-host=${network.operatorIp}`,
      `--webhook-port=${ports.operatorWebhook}`,
    ],
  });
  await waitForOperatorReady(operator, ports.operatorHealth);
  await waitFor(() => injectedCaBundle(kc, "napwake"), {
    what: "the operator to inject the caBundle into the webhook configurations",
    timeoutMs: 60_000,
    process: operator,
  });
  // After the webhooks answer: the ManagedWorkload webhook fails closed.
  await serverSideApply(objects, [demoManagedWorkload()], harnessFieldManager);
  await waitFor(
    async () => (services.endpoints(demo.namespace, demo.name, demo.port).length > 0 ? true : undefined),
    {
      what: "the demo Service to have a ready endpoint",
      timeoutMs: 60_000,
    },
  );
  const apiSocket = pipeServer(dialTcp("127.0.0.1", ports.apiServer));
  const demoSocket = pipeServer(() => services.connect(demo.namespace, demo.name, demo.port));
  const sockets = [apiSocket, demoSocket];
  await rm(f.apiSocket, { force: true });
  await rm(f.demoSocket, { force: true });
  await listen(apiSocket.server, f.apiSocket);
  await listen(demoSocket.server, f.demoSocket);
  await writeFile(f.innerReady, "");
  process.stderr.write("sandbox: cluster ready\n");

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.all(sockets.map((s) => s.close()));
    await operator.stop();
    await services.stop();
    await backend.stop();
    await cluster.stop();
    process.exit(0);
  };
  // The host side holds our stdin: when it goes away, so do we.
  process.stdin.on("end", shutdown);
  process.stdin.on("close", shutdown);
  process.stdin.resume();
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

const commands: Record<string, (c: SandboxConfig) => Promise<void>> = { up, down, status, serve, inner };
function main(): void {
  let config: SandboxConfig | "help";
  try {
    config = parseConfig(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`napwake sandbox: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (config === "help") {
    process.stdout.write(USAGE);
    return;
  }
  const run = config;
  commands[run.command]?.(run).catch((err: Error) => {
    process.stderr.write(`napwake sandbox ${run.command}: ${err.message}\n`);
    process.exit(1);
  });
}
main();
