/**
 * The ManagedWorkload reconciler's decision: from an Observation (plain data) to the writes to make, the
 * status to write, the Events to send and when to look again. Pure.
 *
 * Pausing and resuming go through the scale subresource, whose writes are admitted as Scale objects and so
 * cannot carry an annotation. The order of writes keeps the replica count safe if the operator dies between
 * any two of them (every intermediate state is decided here from the target alone):
 *
 *   pause:  record napwake.dev/paused-from=N on the target -> hold a KEDA ScaledObject -> scale to 0
 *   resume: release the ScaledObject -> scale to N -> forget paused-from
 *
 *   paused-from=N, replicas 0   paused: stays paused or is resumed to N
 *   paused-from=N, replicas > 0 awake (a resume that finished its scale, a pause that did not reach its
 *                               scale, or a scale-up outside Napwake): forget paused-from; a sync loop's
 *                               scale-up holds further pauses off (see undone-pauses.ts); at the minimum
 *                               of a ScaledObject no one else holds, KEDA answered a resume first: scale
 *                               on to N
 *   no paused-from, replicas 0  scaled to zero outside Napwake: left alone
 *
 * Any state with no paused-from also releases a ScaledObject hold Napwake applied (see releasingStrayHolds).
 *
 * A pause that died before its scale is abandoned (the workload stays up and is paused at a later check);
 * a count once recorded is never lost, and a workload is never left at zero without its count.
 */
import { findCondition, setCondition } from "../../api/conditions.ts";
import {
  annotations,
  conditionTypes,
  eventReasons,
  kedaPaused,
  kedaPausedReplicas,
  labels,
} from "../../api/keys.ts";
import {
  type ActivitySource,
  type Condition,
  type ManagedWorkloadStatus,
  type Phase,
  parseDuration,
  prewakeLeadMs,
  specDefaults,
} from "../../api/managedworkload.ts";
import { farAhead, maxReplicas, pausedFromOf, stampTimeOf, timeOf } from "../../api/meta.ts";
import { quotedValue, replicaCount } from "../../api/text.ts";
import { type ClockOutcome, decideClock } from "./activity-clock.ts";
import { cpuThresholdCores } from "./activity-rules.ts";
import {
  ownsPausedReplicas,
  type ScaledObject,
  scaledObjectHeldElsewhere,
  scaledObjectHoldWrites,
  scaledObjectReleaseWrites,
} from "./autoscalers.ts";
import { type ReplicasOwner, replicasOwner, replicasTakenByUs } from "./gitops.ts";
import type {
  ActivitySample,
  Decision,
  EventIntent,
  Observation,
  TargetState,
  Write,
} from "./observation.ts";
import {
  FIRST_HOLD_OFF_MS,
  pauseHeldOff,
  recordUndo,
  undoneBy,
  undoneNote,
  undoneRecordNotAhead,
} from "./undone-pauses.ts";

const hourMs = 3_600_000;

type ScaledObjectWrite = Extract<Write, { kind: "apply" }>;

export function decide(obs: Observation): Decision {
  const base = baseStatus(obs);
  if (obs.existingOwner && beingDeleted(obs)) {
    return unmanaged(
      obs,
      base,
      "Deleting",
      `this ManagedWorkload is being deleted; ManagedWorkload ${obs.existingOwner} manages the target from now on`,
    );
  }
  if (obs.existingOwner) {
    return unmanaged(
      obs,
      base,
      "OwnerConflict",
      `ManagedWorkload ${obs.existingOwner} already manages this target; delete this one or point it at another workload`,
    );
  }
  const target = obs.target;
  if (!target) {
    const ref = obs.mw.spec.targetRef;
    return unmanaged(
      obs,
      base,
      "TargetNotFound",
      `${ref.kind} ${obs.mw.metadata.namespace}/${ref.name} does not exist`,
    );
  }
  const status = withTargetFacts(obs, target, base);
  const pausedFrom = pausedFromOf(target);
  if (pausedFrom === null) {
    const decision = withoutPause(obs, target, status);
    // A paused-from no scale could restore still says a pause was meant: its hold stays until it is fixed.
    return target.annotations[annotations.pausedFrom] === undefined
      ? releasingStrayHolds(obs, decision)
      : decision;
  }
  const letGo = letGoReason(obs, target);
  if (letGo) return letGoDecision(obs, target, status, pausedFrom, letGo);
  if (target.replicas > 0) return awakeAgain(obs, target, status, pausedFrom);
  return whilePaused(obs, target, status, pausedFrom);
}

/** A target that carries no pause of Napwake's: let go, left at zero by someone else, or awake. */
function withoutPause(obs: Observation, target: TargetState, status: ManagedWorkloadStatus): Decision {
  const letGo = letGoReason(obs, target);
  if (letGo) return letGoDecision(obs, target, status, null, letGo);
  if (target.replicas === 0) {
    const { reason, message } = atZeroWithoutPause(target);
    return unmanaged(obs, withoutPauseShown(obs, status, reason, message), reason, message);
  }
  return forgettingUnreadableCount(target, whileAwake(obs, target, wokenNotAhead(obs, status)));
}

/** An awake target's paused-from no scale could restore is forgotten, as a readable one is once awake. */
function forgettingUnreadableCount(target: TargetState, decision: Decision): Decision {
  const raw = target.annotations[annotations.pausedFrom];
  if (raw === undefined || decision.writes.some((w) => w.kind === "record-paused-from")) return decision;
  return {
    ...decision,
    writes: [...decision.writes, { kind: "forget-paused-from" }],
    summary: `${decision.summary}; forgot ${annotations.pausedFrom}=${quotedValue(raw)}, no replica count`,
  };
}

/**
 * Why a target at zero carries no pause Napwake can resume. A paused-from no scale could restore (written while the
 * webhook was down) is named with its fix, rather than sent to the API server on every resume and refused there.
 */
function atZeroWithoutPause(target: TargetState): { reason: string; message: string } {
  const raw = target.annotations[annotations.pausedFrom];
  if (raw === undefined) {
    return {
      reason: "ScaledToZeroOutside",
      message: "scaled to zero outside Napwake; scale it up and Napwake manages it again",
    };
  }
  return {
    reason: "PausedFromInvalid",
    message:
      `at zero with ${annotations.pausedFrom}=${quotedValue(raw)}, which is no replica count ` +
      `(1 to ${maxReplicas}) Napwake could resume to; set it to the count to resume to, or scale the workload up`,
  };
}

/**
 * Status without a pause the target no longer carries (its paused-from removed by hand, or by a tool that replaced
 * the object, while at zero): no count is shown that Napwake will not restore.
 */
function withoutPauseShown(
  obs: Observation,
  status: ManagedWorkloadStatus,
  reason: string,
  message: string,
): ManagedWorkloadStatus {
  const shown = findCondition(status.conditions, conditionTypes.paused)?.status === "True";
  return withoutKeys(shown ? notPaused(obs, status, reason, message) : status, ["pausedFrom", "pausedAt"]);
}

