import { describe, expect, it } from "vitest";
import { commandHelp, parseCommand, usage } from "./args.ts";

describe("parseCommand", () => {
  it.each([
    [["pause", "web"], { kind: "request", action: "pause", workload: "web" }],
    [
      ["resume", "statefulset/db", "-n", "shop"],
      { kind: "request", action: "resume", workload: "statefulset/db", namespace: "shop" },
    ],
    [["pause", "-n=shop", "web"], { kind: "request", action: "pause", workload: "web", namespace: "shop" }],
    [["pause", "--namespace=shop", "web"], { namespace: "shop" }],
    [["pause", "web", "--context", "dev", "--kubeconfig", "/k"], { context: "dev", kubeconfig: "/k" }],
    [["status"], { kind: "status", allNamespaces: false, output: "table" }],
    [["status", "-A", "-o", "json"], { kind: "status", allNamespaces: true, output: "json" }],
    [["status", "-n", "shop"], { kind: "status", namespace: "shop" }],
    [["recommendations"], { kind: "recommendations", allNamespaces: false }],
    [
      ["recommendations", "-n", "shop", "statefulset/db"],
      { kind: "recommendations", allNamespaces: false, namespace: "shop", workload: "statefulset/db" },
    ],
    [["recommendations", "-A"], { kind: "recommendations", allNamespaces: true }],
    [["recommendations", "web", "-A"], { kind: "recommendations", allNamespaces: true, workload: "web" }],
    [["recommendations", "--context", "dev"], { kind: "recommendations", context: "dev" }],
    // kubectl takes a boolean flag with a value too.
    [["status", "-A=true"], { kind: "status", allNamespaces: true }],
    [["status", "--all-namespaces=true"], { kind: "status", allNamespaces: true }],
    [["status", "--all-namespaces=false"], { kind: "status", allNamespaces: false }],
    [["recommendations", "-A=true"], { kind: "recommendations", allNamespaces: true }],
    [["recommendations", "-A=1"], { kind: "recommendations", allNamespaces: true }],
    [["status", "--all-namespaces=F"], { kind: "status", allNamespaces: false }],
    // The last one given wins, as with kubectl.
    [["status", "-A", "-A=false"], { kind: "status", allNamespaces: false }],
    [["status", "--all-namespaces", "-A=0"], { kind: "status", allNamespaces: false }],
    [["status", "-A=false", "-A"], { kind: "status", allNamespaces: true }],
  ])("reads %j", (argv, expected) => {
    expect(parseCommand(argv)).toMatchObject(expected);
  });

  it.each([
    [["--help"], usage],
    [["-h"], usage],
    [["help"], usage],
    [["help", "status"], commandHelp.status],
    [["pause", "--help"], commandHelp.pause],
    [["resume", "-h"], commandHelp.resume],
    [["status", "--help"], commandHelp.status],
    [["recommendations", "-h"], commandHelp.recommendations],
    [["help", "recommendations"], commandHelp.recommendations],
  ])("shows help for %j", (argv, text) => {
    expect(parseCommand(argv)).toEqual({ kind: "help", text });
  });

  it.each([
    [[], "no command given"],
    [["sleep", "web"], 'unknown command "sleep"'],
    [["-n", "shop", "status"], "a command comes first, before -n"],
    [["help", "sleep"], 'unknown command "sleep"'],
    [["pause"], "pause needs a workload, e.g. deployment/web"],
    [["pause", "a", "b"], "pause takes one workload, got a b"],
    [["pause", "web", "--force"], "Unknown option '--force'"],
    [["pause", "web", "-n"], "argument missing"],
    [["status", "-A", "-n", "shop"], "use either -n <namespace> or -A, not both"],
    [["status", "-n", ""], "-n/--namespace needs a name"],
    [["pause", "web", "--namespace="], "-n/--namespace needs a name"],
    [["recommendations", "-n="], "-n/--namespace needs a name"],
    [["status", "-o", "yaml"], 'unknown output format "yaml"'],
    [["status", "web"], "status takes no arguments, got web"],
    [["recommendations", "-A", "-n", "shop"], "use either -n <namespace> or -A, not both"],
    [["recommendations", "web", "api"], "recommendations takes at most one workload, got web api"],
    [["recommendations", "-o", "wide"], "Unknown option '-o'"],
    [["status", "-A=yes"], '-A takes true or false, got "yes"'],
  ])("refuses %j: %s", (argv, message) => {
    const command = parseCommand(argv);
    expect(command.kind).toBe("usage-error");
    expect(command.kind === "usage-error" && command.message).toContain(message);
  });
});

describe("command help", () => {
  it.each([
    ["pause", "says a pause by hand overrides the forecast's veto", "overrides the forecast's veto"],
    ["pause", "says the forecast does not pre-wake a workload paused by hand", "does not pre-wake"],
    [
      "pause",
      "says what wakes a workload paused by hand",
      "new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or\nkubectl napwake resume wakes it",
    ],
    ["status", "explains the REASON column", "REASON     why it is in its phase"],
    ["status", "names the Paused condition's reasons", "Idle, Requested, ForecastVeto, PreWake"],
    ["status", "explains the suspended marker in FORECAST", '"(suspended)": the forecast is trusted'],
  ])("%s %s", (command, _, text) => {
    expect(commandHelp[command]).toContain(text);
  });

  it.each(["pause", "resume", "status", "recommendations"])("of %s lists every flag it takes", (command) => {
    for (const flag of ["--namespace", "--kubeconfig", "--context", "--help"])
      expect(commandHelp[command]).toContain(flag);
  });

  it("keeps the pause-by-hand note out of resume", () => {
    expect(commandHelp.resume).not.toContain("pre-wake");
  });
});

describe("usage", () => {
  it.each(["pause", "resume", "status", "recommendations"])("lists the %s command", (command) => {
    expect(usage).toContain(`kubectl napwake ${command} `);
  });
});
