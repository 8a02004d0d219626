/**
 * The operator at scale: N ManagedWorkloads (each a one-replica Deployment with a kwok pod) in the local
 * control plane, the real operator process reconciling them with a 10 s check interval (a metrics.k8s.io
 * read per awake workload per check). One cluster grows through the counts; at each count it measures
 *   - the API request rate over 60 s without the operator (the peer) and with it, steady, after every
 *     ManagedWorkload has a phase; the difference is the operator's;
 *   - the operator's resident memory and CPU seconds per minute in that window;
 *   - wake latency: a sample of workloads paused with napwake.dev/pause-requested, then resumed one at a
 *     time with napwake.dev/resume-requested; from the patch returning to the Deployment's spec.replicas
 *     being 1 in this process's informer, while every other workload's periodic checks run.
 * Run inside the network namespace:
 *
 *   test/cluster/netns-run.sh npx node bench/operator-scale.ts [counts=1000,5000] [budget-minutes=25]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
} from "@kubernetes/client-node";
import { annotations } from "../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd } from "../api/managedworkload.ts";
import { serverSideApply } from "../kube/apply.ts";
import { ensureBinaries } from "../test/cluster/binaries.ts";
import { harnessFieldManager, kwokNodes } from "../test/cluster/bootstrap.ts";
import { startControlPlane } from "../test/cluster/control-plane.ts";
import { network, nodeIp, nodeName, ports } from "../test/cluster/layout.ts";
import { installCrds, startOperatorProcess } from "../test/cluster/napwake-install.ts";
import { type ClientTls, loadTls } from "../test/cluster/probe.ts";
import type { RunningProcess } from "../test/cluster/process.ts";
import { percentile, table } from "./format.ts";
import { type Counters, cpuSeconds, mergeCounters, rates, rssKiB, scrapeCounters } from "./process-probes.ts";

const counts = (process.argv[2] ?? "1000,5000")
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const budgetMs = Number(process.argv[3] ?? 25) * 60_000;
const namespaceCount = 50;
const sampleSize = 50;
/** Every sampleEvery-th workload carries the sample label, so the bench's informer holds only those. */
const sampleEvery = 20;
const windowSeconds = 60;
const createConcurrency = 16;
const checkInterval = "10s";
const partOf = "napwake-bench";
const sampleLabel = "napwake-bench/sample";

const began = Date.now();
const log = (line: string) =>
  process.stderr.write(`[bench ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const workloadName = (i: number) => `w${String(i).padStart(5, "0")}`;
const namespaceOf = (i: number) => `bench-${String(i % namespaceCount).padStart(2, "0")}`;

// ---- cluster setup ----

/** Three more kwok nodes with room for thousands of pods (the harness's three hold 110 each). */
function roomyNodes(): KubernetesObject[] {
  const [template] = kwokNodes() as (KubernetesObject & { status?: object })[];
  if (!template) throw new Error("kwokNodes() returned no template");
  const room = { cpu: "64", memory: "256Gi", pods: "2500" };
  return [3, 4, 5].map((i) => ({
    ...template,
    metadata: {
      ...template.metadata,
      name: nodeName(i),
      labels: { ...template.metadata?.labels, "kubernetes.io/hostname": nodeName(i) },
      annotations: {
        ...template.metadata?.annotations,
        "metrics.k8s.io/resource-metrics-path": `/metrics/nodes/${nodeName(i)}/metrics/resource`,
      },
    },
    status: {
      addresses: [
        { type: "InternalIP", address: nodeIp(i) },
        { type: "Hostname", address: nodeName(i) },
      ],
      capacity: room,
      allocatable: room,
    },
  }));
}

function deployment(i: number): V1Deployment {
  const name = workloadName(i);
  const labels = {
    app: name,
    "app.kubernetes.io/part-of": partOf,
    ...(i % sampleEvery === 0 ? { [sampleLabel]: "true" } : {}),
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: namespaceOf(i), labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, "app.kubernetes.io/part-of": partOf } },
        spec: { containers: [{ name: "app", image: "fake" }] },
      },
    },
  };
}

function managedWorkload(i: number): ManagedWorkload {
  return {
    apiVersion: managedWorkloadCrd.apiVersion,
    kind: managedWorkloadCrd.kind,
    metadata: { name: workloadName(i), namespace: namespaceOf(i) },
    // The longest window: nothing pauses by itself during the run, so every workload stays awake and is
    // checked (pod CPU from metrics.k8s.io) every check interval.
    spec: { targetRef: { kind: "Deployment", name: workloadName(i) }, idle: { window: "168h" } },
  };
}

const alreadyExists = (err: unknown) => (err as { code?: number }).code === 409;

/** Creates workloads [from, to) with bounded concurrency; stops early at the deadline. Returns the count reached. */
async function createWorkloads(kc: KubeConfig, from: number, to: number, deadline: number): Promise<number> {
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  let next = from;
  let done = 0;
  const startedAt = Date.now();
  const worker = async () => {
    while (next < to && Date.now() < deadline) {
      const i = next++;
      const body = deployment(i);
      const namespace = namespaceOf(i);
      await apps.createNamespacedDeployment({ namespace, body }).catch((err) => {
        if (!alreadyExists(err)) throw err;
      });
      await custom
        .createNamespacedCustomObject({
          group: managedWorkloadCrd.group,
          version: managedWorkloadCrd.version,
          namespace,
          plural: managedWorkloadCrd.plural,
          body: managedWorkload(i),
        })
        .catch((err) => {
          if (!alreadyExists(err)) throw err;
        });
      done++;
      if (done % 500 === 0) {
        const perSecond = done / ((Date.now() - startedAt) / 1000);
        log(`created ${from + done}/${to} workloads (${perSecond.toFixed(0)} Deployment+MW pairs/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: createConcurrency }, worker));
  return Math.min(next, to);
}