/**
 * Releases a ScaledObject hold Napwake applied while no pause of its own stands behind it (the target was deleted
 * while paused and created again): KEDA would otherwise keep the workload at zero for good. A decision that pauses
 * applies the hold itself. The release is made only while the target still carries no paused-from (see
 * makeWrites), so a pause in flight that this cache has not seen yet keeps its hold.
 */
function releasingStrayHolds(obs: Observation, decision: Decision): Decision {
  if (decision.writes.some((w) => w.kind === "record-paused-from")) return decision;
  const releases = releaseHolds(obs);
  if (releases.length === 0) return decision;
  const released = releases.map((w) => w.object.metadata?.name ?? "");
  const note = `released Napwake's hold at zero on ScaledObject ${released.join(", ")}: no pause of Napwake's stands behind it`;
  return {
    ...decision,
    writes: [...releases, ...decision.writes],
    events: [...decision.events, holdReleasedEvent(obs, released, note)],
    summary: `${decision.summary}; ${note}`,
  };
}

/**
 * One Event per hold released. A cache that has not seen the release yet decides it again, and the write (the same
 * apply) is made again; the Event is told as a skip of the same ScaledObject versions, so it is not.
 */
function holdReleasedEvent(obs: Observation, released: readonly string[], note: string): EventIntent {
  const versions = obs.scaledObjects
    .filter((so) => released.includes(so.metadata?.name ?? ""))
    .map((so) => `${so.metadata?.name}@${so.metadata?.resourceVersion ?? ""}`);
  return {
    type: "Normal",
    reason: eventReasons.holdReleased,
    note,
    kind: "skip",
    fingerprint: versions.join(","),
  };
}

// ---- status helpers ----

function baseStatus(obs: Observation): ManagedWorkloadStatus {
  return { ...(obs.mw.status ?? {}), observedGeneration: obs.mw.metadata.generation ?? 0 };
}

function condition(
  obs: Observation,
  status: ManagedWorkloadStatus,
  type: string,
  state: Condition["status"],
  reason: string,
  message: string,
): ManagedWorkloadStatus {
  return {
    ...status,
    conditions: setCondition(
      status.conditions,
      { type, status: state, reason, message },
      iso(obs.nowMs),
      obs.mw.metadata.generation,
    ),
  };
}

function withPhase(
  obs: Observation,
  status: ManagedWorkloadStatus,
  phase: Phase,
  managed: { reason: string; message: string } | null,
): ManagedWorkloadStatus {
  const next = phase === "DryRun" ? { ...status, phase } : endDryRunCondition(obs, { ...status, phase });
  return managed
    ? condition(obs, next, conditionTypes.managed, "False", managed.reason, managed.message)
    : condition(obs, next, conditionTypes.managed, "True", "Managed", "the target is under management");
}

/** A DryRun=True condition left from an earlier decision flips to False once nothing would be paused. */
function endDryRunCondition(obs: Observation, status: ManagedWorkloadStatus): ManagedWorkloadStatus {
  if (conditionTime(status, conditionTypes.dryRun, "True") === null) return status;
  return inDryRun(obs)
    ? condition(
        obs,
        status,
        conditionTypes.dryRun,
        "False",
        "WouldNotPause",
        "dry-run: nothing would be paused now",
      )
    : condition(obs, status, conditionTypes.dryRun, "False", "Off", "dry-run is off");
}

/** Autoscalers and GitOps ownership of replicas, reported on every managed reconcile. */
function withTargetFacts(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
): ManagedWorkloadStatus {
  const [autoscaler] = obs.autoscalers;
  let next: ManagedWorkloadStatus = autoscaler
    ? condition(
        obs,
        { ...status, autoscaler: { kind: autoscaler.kind, name: autoscaler.name } },
        conditionTypes.autoscaled,
        "True",
        autoscaler.kind,
        `${autoscaler.kind} ${autoscaler.name} scales the target${autoscaler.kind === "ScaledObject" ? "; it is held at zero while paused" : "; it leaves a target at zero alone"}`,
      )
    : condition(
        obs,
        withoutKey(status, "autoscaler"),
        conditionTypes.autoscaled,
        "False",
        "None",
        "no HPA or KEDA ScaledObject scales the target",
      );
  // Napwake's own scale took the field: the tool reported before the pause still sets it on its next apply.
  const owner = replicasOwnerOf(obs, target) ?? reportedBeforePause(obs, target, status);
  next = owner
    ? condition(
        obs,
        { ...next, gitOps: { tool: owner.tool, manager: owner.manager, message: owner.message } },
        conditionTypes.gitOpsReplicas,
        "True",
        owner.tool,
        owner.message,
      )
    : condition(
        obs,
        withoutKey(next, "gitOps"),
        conditionTypes.gitOpsReplicas,
        "False",
        "None",
        "no GitOps tool sets spec.replicas",
      );
  return next;
}

/** The tool status reported setting spec.replicas, while Napwake's own scale holds the field, or null. */
function reportedBeforePause(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
): ReplicasOwner | null {
  const { tool, manager, message } = status.gitOps ?? {};
  if (!tool || !manager || !message || !replicasTakenByUs(target.managedFields, obs.fieldManager))
    return null;
  return { tool, manager, message };
}

function unmanaged(
  obs: Observation,
  status: ManagedWorkloadStatus,
  reason: string,
  message: string,
): Decision {
  return {
    writes: [],
    status: withPhase(obs, status, "Unmanaged", { reason, message }),
    events: [
      {
        type: reason === "OwnerConflict" || reason === "PausedFromInvalid" ? "Warning" : "Normal",
        reason: reason === "OwnerConflict" ? eventReasons.refused : eventReasons.pauseSkipped,
        note: message,
        kind: "skip",
      },
    ],
    requeueAfterMs: null,
    summary: `unmanaged: ${message}`,
  };
}

// ---- letting go ----

function beingDeleted(obs: Observation): boolean {
  return obs.mw.metadata.deletionTimestamp !== undefined;
}

function letGoReason(obs: Observation, target: TargetState): { reason: string; message: string } | null {
  // Held by someone else's finalizer: it owns nothing any more (as the webhook says), so it lets go as a deleted
  // one would, and a paused target is not left with nothing to wake it.
  if (beingDeleted(obs)) return { reason: "Deleting", message: "this ManagedWorkload is being deleted" };
  if (target.labels[labels.ignore] !== undefined) {
    return { reason: "Ignored", message: `the target carries the ${labels.ignore} label` };
  }
  const ns = obs.mw.metadata.namespace;
  if (ns === "kube-system" || ns === obs.settings.operatorNamespace) {
    return {
      reason: "Protected",
      message: `namespace ${ns} is protected: Napwake never pauses workloads there`,
    };
  }
  if (obs.mw.spec.protected) return { reason: "Protected", message: "spec.protected is true" };
  if (target.deletesVolumesWhenScaled) {
    return {
      reason: "DeletesVolumesWhenScaled",
      message:
        `StatefulSet ${target.name} deletes its PersistentVolumeClaims when scaled down ` +
        "(spec.persistentVolumeClaimRetentionPolicy.whenScaled: Delete), so a pause would delete its data; " +
        "set whenScaled: Retain to let Napwake pause it",
    };
  }
  if (target.annotations[annotations.protected] === "true") {
    return { reason: "Protected", message: `the target is annotated ${annotations.protected}=true` };
  }
  if (obs.namespace?.annotations[annotations.protected] === "true") {
    return { reason: "Protected", message: `namespace ${ns} is annotated ${annotations.protected}=true` };
  }
  return null;
}

