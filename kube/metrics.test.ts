import { describe, expect, it } from "vitest";
import { phases } from "../api/managedworkload.ts";
import { allPhases, countForecastPhases, countPhases, createMetrics, wakeSourceLabel } from "./metrics.ts";

/** The sample lines (no HELP/TYPE) of the exposition that start with `name`. */
async function samples(text: Promise<string>, name: string): Promise<string[]> {
  return (await text)
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe("createMetrics", () => {
  it("counts reconciles by controller, result and priority, and times them in seconds", async () => {
    const m = createMetrics({ processMetrics: false });
    const q = m.queueMetrics("managedworkload");
    q.reconciled("done", "wake", 250);
    q.reconciled("done", "wake", 50);
    q.reconciled("retry", "periodic", 1);
    const total = await samples(m.text(), "napwake_reconcile_total");
    expect(total).toContain(
      'napwake_reconcile_total{controller="managedworkload",result="done",priority="wake"} 2',
    );
    expect(total).toContain(
      'napwake_reconcile_total{controller="managedworkload",result="retry",priority="periodic"} 1',
    );
    expect(total).toContain(
      'napwake_reconcile_total{controller="managedworkload",result="terminal",priority="change"} 0',
    );
    const sum = await samples(m.text(), "napwake_reconcile_duration_seconds_sum");
    expect(sum).toEqual([
      'napwake_reconcile_duration_seconds_sum{controller="managedworkload",priority="wake"} 0.3',
      'napwake_reconcile_duration_seconds_sum{controller="managedworkload",priority="periodic"} 0.001',
    ]);
  });

  it("reports queue depth per controller and priority, starting at zero", async () => {
    const m = createMetrics({ processMetrics: false });
    m.queueMetrics("optin");
    m.queueMetrics("managedworkload").depth("periodic", 4000);
    const depth = await samples(m.text(), "napwake_queue_depth");
    expect(depth).toContain('napwake_queue_depth{controller="managedworkload",priority="periodic"} 4000');
    expect(depth).toContain('napwake_queue_depth{controller="optin",priority="wake"} 0');
    expect(depth).toHaveLength(8);
  });

  it("observes queue wait by priority", async () => {
    const m = createMetrics({ processMetrics: false });
    m.queueMetrics("managedworkload").waited?.("wake", 3);
    expect(await samples(m.text(), "napwake_queue_wait_seconds_count")).toEqual([
      'napwake_queue_wait_seconds_count{priority="wake"} 1',
    ]);
    expect(await samples(m.text(), "napwake_queue_wait_seconds_bucket")).toContain(
      'napwake_queue_wait_seconds_bucket{le="0.005",priority="wake"} 1',
    );
  });

  it("counts pauses and wakes by source, with every known source present from the start", async () => {
    const m = createMetrics({ processMetrics: false });
    m.recordPause();
    m.recordPause();
    m.recordWake("request");
    m.recordWake("made-up source");
    expect(await samples(m.text(), "napwake_pauses_total")).toEqual(["napwake_pauses_total 2"]);
    const wakes = await samples(m.text(), "napwake_wakes_total");
    expect(wakes).toContain('napwake_wakes_total{source="request"} 1');
    expect(wakes).toContain('napwake_wakes_total{source="other"} 1');
    expect(wakes).toContain('napwake_wakes_total{source="manual"} 0');
  });

  it("reads workloads per phase from the callback at each scrape", async () => {
    let counts: Record<string, number> = { Awake: 3 };
    const m = createMetrics({ processMetrics: false, workloadsByPhase: () => counts });
    expect(await samples(m.text(), "napwake_workloads")).toContain('napwake_workloads{phase="Awake"} 3');
    counts = { Paused: 2 };
    const after = await samples(m.text(), "napwake_workloads");
    expect(after).toContain('napwake_workloads{phase="Awake"} 0');
    expect(after).toContain('napwake_workloads{phase="Paused"} 2');
  });

  it("exports no workload series while the counts are unknown, and drops them if they become unknown", async () => {
    let counts: Record<string, number> | undefined;
    const m = createMetrics({
      processMetrics: false,
      workloadsByPhase: () => counts,
      workloadsByForecastPhase: () => counts,
    });
    expect(await samples(m.text(), "napwake_workloads")).toEqual([]);
    expect(await samples(m.text(), "napwake_forecast_workloads")).toEqual([]);
    counts = { Awake: 1 };
    expect(await samples(m.text(), "napwake_workloads")).toContain('napwake_workloads{phase="Awake"} 1');
    counts = undefined;
    expect(await samples(m.text(), "napwake_workloads")).toEqual([]);
  });

  it("reads workloads per forecast phase from the callback at each scrape, every phase a series", async () => {
    const m = createMetrics({
      processMetrics: false,
      workloadsByForecastPhase: () =>
        countForecastPhases([
          { status: { prediction: { phase: "active-weekly" } } },
          { status: { prediction: { phase: "shadow" } } },
          { status: { prediction: { phase: "made-up" } } },
          {},
        ]),
    });
    expect(await samples(m.text(), "napwake_forecast_workloads")).toEqual([
      'napwake_forecast_workloads{phase="off"} 2',
      'napwake_forecast_workloads{phase="learning"} 0',
      'napwake_forecast_workloads{phase="shadow"} 1',
      'napwake_forecast_workloads{phase="active-daily"} 0',
      'napwake_forecast_workloads{phase="active-weekly"} 1',
    ]);
  });

  it("includes process metrics unless turned off, and never touches the global registry", async () => {
    const { register } = await import("prom-client");
    const before = (await register.getMetricsAsJSON()).length;
    expect(await createMetrics().text()).toContain("process_cpu_user_seconds_total");
    expect(await createMetrics({ processMetrics: false }).text()).not.toContain("process_cpu");
    expect((await register.getMetricsAsJSON()).length).toBe(before);
  });

  it("serves the Prometheus text content type", () => {
    expect(createMetrics({ processMetrics: false }).contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});

describe("wakeSourceLabel", () => {
  it.each([
    ["request", "request"],
    ["manual", "manual"],
    ["forecast", "forecast"],
    ["", "other"],
    ["Request", "other"],
    ["x".repeat(500), "other"],
  ])("%s -> %s", (source, label) => {
    expect(wakeSourceLabel(source)).toBe(label);
  });
});

describe("allPhases and countPhases", () => {
  it.each([
    [{}, { Pending: 0, Awake: 0, Paused: 0 }],
    [{ Paused: 4 }, { Paused: 4, Awake: 0 }],
    [{ Weird: 1 }, { Weird: 1, Awake: 0 }],
  ])("allPhases(phases, %j) includes %j", (input, expected) => {
    expect(allPhases(phases, input)).toMatchObject(expected);
  });

  it("counts a ManagedWorkload without status as Pending", () => {
    const counts = countPhases([{ status: { phase: "Paused" } }, { status: { phase: "Paused" } }, {}]);
    expect(counts).toMatchObject({ Paused: 2, Pending: 1, Awake: 0 });
  });

  it("counts a phase this version does not know under its own name, not as NaN", async () => {
    const workloads = [{ status: { phase: "Hibernating" } }, { status: { phase: "Hibernating" } }] as never;
    const m = createMetrics({ processMetrics: false, workloadsByPhase: () => countPhases(workloads) });
    expect(await samples(m.text(), "napwake_workloads")).toContain(
      'napwake_workloads{phase="Hibernating"} 2',
    );
  });
});