/** Waits until every bench Deployment has its pod available (or the deadline); returns how many do. */
async function waitForPods(kc: KubeConfig, n: number, deadline: number): Promise<number> {
  const apps = kc.makeApiClient(AppsV1Api);
  for (;;) {
    const list = await apps.listDeploymentForAllNamespaces({
      labelSelector: `app.kubernetes.io/part-of=${partOf}`,
      resourceVersion: "0",
    });
    const available = list.items.filter((d) => (d.status?.availableReplicas ?? 0) >= 1).length;
    if (available >= n || Date.now() > deadline) return available;
    log(`pods available: ${available}/${n}`);
    await sleep(10_000);
  }
}

// ---- the operator ----

function startOperator(kubeconfig: string, logDir: string): RunningProcess {
  return startOperatorProcess({
    kubeconfig,
    logDir,
    flags: [
      "--namespace=napwake-system",
      "--pod-name=napwake-bench",
      `--check-interval=${checkInterval}`,
      "--paused-check-interval=30s",
      "--max-concurrent-reconciles=8",
      "--health-port=0",
    ],
  });
}

async function listManagedWorkloads(custom: CustomObjectsApi): Promise<ManagedWorkload[]> {
  const list = (await custom.listClusterCustomObject({
    group: managedWorkloadCrd.group,
    version: managedWorkloadCrd.version,
    plural: managedWorkloadCrd.plural,
    resourceVersion: "0",
  })) as { items: ManagedWorkload[] };
  return list.items;
}

/** Waits until every ManagedWorkload has a status phase; returns the phases counted. */
async function waitForPhases(
  custom: CustomObjectsApi,
  n: number,
  operator: RunningProcess,
): Promise<Map<string, number>> {
  for (;;) {
    if (!operator.isRunning()) throw new Error(`the operator exited; see ${operator.logFile}`);
    const items = await listManagedWorkloads(custom);
    const phases = new Map<string, number>();
    for (const mw of items) {
      const phase = mw.status?.phase ?? "(none)";
      phases.set(phase, (phases.get(phase) ?? 0) + 1);
    }
    const withPhase = items.length - (phases.get("(none)") ?? 0);
    if (withPhase >= n) return phases;
    log(`ManagedWorkloads with a phase: ${withPhase}/${n}`);
    await sleep(5_000);
  }
}

// ---- API request counters ----

interface ApiScrape {
  requests: Counters;
  byResource: Counters;
  openWatches: number;
}

const resourceOf = (l: Record<string, string>) =>
  `${l.verb} ${l.group ? `${l.group}/` : ""}${l.resource || "(non-resource)"}${l.subresource ? `/${l.subresource}` : ""}`;

