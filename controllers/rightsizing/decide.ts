/**
 * The Rightsizing reconciler's decision: from the workload, its effective modes and the recommender's last
 * run for it, the status to write and the Events to send. Pure.
 *
 * Quiet by design: a container's shown recommendation (target and bounds) is replaced only when it changes
 * materially (rightsizing/change.ts), and that is one Event for the workload. Skipped and blocked notices
 * are remembered in status.notices, so each is sent once per reason and again only when its note or the
 * proposed values change, across operator restarts too. A failed run of the metrics source keeps every
 * recommendation as it was and says so in a condition; it never turns into a zero recommendation.
 */
import { setCondition } from "../../api/conditions.ts";
import { conditionTypes, type EventReason, eventReasons } from "../../api/keys.ts";
import type { Condition } from "../../api/managedworkload.ts";
import type {
  ContainerRecommendation,
  ResourceModeStatus,
  ResourceValues,
  RightsizingStatus,
  SentNotice,
} from "../../api/rightsizing.ts";
import { formatMebibytes, formatMillicores, parseQuantity } from "../../kube/quantity.ts";
import {
  type ContainerResources,
  isMaterialChange,
  type Recommendation,
  type RecommenderConfig,
} from "../../rightsizing/index.ts";
import type { EffectiveMode, ModeResolution } from "../../rightsizing/modes.ts";
import {
  inRange,
  type PolicyRanges,
  policyBoundReasons,
  policyRanges,
  quantityWithin,
  type Range,
  withinPolicyBounds,
  withinRanges,
} from "./policy-bounds.ts";

/** A container's requests and memory limit, and its CPU limit, which a CPU request may not exceed. */
export type ContainerFacts = { readonly name: string; readonly cpuLimitCores?: number } & ContainerResources;

/** The reason a recommended CPU request gives when it is above the container's CPU limit. */
export const CPU_REQUEST_ABOVE_LIMIT = "cpu-request-above-limit";

/** What the recommender's last run produced for one workload. */
export type RunOutcome =
  | {
      readonly ok: true;
      readonly atMs: number;
      /** Newest sample read. */
      readonly untilMs: number;
      readonly containers: ReadonlyMap<string, { recommendation: Recommendation; checkpoint: string }>;
      /**
       * Workloads (`namespace/Kind/name`) whose pods' names this one's could be: the pods are counted for
       * none of them (long names the API server cut alike).
       */
      readonly podNamesSharedWith?: readonly string[];
      /**
       * The pod-template hash characters a Deployment's pods keep, when too few to tell its pods from those of a
       * workload named after it (see `templateHashCutTo`).
       */
      readonly podNamesCutTo?: number;
    }
  | { readonly ok: false; readonly atMs: number; readonly error: string };

export type RightsizingInput = {
  readonly nowMs: number;
  readonly generation: number | undefined;
  readonly previous: RightsizingStatus | undefined;
  readonly containers: readonly ContainerFacts[];
  readonly modes: ModeResolution;
  /** Null until the recommender has run for this workload since the operator started leading. */
  readonly run: RunOutcome | null;
  readonly config: RecommenderConfig;
};

export type RightsizingEvent = {
  readonly type: "Normal" | "Warning";
  readonly reason: EventReason;
  readonly note: string;
};

export type RightsizingDecision = {
  readonly status: RightsizingStatus;
  readonly events: readonly RightsizingEvent[];
  /** Containers whose shown recommendation changed in this decision. */
  readonly changed: readonly string[];
};