function letGoDecision(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  pausedFrom: number | null,
  why: { reason: string; message: string },
): Decision {
  const writes: Write[] =
    pausedFrom === null
      ? []
      : target.replicas === 0
        ? resumeWrites(obs, pausedFrom)
        : [...endHolds(obs), { kind: "forget-paused-from" }];
  const resumed = pausedFrom !== null && target.replicas === 0;
  // Resumed or its count forgotten by the writes above: nothing of the pause is left to show.
  const next = withPhase(
    obs,
    withoutKeys(notPaused(obs, status, why.reason, why.message), ["pausedFrom", "pausedAt"]),
    "Unmanaged",
    why,
  );
  return {
    writes,
    status: next,
    events: [
      resumed
        ? {
            type: "Normal",
            reason: eventReasons.letGo,
            note: `${why.message}; resumed to ${replicaCount(pausedFrom)} before letting go`,
            kind: "action",
            settledAs: why.message,
          }
        : { type: "Normal", reason: eventReasons.letGo, note: why.message, kind: "skip" },
    ],
    requeueAfterMs: null,
    summary: `let go: ${why.message}`,
  };
}

// ---- paused ----

function awakeAgain(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  pausedFrom: number,
): Decision {
  const undoer = undoneBy(replicasOwnerOf(obs, target), status.pausedAt !== undefined);
  if (undoer) return undoneByGitOps(obs, target, status, undoer);
  if (pauseNeverMade(status)) return pauseAbandoned(obs, target, status, pausedFrom);
  if (target.replicas < pausedFrom && broughtUpByKeda(obs, target.replicas)) {
    return resumedPastKeda(obs, target, status, pausedFrom);
  }
  const finishedResume = target.replicas === pausedFrom;
  const note = finishedResume
    ? `finished resuming to ${replicaCount(pausedFrom)}`
    : `scaled to ${replicaCount(target.replicas)} outside Napwake while paused (from ${pausedFrom}); treated as awake`;
  let next = woken(obs, status, finishedResume ? "Resumed" : "ScaledOutside", note);
  if (!finishedResume) next = { ...next, lastActivity: { time: iso(obs.nowMs), source: "scale-up" } };
  return {
    writes: [...endHolds(obs), { kind: "forget-paused-from" }],
    status: withPhase(obs, withoutKeys(next, ["pausedFrom", "pausedAt"]), "Awake", null),
    events: [
      {
        type: "Normal",
        reason: finishedResume ? eventReasons.resumed : eventReasons.scaledOutside,
        note,
        kind: "action",
      },
    ],
    requeueAfterMs: obs.settings.checkIntervalMs,
    summary: note,
  };
}

/**
 * Status says awake and no pause came since: paused-from on a workload that is up is, most likely, a pause that
 * failed after recording it (its hold or scale refused, the operator stopped), not a resume; less likely, a pause
 * whose status write was lost, and a scale-up since.
 */
function pauseNeverMade(status: ManagedWorkloadStatus): boolean {
  return (
    status.pausedAt === undefined &&
    findCondition(status.conditions, conditionTypes.paused)?.status === "False"
  );
}

/**
 * Forgets the count a pause recorded that status never showed made. Still at that count, the workload never went
 * down: the idle clock goes on. At another count (an autoscaler moved it, or someone scaled up a pause whose status
 * was lost) it is awake from now, with a full idle window, but no activity is made up: an HPA scaling down is none.
 */
function pauseAbandoned(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  pausedFrom: number,
): Decision {
  const moved = target.replicas !== pausedFrom;
  const summary =
    `paused-from=${pausedFrom} on a workload at ${replicaCount(target.replicas)} whose pause status never showed ` +
    `(a write after it failed, or the status write): forgotten${moved ? "; awake from now" : ""}`;
  const next = moved
    ? woken(obs, status, "Active", "the workload is awake")
    : keptAtThisGeneration(obs, status);
  return {
    writes: [...endHolds(obs), { kind: "forget-paused-from" }],
    status: withPhase(obs, next, "Awake", null),
    events: [],
    requeueAfterMs: obs.settings.checkIntervalMs,
    summary,
  };
}

/**
 * Whether `replicas` is the count a ScaledObject of the target brings it up to from zero once no hold stops it:
 * its minReplicaCount, and one at least (KEDA scales a target below its minimum up to it, and an active trigger
 * wakes one at zero).
 */
function broughtUpByKeda(obs: Observation, replicas: number): boolean {
  // Held by someone else, or paused outright, KEDA keeps it where they said: the count is theirs. Napwake's own
  // hold may still show: the ScaledObject cache can be behind the release this resume made.
  const heldByOthers = targetScaledObjects(obs).some(
    (so) =>
      so.metadata?.annotations?.[kedaPaused] === "true" ||
      (so.metadata?.annotations?.[kedaPausedReplicas] !== undefined &&
        !ownsPausedReplicas(so, obs.fieldManager)),
  );
  if (heldByOthers) return false;
  return obs.autoscalers.some(
    (a) => a.kind === "ScaledObject" && replicas === Math.max(1, a.minReplicas ?? 0),
  );
}

/**
 * A resume whose release of the ScaledObject KEDA answered before Napwake's scale: KEDA brought the workload up to
 * its minimum, and the scale from zero found it there. The resume is finished to the count it was paused from.
 */
function resumedPastKeda(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  pausedFrom: number,
): Decision {
  const note =
    `resumed to ${replicaCount(pausedFrom)}: KEDA had brought it up to its minimum, ` +
    `${replicaCount(target.replicas)}, as its ScaledObject was released`;
  const next = woken(obs, status, "Resumed", note);
  return {
    writes: [
      ...endHolds(obs),
      { kind: "scale", from: target.replicas, to: pausedFrom, finishesWake: true },
      { kind: "forget-paused-from" },
    ],
    status: withPhase(obs, withoutKeys(next, ["pausedFrom", "pausedAt"]), "Awake", null),
    events: [{ type: "Normal", reason: eventReasons.resumed, note, kind: "action" }],
    requeueAfterMs: obs.settings.checkIntervalMs,
    summary: note,
  };
}