async function scrapeApi(tls: ClientTls, apiServerUrl: string): Promise<ApiScrape> {
  const selfSigned: ClientTls & { rejectUnauthorized: boolean } = { ...tls, rejectUnauthorized: false };
  const metricsServerUrl = `https://${network.metricsServerIp}:${ports.metricsServer}/metrics`;
  // Requests to metrics.k8s.io are counted by metrics-server, the aggregated server that serves them; it
  // serves a self-signed certificate (as the APIService's insecureSkipTLSVerify says).
  const [core, coreByResource, watches, metrics, metricsByResource] = await Promise.all([
    scrapeCounters(`${apiServerUrl}/metrics`, tls, (name, l) =>
      name === "apiserver_request_total" && l.group !== "metrics.k8s.io" ? (l.verb ?? "?") : null,
    ),
    scrapeCounters(`${apiServerUrl}/metrics`, tls, (name, l) =>
      name === "apiserver_request_total" && l.group !== "metrics.k8s.io" ? resourceOf(l) : null,
    ),
    scrapeCounters(`${apiServerUrl}/metrics`, tls, (name, l) =>
      name === "apiserver_longrunning_requests" && l.verb === "WATCH" ? "watches" : null,
    ),
    scrapeCounters(metricsServerUrl, selfSigned, (name, l) =>
      name === "apiserver_request_total" && l.resource === "pods" ? `${l.verb} pod metrics` : null,
    ),
    scrapeCounters(metricsServerUrl, selfSigned, (name, l) =>
      name === "apiserver_request_total" ? `${resourceOf(l)} (metrics-server)` : null,
    ),
  ]);
  return {
    requests: mergeCounters(core, metrics),
    byResource: mergeCounters(coreByResource, metricsByResource),
    openWatches: watches.get("watches") ?? 0,
  };
}

interface ApiWindow {
  perSecond: Counters;
  byResource: Counters;
  openWatches: number;
}

async function apiWindow(tls: ClientTls, apiServerUrl: string): Promise<ApiWindow> {
  const before = await scrapeApi(tls, apiServerUrl);
  const t0 = performance.now();
  await sleep(windowSeconds * 1000);
  const after = await scrapeApi(tls, apiServerUrl);
  const seconds = (performance.now() - t0) / 1000;
  return {
    perSecond: rates(before.requests, after.requests, seconds),
    byResource: rates(before.byResource, after.byResource, seconds),
    openWatches: after.openWatches,
  };
}

/** The request kinds whose rate rose most with the operator running. */
function topDifferences(withOp: ApiWindow, peer: ApiWindow, limit = 8): string[][] {
  return [...withOp.byResource]
    .map(([k, v]): [string, number] => [k, v - (peer.byResource.get(k) ?? 0)])
    .filter(([, d]) => d >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([k, d]) => [k, d.toFixed(2)]);
}

const verbColumns = ["LIST", "LIST pod metrics", "GET", "WATCH", "POST", "PATCH", "APPLY", "PUT", "DELETE"];

function apiRow(label: string, w: ApiWindow): string[] {
  return [label, ...verbColumns.map((v) => (w.perSecond.get(v) ?? 0).toFixed(2)), w.openWatches.toFixed(0)];
}

function differenceRow(label: string, withOp: ApiWindow, peer: ApiWindow): string[] {
  return [
    label,
    ...verbColumns.map((v) => ((withOp.perSecond.get(v) ?? 0) - (peer.perSecond.get(v) ?? 0)).toFixed(2)),
    (withOp.openWatches - peer.openWatches).toFixed(0),
  ];
}

// ---- wake latency ----

interface ReplicaWatch {
  /** Resolves when the Deployment's spec.replicas equals `replicas` in the informer. */
  when(key: string, replicas: number): Promise<number>;
  replicas(key: string): number | undefined;
  stop(): Promise<void>;
}

async function watchSampleReplicas(kc: KubeConfig): Promise<ReplicaWatch> {
  const apps = kc.makeApiClient(AppsV1Api);
  const selector = `${sampleLabel}=true`;
  const informer = makeInformer<V1Deployment>(
    kc,
    "/apis/apps/v1/deployments",
    () => apps.listDeploymentForAllNamespaces({ labelSelector: selector }),
    selector,
  );
  const current = new Map<string, number>();
  const waiters = new Map<string, { replicas: number; resolve: (atMs: number) => void }>();
  const seen = (d: V1Deployment) => {
    const key = `${d.metadata?.namespace}/${d.metadata?.name}`;
    const replicas = d.spec?.replicas ?? 0;
    current.set(key, replicas);
    const waiter = waiters.get(key);
    if (waiter && waiter.replicas === replicas) {
      waiters.delete(key);
      waiter.resolve(performance.now());
    }
  };
  informer.on("add", seen);
  informer.on("update", seen);
  informer.on("error", () => setTimeout(() => void informer.start().catch(() => undefined), 1_000));
  await informer.start();
  return {
    when: (key, replicas) =>
      current.get(key) === replicas
        ? Promise.resolve(performance.now())
        : new Promise((resolve) => waiters.set(key, { replicas, resolve })),
    replicas: (key) => current.get(key),
    stop: () => informer.stop(),
  };
}