export function decideRightsizing(input: RightsizingInput): RightsizingDecision {
  const previousByName = new Map((input.previous?.containers ?? []).map((c) => [c.name, c]));
  const changed: string[] = [];
  const changes: string[] = [];
  const containers = input.containers.map((facts) => {
    const previous = previousByName.get(facts.name);
    const next = containerStatus(facts, previous, input);
    if (next.announce) {
      changed.push(facts.name);
      changes.push(describeChange(facts, next.status.target ?? {}));
    }
    return next.status;
  });
  const events: RightsizingEvent[] = [];
  if (changes.length > 0) {
    events.push({
      type: "Normal",
      reason: eventReasons.recommendationChanged,
      note: `recommended ${changes.join("; ")}`,
    });
  }
  const { notices, sent } = noticesFor(input, containers);
  events.push(...sent);
  const base = input.previous ?? {};
  const status: RightsizingStatus = {
    ...base,
    observedGeneration: input.generation ?? 0,
    modes: { cpu: modeStatus(input.modes.cpu), memory: modeStatus(input.modes.memory) },
    strategy: input.modes.strategy,
    matchedPolicies: [...input.modes.matchedPolicies],
    containers,
    conditions: conditionsFor(input, containers),
    notices,
  };
  if (input.run?.ok) {
    status.lastRun = iso(input.run.atMs);
    status.historyThrough = iso(input.run.untilMs);
  }
  if (notices.length === 0) delete status.notices;
  return { status, events, changed };
}

// ---- containers ----

function containerStatus(
  facts: ContainerFacts,
  previous: ContainerRecommendation | undefined,
  input: RightsizingInput,
): { status: ContainerRecommendation; announce: boolean } {
  const current = currentValues(facts);
  const run = input.run;
  const learned = run?.ok ? run.containers.get(facts.name) : undefined;
  if (!learned) {
    // Nothing new for it (not run yet, source failed, no series): what was shown stays shown, within the policy.
    return keptWithinPolicy(facts, { ...(previous ?? {}), name: facts.name, current }, input);
  }
  const rec = withinPolicyBounds(learned.recommendation, input.modes);
  const proposed = valuesOf(rec, "target");
  const ready = rec.status === "ok";
  const wasReady = previous?.state === "ok" && previous.target !== undefined;
  const material =
    !wasReady || isMaterialChange(resourcesOf(previous?.target ?? {}), resourcesOf(proposed), input.config);
  // A policy's min or max changed since: what was shown may lie outside it, and is never kept there.
  const outsidePolicy = [previous?.target, previous?.lowerBound, previous?.upperBound].some(
    (values) => values !== undefined && !withinRanges(resourcesOf(values), rec.ranges),
  );
  const replace = !previous?.target || material || outsidePolicy || previous.state !== rec.status;
  const shown = replace
    ? { target: proposed, lowerBound: valuesOf(rec, "lower"), upperBound: valuesOf(rec, "upper") }
    : { target: previous.target, lowerBound: previous.lowerBound, upperBound: previous.upperBound };
  return {
    status: stripUndefined({
      name: facts.name,
      current,
      ...shown,
      confidence: round(rec.confidence, 2),
      state: rec.status,
      historyHours: round(rec.historyMs / 3_600_000, 1),
      reasons: [
        ...rec.reasons,
        ...rec.policyBound,
        ...(aboveCpuLimit(facts, shown.target) ? [CPU_REQUEST_ABOVE_LIMIT] : []),
      ],
      checkpoint: learned.checkpoint,
    }),
    announce: ready && replace && material,
  };
}

/**
 * What was shown, kept without a new recommendation, never outside the governing policy's bounds: a policy whose
 * min or max changed since moves each value it no longer holds to its nearest edge, as it does a new
 * recommendation's, and says so among the reasons. A material change of the target is announced, as any is.
 */