/** A sync loop set spec.replicas back while paused: awake, and pausing held off (see undone-pauses.ts). */
function undoneByGitOps(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  undoer: ReplicasOwner,
): Decision {
  const pausesUndone = recordUndo(status.pausesUndone, undoer, obs.nowMs);
  const note = undoneNote(undoer, pausesUndone, target.replicas);
  // Not activity: the clock counts its idle window from this wake, and the forecast learns traffic, not syncs.
  const next = woken(obs, { ...status, pausesUndone }, "UndoneByGitOps", note);
  return {
    writes: [...endHolds(obs), { kind: "forget-paused-from" }],
    status: withPhase(obs, withoutKeys(next, ["pausedFrom", "pausedAt"]), "Awake", null),
    events: [{ type: "Warning", reason: eventReasons.pauseUndone, note, kind: "action" }],
    requeueAfterMs: obs.settings.checkIntervalMs,
    summary: note,
  };
}

function whilePaused(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  pausedFrom: number,
): Decision {
  // When the pause's status write was lost, the pause came after the last activity it knew of: anything
  // newer wakes the workload (never later than a request would have).
  // A time ahead of this clock (a former leader's fast one, or this one stepped back) is not when the pause
  // came: activity, which counts at most as now, could never be newer, and nothing would wake the workload.
  const past = (ms: number | null) => (ms !== null && ms <= obs.nowMs ? ms : null);
  const pausedSinceMs =
    past(timeOf(status.pausedAt)) ??
    past(conditionTime(status, conditionTypes.paused, "True")) ??
    past(timeOf(status.lastActivity?.time)) ??
    past(conditionTime(status, conditionTypes.paused, "False")) ??
    timeOf(obs.mw.metadata.creationTimestamp);
  const activity = activitySincePause(obs, target, status);
  // Activity after the last the pause knew of wakes the workload, though stamped before the pause itself: a
  // request or resume stamped while the pause was being made (after the look it was decided from), or by a
  // clock a little behind this one, would otherwise never wake it.
  const newerThanMs = Math.min(
    pausedSinceMs ?? Number.POSITIVE_INFINITY,
    past(timeOf(status.lastActivity?.time)) ?? Number.POSITIVE_INFINITY,
  );
  // Paused by `kubectl napwake pause`: someone wants it down, so the forecast does not wake it before traffic
  // (traffic itself, or a resume request, still does).
  const pausedCondition = findCondition(status.conditions, conditionTypes.paused);
  const pauseRequested = pauseRequestedWhilePaused(obs, status, pausedSinceMs);
  const pausedByHandNow = pausedFor(status, "True", PAUSED_BY_HAND);
  const pausedByHand = pausedByHandNow || pauseRequested !== null;
  const wake = clockWhilePaused(
    obs,
    activity,
    Number.isFinite(newerThanMs) ? newerThanMs : null,
    pausedByHandNow,
    pausedByHand,
  );
  if (wake.action === "wake") {
    // A resume request is activity to the clock; the note names it as what it is.
    const byRequest = wake.byForecast === undefined && activity?.source === "manual" && !inDryRun(obs);
    const why = byRequest ? `kubectl napwake resume at ${iso(activity.stamp)}` : wake.reason;
    const note = `resumed to ${replicaCount(pausedFrom)}: ${why}`;
    // A pause that held an hour (the first hold-off) until Napwake woke the workload: no sync loop undid it, so
    // none is held off any longer. A shorter one says nothing of a loop that syncs less often.
    const held = pausedSinceMs !== null && obs.nowMs - pausedSinceMs >= FIRST_HOLD_OFF_MS;
    const next = woken(
      obs,
      {
        ...(held ? withoutKey(status, "pausesUndone") : status),
        ...(activity ? { lastActivity: { time: iso(activity.stamp), source: activity.source } } : {}),
        // A pause request made while paused is used up by this wake (a stamp from a clock ahead is later).
        ...handledPauseRequest(obs, pauseRequested),
      },
      wakeReason(obs, wake.byForecast),
      note,
    );
    return {
      writes: resumeWrites(obs, pausedFrom),
      status: withPhase(obs, withoutKeys(next, ["pausedFrom", "pausedAt"]), "Awake", null),
      events: [
        {
          type: "Normal",
          reason: wake.byForecast === "prewake" ? eventReasons.preWake : eventReasons.resumed,
          note,
          kind: "action",
        },
      ],
      requeueAfterMs: obs.settings.checkIntervalMs,
      summary: note,
    };
  }
  // A pause by hand stays one (so the forecast keeps leaving it alone) until the workload wakes.
  const reason = pausedByHand ? "Requested" : "Idle";
  // The pause's own message stays (rewriting it would cost a status write after every pause); one of another
  // reason, or of the condition while it was False, is not this pause's.
  const sameCondition = pausedCondition?.status === "True" && pausedCondition.reason === reason;
  const next = condition(
    obs,
    {
      ...status,
      pausedFrom,
      pausedAt: status.pausedAt ?? iso(pausedSinceMs ?? obs.nowMs),
      ...handledPauseRequest(obs, pauseRequested),
    },
    conditionTypes.paused,
    "True",
    reason,
    (sameCondition && pausedCondition.message) ||
      (pauseRequested !== null
        ? `paused from ${replicaCount(pausedFrom)}: kubectl napwake pause at ${iso(pauseRequested)}`
        : `paused from ${replicaCount(pausedFrom)}`),
  );
  return {
    writes: holdScaledObjects(obs),
    status: withPhase(obs, next, "Paused", null),
    events: [],
    requeueAfterMs: untilNext(obs, wake.nextCheckAtMs, obs.settings.pausedCheckIntervalMs),
    summary: pausedByHand
      ? "paused by kubectl napwake pause: not pre-woken; traffic or a resume request wakes it"
      : `paused: ${wake.reason}`,
  };
}

/**
 * The clock's answer for a paused workload. Dry-run wakes it. A resume stamped at or after the pause request that
 * made this pause wins (a tie errs toward awake), though the pause itself came later, at this clock's time of the
 * reconcile that made it. Else the idle clock decides, without the forecast for a pause by hand.
 */
function clockWhilePaused(
  obs: Observation,
  activity: Activity | null,
  newerThanMs: number | null,
  pausedByHandNow: boolean,
  pausedByHand: boolean,
): ClockOutcome {
  if (inDryRun(obs)) {
    const reason = "dry-run is on: a paused workload is woken and only decisions are recorded";
    return { action: "wake", reason, nextCheckAtMs: null };
  }
  if (pausedByHandNow && resumeAfterHandledPause(obs)) {
    return { action: "wake", reason: "kubectl napwake resume after the pause request", nextCheckAtMs: null };
  }
  return decideClock({
    nowMs: obs.nowMs,
    lastActivityMs: activity ? activity.ms : null,
    awakeSinceMs: null,
    pausedSinceMs: newerThanMs,
    paused: true,
    idleWindowMs: idleWindowMs(obs),
    forecast: pausedByHand ? null : obs.forecast,
  });
}

// ---- awake ----

