import { describe, expect, it } from "vitest";
import { ConfigError, parseOperatorConfig } from "./operator-config.ts";

describe("parseOperatorConfig", () => {
  it("has production defaults, with the namespace and pod name from the downward API", () => {
    const c = parseOperatorConfig([], { POD_NAMESPACE: "ops", POD_NAME: "napwake-0" });
    expect(c).toMatchObject({
      namespace: "ops",
      podName: "napwake-0",
      leaderElect: false,
      maxConcurrentReconciles: 8,
      checkIntervalMs: 30_000,
      pausedCheckIntervalMs: 300_000,
      healthPort: 8081,
      dryRun: false,
    });
  });

  it("lets the last of a repeated flag win, as kustomize overlays append flags", () => {
    expect(parseOperatorConfig(["--check-interval=30s", "--check-interval=5s"], {}).checkIntervalMs).toBe(
      5_000,
    );
  });

  it.each([
    { args: ["--check-interval=5x"], message: /--check-interval: "5x" is not a duration/ },
    {
      args: ["--max-concurrent-reconciles=0"],
      message: /--max-concurrent-reconciles must be a whole number from 1 to 256/,
    },
    { args: ["--prometheus-url=prometheus:9090"], message: /--prometheus-url must be an http\(s\) URL/ },
    { args: ["--no-such-flag"], message: /Unknown option '--no-such-flag'.*--help/ },
  ])("refuses $args with a message that says what to fix", ({ args, message }) => {
    expect(() => parseOperatorConfig(args, {})).toThrow(ConfigError);
    expect(() => parseOperatorConfig(args, {})).toThrow(message);
  });
});