function keptWithinPolicy(
  facts: ContainerFacts,
  kept: ContainerRecommendation,
  input: RightsizingInput,
): { status: ContainerRecommendation; announce: boolean } {
  const ranges = policyRanges(input.modes);
  const outside = (values: ResourceValues | undefined) =>
    values !== undefined && !withinRanges(resourcesOf(values), ranges);
  if (![kept.target, kept.lowerBound, kept.upperBound].some(outside))
    return { status: withCpuLimitReason(kept, facts), announce: false };
  const target = kept.target && valuesWithin(kept.target, ranges);
  const policyBound: string[] = [
    ...(target?.cpuRequest !== kept.target?.cpuRequest ? [policyBoundReasons.cpu] : []),
    ...(target?.memoryRequest !== kept.target?.memoryRequest ||
    target?.memoryLimit !== kept.target?.memoryLimit
      ? [policyBoundReasons.memory]
      : []),
  ];
  const reasons = [
    ...(kept.reasons ?? []).filter((r) => r !== CPU_REQUEST_ABOVE_LIMIT && !policyBound.includes(r)),
    ...policyBound,
    ...(aboveCpuLimit(facts, target) ? [CPU_REQUEST_ABOVE_LIMIT] : []),
  ];
  const status = stripUndefined({
    ...kept,
    target,
    lowerBound: kept.lowerBound && valuesWithin(kept.lowerBound, ranges),
    upperBound: kept.upperBound && valuesWithin(kept.upperBound, ranges),
    reasons,
  });
  const material =
    kept.state === "ok" &&
    kept.target !== undefined &&
    target !== undefined &&
    isMaterialChange(resourcesOf(kept.target), resourcesOf(target), input.config);
  return { status, announce: material };
}

/**
 * The kept values with the CPU-limit reason as the container's limit now has it: the limit may have changed since
 * the run the values came from (raised, the reason would stay; lowered, it would be missing).
 */
function withCpuLimitReason(kept: ContainerRecommendation, facts: ContainerFacts): ContainerRecommendation {
  const had = kept.reasons?.includes(CPU_REQUEST_ABOVE_LIMIT) ?? false;
  if (had === aboveCpuLimit(facts, kept.target)) return kept;
  const others = (kept.reasons ?? []).filter((reason) => reason !== CPU_REQUEST_ABOVE_LIMIT);
  return { ...kept, reasons: had ? others : [...others, CPU_REQUEST_ABOVE_LIMIT] };
}

/** Shown values within the ranges: each one outside is moved to the nearest edge, as status shows it. */
function valuesWithin(values: ResourceValues, ranges: PolicyRanges): ResourceValues {
  const within = (value: string | undefined, range: Range, unit: "cores" | "bytes") => {
    if (value === undefined) return undefined;
    const parsed = parseQuantity(value);
    return inRange(parsed, range) ? value : quantityWithin(parsed, range, unit);
  };
  return stripUndefined({
    cpuRequest: within(values.cpuRequest, ranges.cpu, "cores"),
    memoryRequest: within(values.memoryRequest, ranges.memory, "bytes"),
    memoryLimit: within(values.memoryLimit, ranges.memory, "bytes"),
  });
}

function currentValues(facts: ContainerFacts): ResourceValues {
  return stripUndefined({
    cpuRequest: facts.cpuRequestCores === undefined ? undefined : formatMillicores(facts.cpuRequestCores),
    memoryRequest:
      facts.memoryRequestBytes === undefined ? undefined : formatMebibytes(facts.memoryRequestBytes),
    memoryLimit: facts.memoryLimitBytes === undefined ? undefined : formatMebibytes(facts.memoryLimitBytes),
  });
}

/** As status shows them: rounded, but never past the policy's bounds. */
function valuesOf(
  rec: Recommendation & { readonly ranges: PolicyRanges },
  bound: "lower" | "target" | "upper",
): ResourceValues {
  const { cpu, memory } = rec.ranges;
  return {
    cpuRequest: quantityWithin(rec.cpuRequestCores[bound], cpu, "cores"),
    memoryRequest: quantityWithin(rec.memoryRequestBytes[bound], memory, "bytes"),
    memoryLimit: quantityWithin(rec.memoryLimitBytes[bound], memory, "bytes"),
  };
}

function resourcesOf(values: ResourceValues): ContainerResources {
  const q = (v: string | undefined) => (v === undefined ? undefined : parseQuantity(v));
  return stripUndefined({
    cpuRequestCores: q(values.cpuRequest),
    memoryRequestBytes: q(values.memoryRequest),
    memoryLimitBytes: q(values.memoryLimit),
  });
}