function whileAwake(obs: Observation, target: TargetState, status: ManagedWorkloadStatus): Decision {
  const activity = latestActivity(obs, target, status);
  // Read before this reconcile's condition update: a workload never paused has been awake since it was adopted.
  // A status that still says paused (its write after a wake was lost) gives no awake-since: the wake was
  // at most now, so the workload gets a full idle window rather than being paused straight back.
  const stillPausedInStatus =
    conditionTime(status, conditionTypes.paused, "True") !== null || status.pausedAt !== undefined;
  // Back under Napwake's watch (it was scaled to zero by someone else, let go, protected, or not there yet):
  // nothing was measured meanwhile, so it is awake since now, with a full idle window.
  const returning = status.phase === "Unmanaged";
  const awakeSinceMs =
    stillPausedInStatus || returning
      ? obs.nowMs
      : (conditionTime(status, conditionTypes.paused, "False") ??
        timeOf(obs.mw.metadata.creationTimestamp) ??
        obs.nowMs);
  let next: ManagedWorkloadStatus = activity
    ? { ...status, lastActivity: { time: iso(activity.stamp), source: activity.source } }
    : status;
  next = { ...next, ...undoneRecordNotAhead(next.pausesUndone, obs.nowMs) };
  // paused-from and pausedAt describe a pause: an awake workload has neither (status may still hold them
  // when the write that resumed it did not get as far as status).
  next = withoutKeys(next, ["pausedFrom", "pausedAt"]);
  // The wake's reason (PreWake, Resumed...) stays until another applies: rewriting it to Active on the next
  // check would hide why the workload is awake and cost every wake a second status write.
  if (returning) next = woken(obs, next, "Active", "the workload is awake");
  else if (!wokenFor(next)) next = notPaused(obs, next, "Active", "the workload is awake");
  else next = keptAtThisGeneration(obs, next);
  // A dry run never pauses, so nothing wakes it: there a pause request is used up by the activity a real pause
  // would have woken on, or it would count as a would-be pause for as long as it stood.
  const requestsSinceMs = inDryRun(obs) && activity ? Math.max(awakeSinceMs, activity.ms) : awakeSinceMs;
  const pauseRequested = pauseRequestedAfter(obs, requestsSinceMs);
  // A request used up so is recorded as handled: the wake that used it up leaves no trace, and once dry-run is
  // off the request would pause the workload, busy or not.
  const usedUp = inDryRun(obs) && pauseRequested === null && pauseRequestedAfter(obs, awakeSinceMs) !== null;
  if (usedUp) next = { ...next, ...handledPauseRequest(obs, manualRequests(obs).pause) };
  const manual = pauseRequested !== null;
  const clock = manual
    ? {
        action: "pause" as const,
        reason: `kubectl napwake pause at ${iso(pauseRequested)}`,
        nextCheckAtMs: null,
      }
    : decideClock({
        nowMs: obs.nowMs,
        lastActivityMs: activity ? activity.ms : null,
        awakeSinceMs,
        pausedSinceMs: null,
        paused: false,
        idleWindowMs: idleWindowMs(obs),
        forecast: obs.forecast,
      });
  const requeue = untilNext(obs, clock.nextCheckAtMs, obs.settings.checkIntervalMs);
  // A pause the forecast vetoes may be blocked anyway: that reason is the one to show, and the awake budget does
  // not charge the forecast for the time. A pre-woken workload still starting keeps its PreWake reason (below).
  const vetoed = clock.action !== "pause" && clock.byForecast === "veto";
  const vetoedAfterStartUp = vetoed && !startingUpAfterPrewake(obs, status);
  const blocked = clock.action === "pause" || vetoedAfterStartUp ? blockedPause(obs, next, manual) : null;
  if (blocked) return blocked;
  if (clock.action !== "pause") {
    // A vetoed pause says so where people look: the Paused condition. A pre-woken workload still starting keeps
    // its PreWake reason, which is what marks its CPU as start-up rather than traffic until the lead is over.
    if (vetoedAfterStartUp) {
      next = notPaused(obs, next, "ForecastVeto", clock.reason);
    }
    const awake = stayAwake(obs, dryRunAwake(obs, next), clock.reason, requeue, awakePhase(obs));
    if (!vetoed) return awake;
    const idleFromMs = Math.max(activity?.ms ?? Number.NEGATIVE_INFINITY, awakeSinceMs);
    return { ...awake, events: [vetoEvent(idleFromMs)] };
  }
  if (inDryRun(obs)) return dryRunPause(obs, target, next, manual ? clock.reason : null);
  const note = `paused from ${replicaCount(target.replicas)}: ${clock.reason}`;
  next = condition(
    obs,
    {
      ...next,
      pausedFrom: target.replicas,
      pausedAt: iso(obs.nowMs),
      ...handledPauseRequest(obs, pauseRequested),
    },
    conditionTypes.paused,
    "True",
    manual ? "Requested" : "Idle",
    note,
  );
  return {
    writes: [
      { kind: "record-paused-from", replicas: target.replicas },
      ...holdScaledObjects(obs),
      { kind: "scale", from: target.replicas, to: 0 },
    ],
    status: withPhase(obs, withoutKey(next, "dryRun"), "Paused", null),
    events: [{ type: "Normal", reason: eventReasons.paused, note, kind: "action" }],
    requeueAfterMs: obs.settings.pausedCheckIntervalMs,
    summary: note,
  };
}

/**
 * Why a pause that is due (or that only the forecast vetoes) cannot go ahead for a reason outside the idle clock:
 * a sync loop that undid the last pauses, a ScaledObject someone else holds, or activity that cannot be known.
 */
function blockedPause(obs: Observation, next: ManagedWorkloadStatus, manual: boolean): Decision | null {
  // Dry-run never scales, so nothing can be undone there.
  const heldOff = manual || inDryRun(obs) ? null : pauseHeldOff(next.pausesUndone, obs.nowMs);
  if (heldOff) {
    const awake = notPaused(obs, next, "PauseUndone", heldOff.reason);
    const requeue = Math.min(obs.settings.checkIntervalMs, Math.max(0, heldOff.untilMs - obs.nowMs));
    return stayAwake(obs, awake, `not pausing: ${heldOff.reason}`, requeue, "Awake");
  }
  const heldElsewhere = scaledObjectHeldElsewhere(targetScaledObjects(obs));
  if (heldElsewhere) {
    return {
      ...stayAwake(
        obs,
        dryRunAwake(obs, notPaused(obs, next, "HeldElsewhere", heldElsewhere)),
        `not pausing: ${heldElsewhere}`,
        obs.settings.checkIntervalMs,
        awakePhase(obs),
      ),
      events: [{ type: "Warning", reason: eventReasons.pauseSkipped, note: heldElsewhere, kind: "skip" }],
    };
  }
  const unknown = manual ? null : unknownActivity(obs);
  if (unknown) {
    return {
      ...stayAwake(
        obs,
        dryRunAwake(obs, notPaused(obs, next, "ActivityUnknown", `not pausing: ${unknown.what}`)),
        `not pausing: ${unknown.why}`,
        obs.settings.checkIntervalMs,
        awakePhase(obs),
      ),
      events: [
        {
          type: "Warning",
          reason: eventReasons.pauseSkipped,
          note: `idle window passed but activity is unknown: ${unknown.why}`,
          kind: "skip",
          sameAs: `idle window passed but activity is unknown: ${unknown.what}`,
        },
      ],
    };
  }
  return null;
}

