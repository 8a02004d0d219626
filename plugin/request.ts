/**
 * `kubectl napwake pause` and `resume`: the annotation to set on the ManagedWorkload and what to tell the
 * person about what the next reconcile will do (see controllers/managedworkload/decide.ts). Pure.
 */
import { findCondition } from "../api/conditions.ts";
import { annotations, conditionTypes, labels } from "../api/keys.ts";
import type { ManagedWorkload, TargetKind } from "../api/managedworkload.ts";
import { farAhead, pausedFromOf, timeOf } from "../api/meta.ts";
import { replicaCount } from "../api/text.ts";
import type { Action } from "./args.ts";
import { inDryRun } from "./dry-run.ts";
import { describeTarget } from "./workload-ref.ts";

/** The target as read from the cluster. */
export interface TargetFacts {
  kind: TargetKind;
  name: string;
  /** spec.replicas. */
  replicas: number;
  annotations: Record<string, string>;
  labels?: Record<string, string>;
}

export interface RequestPlan {
  /**
   * A JSON merge patch for the ManagedWorkload: only the one annotation, on the version read (the API server
   * refuses it if the ManagedWorkload changed since, and the request is planned again).
   */
  patch: { metadata: { resourceVersion?: string; annotations: Record<string, string | null> } };
  /** What will happen, for stdout. */
  message: string;
}

const requestAnnotation = { pause: annotations.pauseRequested, resume: annotations.resumeRequested } as const;

/** The annotation of the request other than `action`. */
function otherAnnotation(action: Action): string {
  return requestAnnotation[action === "pause" ? "resume" : "pause"];
}

/** When a request is stamped, and the cluster's time it is judged against (the server's, or the local clock's). */
export interface RequestTime {
  stampMs: number;
  clusterNowMs: number;
}

/**
 * When a request is stamped: the local clock, unless the API server's (its `Date` answer header, which the
 * controller's clock shares) is ahead of it. A laptop clock behind the cluster would stamp a pause before the
 * workload's last wake, and the controller drops a request older than that. The header is cut to the second, so
 * it only ever moves the stamp up to a time that has passed. A laptop clock further ahead of the server than
 * clocks may drift stamps the server's time instead: the webhook refuses a stamp that far ahead. And after the
 * other request on the ManagedWorkload (the later one wins) and after the workload's last pause or wake (the
 * controller drops a resume or a pause by hand from before the pause, and a pause from before the wake): none may
 * tie. A time far ahead of the cluster's (from a clock since set right) is not followed; an other request that
 * far ahead is removed (see `planRequest`).
 */
export function requestTime(
  serverDate: string | undefined,
  localNowMs: number,
  action: Action,
  mw: ManagedWorkload,
): RequestTime {
  const serverMs = Date.parse(serverDate ?? "");
  const clusterNowMs = clusterNow(serverDate, localNowMs);
  const after = [otherRequestMs(action, mw), ...lastPauseOrWakeMs(mw)].filter(
    (ms): ms is number => ms !== null && !farAhead(ms, clusterNowMs),
  );
  const stampMs = Math.max(stampNow(serverMs, localNowMs), ...after.map((ms) => ms + 1));
  return { stampMs, clusterNowMs };
}

/**
 * Now on the cluster's clock, which the operator keeps its times by: the API server's `Date` header, or the local
 * clock where there is none. A laptop's clock may be minutes off.
 */
export function clusterNow(serverDate: string | undefined, localNowMs: number): number {
  const serverMs = Date.parse(serverDate ?? "");
  return Number.isNaN(serverMs) ? localNowMs : serverMs;
}

/** When the workload was last paused or woken, as its status says: the Paused condition's flip, and pausedAt. */
function lastPauseOrWakeMs(mw: ManagedWorkload): (number | null)[] {
  const paused = findCondition(mw.status?.conditions, conditionTypes.paused);
  return [timeOf(paused?.lastTransitionTime), timeOf(mw.status?.pausedAt)];
}

/** The later of the two clocks, unless the local one is far ahead of the server's (or there is no server time). */
function stampNow(serverMs: number, localNowMs: number): number {
  if (Number.isNaN(serverMs)) return localNowMs;
  return farAhead(localNowMs, serverMs) ? serverMs : Math.max(localNowMs, serverMs);
}

/** The stamp of the request other than `action` on the ManagedWorkload, or null. */
function otherRequestMs(action: Action, mw: ManagedWorkload): number | null {
  const other = mw.metadata.annotations?.[otherAnnotation(action)];
  const ms = Date.parse(other ?? "");
  return Number.isNaN(ms) ? null : ms;
}

export function planRequest(
  action: Action,
  mw: ManagedWorkload,
  target: TargetFacts,
  { stampMs, clusterNowMs }: RequestTime,
): RequestPlan {
  const at = new Date(stampMs).toISOString();
  const message = action === "pause" ? pauseMessage(mw, target) : resumeMessage(mw, target);
  const version = mw.metadata.resourceVersion ? { resourceVersion: mw.metadata.resourceVersion } : {};
  const other = otherRequestMs(action, mw);
  if (other === null || !farAhead(other, clusterNowMs)) {
    return { patch: { metadata: { ...version, annotations: { [requestAnnotation[action]]: at } } }, message };
  }
  // An other request stamped far ahead would win over this one until its time came: it goes.
  const otherKey = otherAnnotation(action);
  return {
    patch: { metadata: { ...version, annotations: { [requestAnnotation[action]]: at, [otherKey]: null } } },
    message: `${message} (removed ${otherKey}=${new Date(other).toISOString()}, stamped by a clock far ahead)`,
  };
}