function describeChange(facts: ContainerFacts, target: ResourceValues): string {
  const part = (what: string, current: number | undefined, next: string | undefined) => {
    if (next === undefined) return null;
    if (current === undefined || current === 0) return `${what} ${next} (none set)`;
    const change = Math.round(((parseQuantity(next) - current) / current) * 100);
    return `${what} ${next} (${change >= 0 ? "+" : ""}${change}%)`;
  };
  const parts = [
    part("cpu request", facts.cpuRequestCores, target.cpuRequest),
    part("memory request", facts.memoryRequestBytes, target.memoryRequest),
    part("memory limit", facts.memoryLimitBytes, target.memoryLimit),
  ].filter((p) => p !== null);
  const limit = aboveCpuLimit(facts, target)
    ? ` (above its cpu limit ${formatMillicores(facts.cpuLimitCores ?? 0)}: raise the limit with it, or remove it)`
    : "";
  return `${facts.name}: ${parts.join(", ")}${limit}`;
}

/**
 * A CPU request recommended above the container's CPU limit, which the API server refuses: throttled at its
 * limit, the container's usage reaches it, and the margin on top puts the request above it.
 */
function aboveCpuLimit(facts: ContainerFacts, target: ResourceValues | undefined): boolean {
  if (facts.cpuLimitCores === undefined || target?.cpuRequest === undefined) return false;
  return parseQuantity(target.cpuRequest) > facts.cpuLimitCores * (1 + 1e-12);
}

// ---- modes ----

function modeStatus(m: EffectiveMode): ResourceModeStatus {
  return stripUndefined({
    mode: m.mode,
    requested: m.requested,
    source: m.source,
    policy: m.policy,
    degradedBy: m.degraded && m.degraded.length > 0 ? [...m.degraded] : undefined,
    overridden: m.overridden
      ? { policy: m.overridden.policy, reason: m.overridden.reason, checks: [...m.overridden.checks] }
      : undefined,
    tie: m.tie && m.tie.length > 1 ? [...m.tie] : undefined,
    invalidAnnotation: m.invalidAnnotation
      ? `${m.invalidAnnotation.key}=${m.invalidAnnotation.value}`
      : undefined,
  });
}

// ---- notices (skipped, blocked, overridden, source failures): once per reason and value ----

type Notice = RightsizingEvent & { readonly value: string };

function activeNotices(input: RightsizingInput, containers: readonly ContainerRecommendation[]): Notice[] {
  const notices: Notice[] = [];
  const run = input.run;
  if (run && !run.ok) {
    const note = `the metrics source failed; recommendations are kept as they were: ${run.error}`;
    notices.push({ type: "Warning", reason: eventReasons.metricsSourceFailed, note, value: note });
  }
  const waiting = containers.filter((c) => c.state !== "ok").map((c) => c.name);
  if (run?.ok && waiting.length > 0) {
    const note = `no recommendation yet for ${waiting.join(", ")}: less than ${hours(input.config.minHistoryMs)} of usage history with pods running`;
    notices.push({ type: "Normal", reason: eventReasons.recommendationSkipped, note, value: note });
  }
  const proposed = containers
    .filter((c) => c.state === "ok" && c.target)
    .map((c) => `${c.name}=${c.target?.cpuRequest}/${c.target?.memoryRequest}/${c.target?.memoryLimit}`)
    .join(",");
  const resources = [
    ["cpu", input.modes.cpu],
    ["memory", input.modes.memory],
  ] as const;
  const blocked = resources.filter(([, m]) => m.degraded && m.degraded.length > 0);
  if (blocked.length > 0) {
    const why = blocked.map(([r, m]) => `${r}: ${m.degraded?.join(", ")}`).join("; ");
    const note = `auto-patch asked for by ${blocked.map(([, m]) => m.source).join(", ")} is held to audit until the readiness checks pass (${why})`;
    notices.push({
      type: "Warning",
      reason: eventReasons.autoPatchBlocked,
      note,
      value: `${why}|${proposed}`,
    });
  }
  const overridden = resources.filter(([, m]) => m.overridden);
  if (overridden.length > 0) {
    const note = overridden
      .map(
        ([r, m]) =>
          `${r}: policy ${m.overridden?.policy} sets auto-patch despite ${m.overridden?.checks.join(", ")} (${m.overridden?.reason})`,
      )
      .join("; ");
    notices.push({ type: "Warning", reason: eventReasons.autoPatchOverridden, note, value: note });
  }
  return notices;
}