/**
 * One Event per idle stretch the forecast keeps from a pause (`idleFromMs`, its start, tells them apart): the
 * Paused condition says, slot by slot, what activity is expected.
 */
function vetoEvent(idleFromMs: number): EventIntent {
  // The same words throughout the stretch (the window in force can change with the quarter hour), or each
  // change would be a new Event.
  return {
    type: "Normal",
    reason: eventReasons.pauseVetoed,
    note:
      "idle for the idle window but not paused: the forecast expects activity within it and the pre-wake lead " +
      "(status.prediction.nextActivity says when)",
    kind: "skip",
    fingerprint: new Date(idleFromMs).toISOString(),
  };
}

function stayAwake(
  obs: Observation,
  status: ManagedWorkloadStatus,
  reason: string,
  requeueAfterMs: number,
  phase: Phase,
): Decision {
  return {
    writes: [],
    status: withPhase(obs, status, phase, null),
    events: [],
    requeueAfterMs,
    summary: `awake: ${reason}`,
  };
}

/** In dry-run, an awake workload that would not be paused keeps its total and stops adding to it. */
function dryRunAwake(obs: Observation, status: ManagedWorkloadStatus): ManagedWorkloadStatus {
  if (!inDryRun(obs)) return withoutKey(status, "dryRun");
  return endDryRunCondition(obs, {
    ...status,
    dryRun: { heldReplicaHours: status.dryRun?.heldReplicaHours ?? 0 },
  });
}

/**
 * Dry-run decides but never scales; it adds up the replica-hours a pause would have saved. `requested`: the pause
 * request that would have paused it, or null for the idle window.
 */
function dryRunPause(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
  requested: string | null,
): Decision {
  const previous = status.dryRun ?? {};
  const since = previous.wouldPauseSince ?? iso(obs.nowMs);
  const accountedMs = timeOf(previous.accountedAt);
  // Added up once per check interval, not on every reconcile: a total that moved on every reconcile would
  // rewrite status, which queues the next reconcile, without end (and lose the tiny steps to rounding).
  const due = accountedMs === null || obs.nowMs - accountedMs >= obs.settings.checkIntervalMs;
  const heldReplicaHours =
    (previous.heldReplicaHours ?? 0) +
    (due && accountedMs !== null ? (target.replicas * Math.max(0, obs.nowMs - accountedMs)) / hourMs : 0);
  const next = {
    ...status,
    dryRun: {
      wouldPauseSince: since,
      accountedAt: due ? iso(obs.nowMs) : (previous.accountedAt ?? iso(obs.nowMs)),
      heldReplicaHours: round(heldReplicaHours),
    },
  };
  // The same words while it would pause: the idle time, running on, would rewrite status at every reconcile.
  const why = requested ?? "idle for the idle window";
  const message = `dry-run: would pause ${replicaCount(target.replicas)} since ${since} (${why})`;
  return {
    writes: [],
    status: condition(
      obs,
      withPhase(obs, next, "DryRun", null),
      conditionTypes.dryRun,
      "True",
      "WouldPause",
      message,
    ),
    events: [
      {
        type: "Normal",
        reason: eventReasons.dryRunPause,
        note: `dry-run: would pause ${replicaCount(target.replicas)}`,
        kind: "skip",
        fingerprint: String(target.replicas),
      },
    ],
    requeueAfterMs: obs.settings.checkIntervalMs,
    summary: message,
  };
}

// ---- activity ----

interface Activity {
  /** When it counts, by this clock: a stamp a little ahead counts as now. */
  ms: number;
  source: ActivitySource;
  /**
   * As written in status: the stamp itself, so a stamp ahead of this clock is written the same at every look
   * rather than as each look's now (a status write each look, each queueing the next).
   */
  stamp: number;
}

/** The newest activity known: from status, the target's annotations, and this reconcile's measurement. */
function latestActivity(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
): Activity | null {
  // Napwake's own stamp, written by this clock (or a former leader's, or copied from a stamp a little ahead):
  // ahead of now it counts as now. Further ahead than other clocks may be, this clock stepped back: written back
  // as now, it cannot hold the workload awake for longer.
  const own = timeOf(status.lastActivity?.time);
  const recorded: Activity[] =
    own === null
      ? []
      : [
          {
            ms: Math.min(own, obs.nowMs),
            source: status.lastActivity?.source ?? "annotation",
            stamp: observedTime(own, obs.nowMs) === null ? obs.nowMs : own,
          },
        ];
  return latest([...recorded, ...observedActivity(obs, target, status)]);
}

/**
 * Activity a paused workload was not paused with. The pause knew of status.lastActivity and of the stamps it was
 * copied from: a stamp ahead of the clock (a fast doorman, a laptop ahead, a former leader's clock) counts as now
 * at every look, so counted again it would wake the workload straight after the pause. Any other stamp is news
 * when it is later than the last activity the pause knew of.
 */
function activitySincePause(
  obs: Observation,
  target: TargetState,
  status: ManagedWorkloadStatus,
): Activity | null {
  const known = timeOf(status.lastActivity?.time);
  return latest(observedActivity(obs, target, status).filter((c) => c.stamp !== known));
}

function latest(candidates: readonly Activity[]): Activity | null {
  return candidates.reduce<Activity | null>((best, c) => (best === null || c.ms > best.ms ? c : best), null);
}

/** Activity seen on the target, in manual requests and in this look's sample, each at most now. */
function observedActivity(obs: Observation, target: TargetState, status: ManagedWorkloadStatus): Activity[] {
  const candidates: Activity[] = [];
  const add = (ms: number | null, source: ActivitySource) => {
    const at = observedTime(ms, obs.nowMs);
    if (ms !== null && at !== null) candidates.push({ ms: at, source, stamp: ms });
  };
  add(timeOf(target.annotations[annotations.lastRequest]), "request");
  add(timeOf(target.annotations[annotations.activity]), "annotation");
  const requests = manualRequests(obs);
  // A resume request counts as activity unless a later pause request overrides it; a tie errs toward awake.
  if (requests.resume !== null && (requests.pause === null || requests.resume >= requests.pause)) {
    add(requests.resume, "manual");
  }
  const sample = obs.activity;
  if (sample) {
    const busy =
      sample.cpuCores !== null && target.replicas > 0 && sample.cpuCores >= cpuThresholdCores(obs.mw);
    const startUp =
      startingUpAfterPrewake(obs, status) ||
      startingUpAfterUndo(obs, status) ||
      startingUpForDryRun(obs, status);
    if (busy && !startUp) add(sample.atMs, "cpu");
    if (sample.queries.some((q) => q.active === true)) add(sample.atMs, "prometheus");
  }
  return candidates;
}