async function annotateMw(custom: CustomObjectsApi, key: string, annotation: string, value: string) {
  const [namespace = "", name = ""] = key.split("/");
  await custom.patchNamespacedCustomObject(
    {
      group: managedWorkloadCrd.group,
      version: managedWorkloadCrd.version,
      namespace,
      plural: managedWorkloadCrd.plural,
      name,
      body: { metadata: { annotations: { [annotation]: value } } },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    sleep(ms).then(() => {
      throw new Error(`timed out after ${ms} ms: ${what}`);
    }),
  ]);
}

/** Sample keys spread evenly over the first n workloads (all carry the sample label). */
function sampleKeys(n: number): string[] {
  const sampled = Math.floor(n / sampleEvery);
  const k = Math.min(sampleSize, sampled);
  return Array.from({ length: k }, (_, j) => {
    const i = Math.floor((j * sampled) / k) * sampleEvery;
    return `${namespaceOf(i)}/${workloadName(i)}`;
  });
}

/** Pauses the sample, waits for every one to be Paused, then resumes them one at a time. */
async function wakeLatencies(kc: KubeConfig, keys: string[]): Promise<number[]> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const watch = await watchSampleReplicas(kc);
  try {
    log(`pausing ${keys.length} sampled workloads with ${annotations.pauseRequested}`);
    const pausedAll = Promise.all(keys.map((key) => watch.when(key, 0)));
    for (const key of keys)
      await annotateMw(custom, key, annotations.pauseRequested, new Date().toISOString());
    await withTimeout(pausedAll, 300_000, "the sample scaled to zero");
    const keySet = new Set(keys);
    for (;;) {
      const items = await listManagedWorkloads(custom);
      const paused = items.filter(
        (mw) => keySet.has(`${mw.metadata.namespace}/${mw.metadata.name}`) && mw.status?.phase === "Paused",
      ).length;
      if (paused === keys.length) break;
      log(`sample with phase Paused: ${paused}/${keys.length}`);
      await sleep(2_000);
    }
    log(`resuming them one at a time with ${annotations.resumeRequested}`);
    const latencies: number[] = [];
    for (const key of keys) {
      const woken = watch.when(key, 1);
      await annotateMw(custom, key, annotations.resumeRequested, new Date().toISOString());
      const returned = performance.now();
      latencies.push(Math.max(0, (await withTimeout(woken, 120_000, `${key} woken`)) - returned));
      await sleep(1_000);
    }
    return latencies;
  } finally {
    await watch.stop();
  }
}

// ---- one count ----

interface Result {
  n: number;
  podsAvailable: number;
  peer: ApiWindow;
  withOperator: ApiWindow;
  phases: Map<string, number>;
  phasesSeconds: number;
  rssSettledKiB: number;
  rssAfterWakesKiB: number;
  cpuPerMinute: number;
  latencies: number[];
}

async function measure(
  kc: KubeConfig,
  ctx: { tls: ClientTls; apiServerUrl: string; kubeconfig: string; logDir: string },
  n: number,
  podsAvailable: number,
): Promise<Result> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  log(`N=${n}: peer window (${windowSeconds} s, no operator)`);
  const peer = await apiWindow(ctx.tls, ctx.apiServerUrl);

  log(`N=${n}: starting the operator`);
  const startedAt = performance.now();
  const operator = startOperator(ctx.kubeconfig, ctx.logDir);
  try {
    const phases = await waitForPhases(custom, n, operator);
    const phasesSeconds = (performance.now() - startedAt) / 1000;
    log(`N=${n}: every ManagedWorkload has a phase after ${phasesSeconds.toFixed(0)} s; settling 30 s`);
    await sleep(30_000);
    const rssSettledKiB = await rssKiB(operator.pid);

    log(`N=${n}: steady window (${windowSeconds} s, operator running)`);
    const cpu0 = await cpuSeconds(operator.pid);
    const t0 = performance.now();
    const withOperator = await apiWindow(ctx.tls, ctx.apiServerUrl);
    const cpuPerMinute = ((await cpuSeconds(operator.pid)) - cpu0) / ((performance.now() - t0) / 60_000);

    const latencies = await wakeLatencies(kc, sampleKeys(n));
    const rssAfterWakesKiB = await rssKiB(operator.pid);
    return {
      n,
      podsAvailable,
      peer,
      withOperator,
      phases,
      phasesSeconds,
      rssSettledKiB,
      rssAfterWakesKiB,
      cpuPerMinute,
      latencies,
    };
  } finally {
    await operator.stop();
  }
}