/** Paused by Napwake: at zero with a count to restore. */
function isPaused(target: TargetFacts): boolean {
  return target.replicas === 0 && pausedFromOf(target) !== null;
}

/** Why the controller will not act on a request, or null. */
function notActing(mw: ManagedWorkload): string | null {
  if (mw.status?.phase !== "Unmanaged") return null;
  const managed = findCondition(mw.status.conditions, conditionTypes.managed);
  return managed?.message || "its ManagedWorkload's phase is Unmanaged";
}

/** Why a pause, also one by hand, is blocked (a ScaledObject someone else holds), as the Paused condition says. */
function heldElsewhere(mw: ManagedWorkload): string | null {
  const paused = findCondition(mw.status?.conditions, conditionTypes.paused);
  if (paused?.status !== "False" || paused.reason !== "HeldElsewhere") return null;
  return (
    paused.message.replace(/^not pausing: /, "") || "a ScaledObject someone else holds keeps its replicas"
  );
}

function pauseMessage(mw: ManagedWorkload, target: TargetFacts): string {
  const name = describeTarget(target.kind, target.name);
  const held = pausedFromOf(target);
  if (isPaused(target)) {
    return `${name} is already paused (0 replicas, ${held} held); from now on the forecast does not pre-wake it: new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or kubectl napwake resume wakes it`;
  }
  const why = notActing(mw);
  if (why)
    return `${name} is not under Napwake's management right now (${why}); the pause request is recorded but not acted on`;
  if (target.replicas === 0) {
    return `${name} is at 0 replicas, scaled to zero outside Napwake; the pause request is recorded and changes nothing`;
  }
  if (inDryRun(mw)) {
    return `${name} is in dry-run: the next reconcile records that it would pause (replicas ${target.replicas} → 0) but does not scale`;
  }
  const blocked = heldElsewhere(mw);
  if (blocked) {
    return `${name} cannot be paused while ${blocked}; the pause request is recorded and made once that changes`;
  }
  // A pause by hand skips the forecast's veto and is not pre-woken (decide.ts): say so before it surprises anyone.
  return `${name} will be paused at the next reconcile (replicas ${target.replicas} → 0), whatever the forecast says; new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or kubectl napwake resume wakes it, not the forecast`;
}

function resumeMessage(mw: ManagedWorkload, target: TargetFacts): string {
  const name = describeTarget(target.kind, target.name);
  const held = pausedFromOf(target);
  if (isPaused(target) && held !== null) {
    return `${name} will be resumed at the next reconcile (replicas 0 → ${held})`;
  }
  const why = notActing(mw);
  if (why)
    return `${name} is not under Napwake's management right now (${why}); the resume request is recorded but not acted on`;
  if (target.replicas === 0) {
    return `${name} is at 0 replicas, scaled to zero outside Napwake: Napwake has no count to restore; scale it up yourself (kubectl scale ${name} --replicas=N)`;
  }
  return `${name} is already awake (${replicaCount(target.replicas)}); the resume request counts as activity and restarts its idle window`;
}

/** Why a workload no ManagedWorkload manages is not managed, and what to do, as far as its labels tell. */
export function notManagedMessage(
  kind: TargetKind,
  name: string,
  namespace: string,
  onIt: Record<string, string> = {},
): string {
  const target = describeTarget(kind, name);
  const what = `${target} is not managed by Napwake`;
  const optIn = `label it ${labels.managed}=true or create a ManagedWorkload`;
  if (labels.ignore in onIt) {
    const remove = `kubectl -n ${namespace} label ${target} ${labels.ignore}-`;
    const then = onIt[labels.managed] === "true" ? "" : `, then ${optIn}`;
    return `${what}: it is labelled ${labels.ignore}, which keeps Napwake away; remove that label (${remove})${then}`;
  }
  if (onIt[labels.managed] === "true") {
    return `${what} yet: it is labelled ${labels.managed}=true but has no ManagedWorkload; the operator makes one within seconds, and if it does not, its Events say why (kubectl -n ${namespace} get events --field-selector involvedObject.name=${name})`;
  }
  return `${what}: ${optIn}`;
}

/**
 * A workload that is not there: `kind` null for a bare name, which could have been any of three things.
 * `elsewhere`: namespaces where the same name is managed, for the `-n` the person likely forgot.
 */
export function notFoundMessage(
  kind: TargetKind | null,
  name: string,
  namespace: string,
  elsewhere: readonly string[] = [],
): string {
  const what =
    kind === null
      ? `no Deployment, ManagedWorkload or StatefulSet named ${name} in namespace ${namespace}`
      : `${describeTarget(kind, name)} not found in namespace ${namespace}`;
  const [first] = elsewhere;
  if (first === undefined) return what;
  return `${what}; it is managed in namespace ${elsewhere.join(", ")}: add -n ${first}`;
}

export function targetMissingMessage(mw: ManagedWorkload): string {
  const ref = mw.spec.targetRef;
  return `ManagedWorkload ${mw.metadata.name} targets ${describeTarget(ref.kind, ref.name)}, which does not exist in namespace ${mw.metadata.namespace}: nothing to pause or resume`;
}