/**
 * Within the pre-wake lead of a pre-wake, before the forecast activity it was for: the lead is the time the
 * workload was given to start, and CPU then is its own start-up, not traffic. Counted, it would be learned as
 * activity before the slot the workload was woken for, and move the next pre-wake earlier, day after day. A
 * pre-wake that came late (the operator was down as its slot began) is within traffic at once: the slot forecast
 * has begun where the forecast's next pre-wake time plus the lead is not ahead. Requests, annotations and
 * activity queries always count.
 */
function startingUpAfterPrewake(obs: Observation, status: ManagedWorkloadStatus): boolean {
  if (!pausedFor(status, "False", PRE_WOKEN)) return false;
  const prewakeAtMs = obs.forecast?.prewakeAtMs ?? null;
  const forecastFromMs =
    prewakeAtMs === null ? Number.POSITIVE_INFINITY : prewakeAtMs + prewakeLeadMs(obs.mw.spec);
  return startingUp(obs, conditionTime(status, conditionTypes.paused, "False"), forecastFromMs);
}

/**
 * A workload a sync loop woke (it set a pause back) starts within the pre-wake lead, as a pre-woken one does: its
 * CPU then is its start-up, not traffic, and the forecast must not learn the undo as activity. Timed from the undo
 * as recorded, which outlasts the wake's reason on the condition (a pause held off soon after says PauseUndone).
 */
function startingUpAfterUndo(obs: Observation, status: ManagedWorkloadStatus): boolean {
  return startingUp(obs, timeOf(status.pausesUndone?.lastAt));
}

/**
 * A paused workload put in dry-run is woken for nothing but the dry run: its start-up CPU is not traffic, and
 * learned as activity it would teach the forecast an hour that nobody used.
 */
function startingUpForDryRun(obs: Observation, status: ManagedWorkloadStatus): boolean {
  if (!pausedFor(status, "False", WOKEN_FOR_DRY_RUN)) return false;
  return startingUp(obs, conditionTime(status, conditionTypes.paused, "False"));
}

/** Within the pre-wake lead (the time a workload is given to start) after `wokenAtMs`, and before `untilMs`. */
function startingUp(obs: Observation, wokenAtMs: number | null, untilMs = Number.POSITIVE_INFINITY): boolean {
  const endMs = Math.min((wokenAtMs ?? 0) + prewakeLeadMs(obs.mw.spec), untilMs);
  return wokenAtMs !== null && obs.nowMs >= wokenAtMs && obs.nowMs < endMs;
}

/**
 * When `kubectl napwake pause` asked a paused workload to stay paused, or null. While the Paused condition says
 * paused, a request since the pause began: asked before it, the request would have made that pause one by hand.
 * A status that does not say paused yet (the pause's status write was lost) is judged as the pause was: by a
 * request since the workload was last woken.
 */
function pauseRequestedWhilePaused(
  obs: Observation,
  status: ManagedWorkloadStatus,
  pausedSinceMs: number | null,
): number | null {
  const since =
    conditionTime(status, conditionTypes.paused, "True") !== null
      ? pausedSinceMs
      : (conditionTime(status, conditionTypes.paused, "False") ?? timeOf(obs.mw.metadata.creationTimestamp));
  return pauseRequestedAfter(obs, since ?? Number.NEGATIVE_INFINITY);
}

/**
 * When `kubectl napwake pause` asked for a pause after `sinceMs` (the workload's wake) and after any resume
 * request, or null.
 */
function pauseRequestedAfter(obs: Observation, sinceMs: number): number | null {
  const { pause, resume } = manualRequests(obs);
  const asked =
    pause !== null &&
    pause > sinceMs &&
    obs.mw.metadata.annotations?.[annotations.pauseRequested] !== obs.mw.status?.lastHandledPauseRequest &&
    observedTime(pause, obs.nowMs) !== null &&
    (resume === null || pause > resume);
  return asked ? pause : null;
}

/** The status field that marks the pause request `requested` (from pauseRequestedAfter) as acted on. */
function handledPauseRequest(
  obs: Observation,
  requested: number | null,
): Pick<ManagedWorkloadStatus, "lastHandledPauseRequest"> {
  const value = obs.mw.metadata.annotations?.[annotations.pauseRequested];
  return requested !== null && value !== undefined ? { lastHandledPauseRequest: value } : {};
}

/** A resume request stamped at or after the pause request last acted on, and not overridden by a later pause. */
function resumeAfterHandledPause(obs: Observation): boolean {
  const { pause, resume } = manualRequests(obs);
  const handled = timeOf(obs.mw.status?.lastHandledPauseRequest);
  return resume !== null && handled !== null && resume >= handled && (pause === null || resume >= pause);
}

/**
 * `kubectl napwake pause|resume` requests. The later of the two wins: compared with each other, not only with
 * times in status, so a status the cache has not caught up with cannot replay an older request.
 */
function manualRequests(obs: Observation): { pause: number | null; resume: number | null } {
  const a = obs.mw.metadata.annotations ?? {};
  return {
    pause: stampTimeOf(a[annotations.pauseRequested]),
    resume: stampTimeOf(a[annotations.resumeRequested]),
  };
}

/** Why idleness cannot be trusted right now, or null: a pause needs a fresh, complete measurement. */
function unknownActivity(obs: Observation): Unknown | null {
  return unknownIn(obs.activity);
}

/** What a measurement leaves unknown, without the errors' wording (`what`) and with it (`why`). */
type Unknown = { what: string; why: string };

/**
 * What `sample` leaves unknown, or null when it tells whether the workload was active. The Paused condition says
 * `what`, so an error worded differently from check to check does not rewrite status each time; the
 * PauseSkipped Event says `why`.
 */
export function unknownIn(sample: ActivitySample | null): Unknown | null {
  if (!sample) {
    const what = "no activity measurement in this check";
    return { what, why: what };
  }
  if (sample.cpuCores === null) {
    return {
      what: "pod CPU unknown",
      why: `pod CPU unknown (${sample.errors.join("; ") || "metrics unavailable"})`,
    };
  }
  const failed = sample.queries.filter((q) => q.active === null);
  if (failed.length === 0) return null;
  return {
    what: `activity queries failed: ${failed.map((q) => q.name).join(", ")}`,
    why: `activity queries failed: ${failed.map((q) => `${q.name}: ${q.error ?? "no value"}`).join("; ")}`,
  };
}

// ---- writes ----

function resumeWrites(obs: Observation, pausedFrom: number): Write[] {
  return [...endHolds(obs), { kind: "scale", from: 0, to: pausedFrom }, { kind: "forget-paused-from" }];
}

function holdScaledObjects(obs: Observation): ScaledObjectWrite[] {
  return scaledObjectWrites(obs, true);
}

/** Releases of the holds Napwake applied, as the ScaledObject cache shows them. */
function releaseHolds(obs: Observation): ScaledObjectWrite[] {
  return scaledObjectWrites(obs, false);
}