function report(r: Result): string {
  const mib = (kib: number) => (kib / 1024).toFixed(0);
  const ms = (p: number) => percentile(r.latencies, p).toFixed(0);
  const phases = [...r.phases].map(([p, c]) => `${p} ${c}`).join(", ");
  return [
    `\n## N = ${r.n} ManagedWorkloads (${r.podsAvailable} pods available; phases: ${phases})`,
    `\nAPI requests per second over ${windowSeconds} s (kube-apiserver, plus metrics-server for pod metrics)`,
    table(
      ["window", ...verbColumns.map((v) => `${v}/s`), "open watches"],
      [
        apiRow("peer: cluster, no operator", r.peer),
        apiRow("cluster + operator, steady", r.withOperator),
        differenceRow("the operator's share", r.withOperator, r.peer),
      ],
    ),
    "\nthe operator's share by request kind (top rises, per second)",
    table(["verb resource", "per s"], topDifferences(r.withOperator, r.peer)),
    `\nThe operator (--check-interval ${checkInterval}, --max-concurrent-reconciles 8): pod metrics are listed per namespace and shared by its workloads, a list kept for half a check, so one or two per namespace per check: ${(namespaceCount / Number.parseInt(checkInterval, 10)).toFixed(1)} to ${((2 * namespaceCount) / Number.parseInt(checkInterval, 10)).toFixed(1)} LISTs/s for ${namespaceCount} namespaces (one per workload would be ${(r.n / Number.parseInt(checkInterval, 10)).toFixed(0)}/s)`,
    table(
      [
        "all phased s",
        "RSS settled MiB",
        "RSS after wakes MiB",
        "CPU s/min",
        "wakes",
        "wake p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
      ],
      [
        [
          r.phasesSeconds.toFixed(0),
          mib(r.rssSettledKiB),
          mib(r.rssAfterWakesKiB),
          r.cpuPerMinute.toFixed(1),
          String(r.latencies.length),
          ms(50),
          ms(90),
          ms(99),
          Math.max(...r.latencies).toFixed(0),
        ],
      ],
    ),
    "",
  ].join("\n");
}

// ---- main ----

const binDir = await ensureBinaries();
const stateDir = await mkdtemp(join(tmpdir(), "napwake-bench-scale-"));
const cluster = await startControlPlane({ binDir, stateDir, log });
process.stdout.write(
  `test/cluster/netns-run.sh npx node bench/operator-scale.ts ${counts.join(",")} ${budgetMs / 60_000}\n` +
    `one cluster grown through the counts; ${namespaceCount} namespaces; kwok pods; wake sample ${sampleSize}\n`,
);
let succeeded = false;
try {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const tls = await loadTls({
    ca: cluster.pki.caCert,
    cert: cluster.pki.clients.admin.cert,
    key: cluster.pki.clients.admin.key,
  });
  const ctx = {
    tls,
    apiServerUrl: cluster.apiServerUrl,
    kubeconfig: cluster.kubeconfig,
    logDir: cluster.paths.logs,
  };
  await serverSideApply(KubernetesObjectApi.makeApiClient(kc), roomyNodes(), harnessFieldManager);
  await installCrds(kc);
  const core = kc.makeApiClient(CoreV1Api);
  // The operator's own namespace, where it keeps its webhook CA Secret, as an install makes it.
  await core.createNamespace({ body: { metadata: { name: "napwake-system" } } });
  for (let i = 0; i < namespaceCount; i++) {
    await core.createNamespace({ body: { metadata: { name: namespaceOf(i) } } });
  }
  let created = 0;
  for (const target of counts) {
    // Leave room to measure: about 9 minutes for a count once its workloads exist (5,000 take ~4 to phase).
    const createDeadline = began + budgetMs - 9 * 60_000;
    created = await createWorkloads(kc, created, target, createDeadline);
    if (created < target) log(`time budget: stopped creating at ${created} of ${target}; measuring those`);
    const podsAvailable = await waitForPods(kc, created, Math.max(createDeadline, Date.now() + 60_000));
    log(`N=${created}: ${podsAvailable} pods available; settling 20 s`);
    await sleep(20_000);
    process.stdout.write(report(await measure(kc, ctx, created, podsAvailable)));
    if (created < target) break;
  }
  process.stdout.write(`\ntotal ${((Date.now() - began) / 60_000).toFixed(1)} min\n`);
  succeeded = true;
} finally {
  await cluster.stop();
  if (succeeded) await rm(stateDir, { recursive: true, force: true });
  else log(`failed; the cluster's logs (the operator's among them) are in ${cluster.paths.logs}`);
}