function noticesFor(
  input: RightsizingInput,
  containers: readonly ContainerRecommendation[],
): { notices: SentNotice[]; sent: RightsizingEvent[] } {
  const before = new Map((input.previous?.notices ?? []).map((n) => [n.reason, n.value]));
  const sent: RightsizingEvent[] = [];
  const notices: SentNotice[] = activeNotices(input, containers).map((n) => {
    if (before.get(n.reason) !== n.value) sent.push({ type: n.type, reason: n.reason, note: n.note });
    return { reason: n.reason, value: n.value };
  });
  // A run that did not succeed cannot tell whether containers still wait for history: what was sent stays
  // recorded, so the same notice is not sent again when the source is back.
  if (!input.run?.ok) {
    const skipped = input.previous?.notices?.find((n) => n.reason === eventReasons.recommendationSkipped);
    if (skipped && !notices.some((n) => n.reason === skipped.reason)) notices.push(skipped);
  }
  return { notices, sent };
}

// ---- conditions ----

function conditionsFor(input: RightsizingInput, containers: readonly ContainerRecommendation[]): Condition[] {
  const now = iso(input.nowMs);
  const set = (
    list: Condition[] | undefined,
    type: string,
    state: Condition["status"],
    reason: string,
    message: string,
  ) => setCondition(list, { type, status: state, reason, message }, now, input.generation);
  const run = input.run;
  let conditions = input.previous?.conditions;
  if (run === null) {
    if (!conditions?.some((c) => c.type === conditionTypes.metricsSourceHealthy)) {
      conditions = set(
        conditions,
        conditionTypes.metricsSourceHealthy,
        "Unknown",
        "NotRunYet",
        "the recommender has not run for this workload yet",
      );
    }
  } else if (run.ok) {
    conditions = set(
      conditions,
      conditionTypes.metricsSourceHealthy,
      "True",
      "Answered",
      `usage read up to ${iso(run.untilMs)}`,
    );
  } else {
    conditions = set(conditions, conditionTypes.metricsSourceHealthy, "False", "QueryFailed", run.error);
  }
  const waiting = containers.filter((c) => c.state !== "ok");
  const ready: [Condition["status"], string, string] =
    containers.length === 0
      ? ["False", "NoContainers", "the pod template has no containers"]
      : waiting.length === 0
        ? ["True", "Recommended", `${containers.length} container(s) have a recommendation`]
        : waiting.every((c) => c.state === undefined)
          ? ["False", "NoData", `no usage read yet for ${waiting.map((c) => c.name).join(", ")}`]
          : [
              "False",
              "InsufficientHistory",
              `${waiting.map((c) => `${c.name} (${c.historyHours ?? 0} h)`).join(", ")}: less than ${hours(input.config.minHistoryMs)} of history`,
            ];
  const [status, reason, message] = ready;
  return set(conditions, conditionTypes.recommendationReady, status, reason, `${message}${sharedNote(run)}`);
}

// ---- helpers ----

/** Why usage may be missing, stale or another workload's too: pod names the API server cut short. */
function sharedNote(run: RunOutcome | null): string {
  if (!run?.ok) return "";
  const others = run.podNamesSharedWith;
  const shared = others?.length
    ? ` (its pods' names could be those of ${others.join(", ")}: the API server cuts long names alike, ` +
      "so their usage is counted for neither; a shorter name tells them apart)"
    : "";
  const cut = run.podNamesCutTo;
  const ambiguous =
    cut === undefined
      ? ""
      : ` (its pods' names keep ${cut} characters of their template hash, too few to tell them from the pods of a ` +
        "workload named after it, such as a Job <name>-migrate, whose usage may be counted as its own; a name of " +
        "at most 51 characters tells them apart)";
  return `${shared}${ambiguous}`;
}

function hours(ms: number): string {
  return `${Math.round(ms / 3_600_000)} h`;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