/** Releases for a pause that ends: of every ScaledObject that scales the target, whatever the cache shows. */
function endHolds(obs: Observation): ScaledObjectWrite[] {
  return scaledObjectReleaseWrites(targetScaledObjects(obs));
}

/** The ScaledObjects that scale this workload. */
function targetScaledObjects(obs: Observation): ScaledObject[] {
  const names = new Set(obs.autoscalers.filter((a) => a.kind === "ScaledObject").map((a) => a.name));
  return obs.scaledObjects.filter((so) => names.has(so.metadata?.name ?? ""));
}

function scaledObjectWrites(obs: Observation, hold: boolean): ScaledObjectWrite[] {
  return scaledObjectHoldWrites(targetScaledObjects(obs), hold, obs.fieldManager);
}

// ---- small pure helpers ----

/**
 * A wake stamped ahead of this clock (by a former leader's fast clock, or this one before it was set back) is
 * taken as now and written back so, as an activity stamp ahead is: it would keep the workload awake for the
 * size of the step.
 */
function wokenNotAhead(obs: Observation, status: ManagedWorkloadStatus): ManagedWorkloadStatus {
  const woken = findCondition(status.conditions, conditionTypes.paused);
  if (woken?.status !== "False" || (timeOf(woken.lastTransitionTime) ?? obs.nowMs) <= obs.nowMs)
    return status;
  const conditions = (status.conditions ?? []).map((c) =>
    c === woken ? { ...c, lastTransitionTime: iso(obs.nowMs) } : c,
  );
  return { ...status, conditions };
}

/** The Paused condition as it is (a wake's reason), judged at this generation: observedGeneration moves on. */
function keptAtThisGeneration(obs: Observation, status: ManagedWorkloadStatus): ManagedWorkloadStatus {
  const kept = findCondition(status.conditions, conditionTypes.paused);
  return kept ? condition(obs, status, kept.type, kept.status, kept.reason, kept.message) : status;
}

function notPaused(
  obs: Observation,
  status: ManagedWorkloadStatus,
  reason: string,
  message: string,
): ManagedWorkloadStatus {
  return condition(obs, status, conditionTypes.paused, "False", reason, message);
}

/**
 * Paused=False from now. A wake is a transition even where the pause's status write was lost (the status
 * still says awake, since before the pause): the workload is awake since this wake, so neither the idle
 * clock nor a pause request from before it counts from the older time.
 */
function woken(
  obs: Observation,
  status: ManagedWorkloadStatus,
  reason: string,
  message: string,
): ManagedWorkloadStatus {
  const conditions = (status.conditions ?? []).filter((c) => c.type !== conditionTypes.paused);
  return notPaused(obs, { ...status, conditions }, reason, message);
}

/**
 * Reasons the Paused condition gives for a pause the idle window alone could not have made either (activity
 * unknown, a ScaledObject someone else holds, a GitOps hold-off): awake time the forecast's budget does not pay.
 */
export const PAUSE_BLOCKED_REASONS: ReadonlySet<string> = new Set([
  "ActivityUnknown",
  "HeldElsewhere",
  "PauseUndone",
]);

/** Reasons a wake gives the Paused condition. */
const WAKE_REASONS: ReadonlySet<string> = new Set([
  "PreWake",
  "Resumed",
  "DryRun",
  "ScaledOutside",
  "UndoneByGitOps",
]);

/** The reason a pre-wake gives the Paused condition. */
const PRE_WOKEN: ReadonlySet<string> = new Set(["PreWake"]);

/** The reason a wake because dry-run was turned on gives the Paused condition. */
const WOKEN_FOR_DRY_RUN: ReadonlySet<string> = new Set(["DryRun"]);

/** The Paused condition's reason for a wake: the forecast's, dry-run's, or activity's (or a resume request's). */
function wakeReason(obs: Observation, byForecast: ClockOutcome["byForecast"]): string {
  if (inDryRun(obs)) return "DryRun";
  return byForecast === "prewake" ? "PreWake" : "Resumed";
}

/** The reason a pause by hand gives the Paused condition. */
export const PAUSED_BY_HAND: ReadonlySet<string> = new Set(["Requested"]);

/** Whether the Paused condition is `state` for one of `reasons`. */
export function pausedFor(
  status: Pick<ManagedWorkloadStatus, "conditions"> | undefined,
  state: Condition["status"],
  reasons: ReadonlySet<string>,
): boolean {
  const paused = findCondition(status?.conditions, conditionTypes.paused);
  return paused?.status === state && reasons.has(paused.reason);
}

/** The Paused condition still says why the workload was woken. */
function wokenFor(status: ManagedWorkloadStatus): boolean {
  return pausedFor(status, "False", WAKE_REASONS);
}

function replicasOwnerOf(obs: Observation, target: TargetState): ReplicasOwner | null {
  return replicasOwner({ kind: target.kind, name: target.name }, target.managedFields, obs.fieldManager);
}

/**
 * Whether a check knows the workload's activity, so the forecast may learn the slot as idle when none was seen:
 * a complete measurement, or a paused workload with nothing to measure (no pods, no activity queries).
 */
export function activityKnown(target: TargetState | null, sample: ActivitySample | null): boolean {
  if (!target) return false;
  return sample === null ? pausedFromOf(target) !== null : unknownIn(sample) === null;
}

/** The workload's idle window, or the forecast's shorter one while the forecast is trusted. */
function idleWindowMs(obs: Observation): number {
  return obs.forecast?.idleWindowMs ?? parseDuration(obs.mw.spec.idle?.window ?? specDefaults.idleWindow);
}

function conditionTime(
  status: ManagedWorkloadStatus,
  type: string,
  state: Condition["status"],
): number | null {
  const c = findCondition(status.conditions, type);
  return c && c.status === state ? timeOf(c.lastTransitionTime) : null;
}

/** A stamp as this clock takes it: up to CLOCK_SKEW_MS ahead counts as now, further ahead as unknown (null). */
export function observedTime(ms: number | null, nowMs: number): number | null {
  if (ms === null || farAhead(ms, nowMs)) return null;
  return Math.min(ms, nowMs);
}

function untilNext(obs: Observation, atMs: number | null, otherwiseMs: number): number {
  return atMs === null ? otherwiseMs : Math.max(1_000, Math.min(otherwiseMs, atMs - obs.nowMs));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

function withoutKey<T extends object, K extends keyof T>(object: T, key: K): T {
  const { [key]: _, ...rest } = object;
  return rest as T;
}

function withoutKeys<T extends object>(object: T, keys: (keyof T)[]): T {
  return keys.reduce((acc, k) => withoutKey(acc, k), object);
}

export type { EventIntent };

/** Dry-run for this workload, or for the whole operator (`--dry-run`). */
function inDryRun(obs: Observation): boolean {
  return obs.mw.spec.dryRun === true || obs.settings.dryRun === true;
}

/** The phase of a workload left awake: a dry run stays one, whatever kept it awake this time. */
function awakePhase(obs: Observation): Phase {
  return inDryRun(obs) ? "DryRun" : "Awake";
}
