/**
 * The plugin's command line: from argv to a Command (plain data) or a usage error. Pure.
 * Exit codes: 0 ok, 1 error, 2 usage.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

export const exitCodes = { ok: 0, error: 1, usage: 2 } as const;

export type Action = "pause" | "resume";

/** Where to find the cluster: kubectl passes its own flags on to a plugin untouched, so we read these two. */
export interface Connection {
  kubeconfig?: string;
  context?: string;
}

export type Command =
  | { kind: "help"; text: string }
  | { kind: "usage-error"; message: string; text: string }
  | ({ kind: "request"; action: Action; workload: string; namespace?: string } & Connection)
  | ({ kind: "status"; namespace?: string; allNamespaces: boolean; output: "table" | "json" } & Connection)
  | ({ kind: "recommendations"; namespace?: string; allNamespaces: boolean; workload?: string } & Connection);

const connectionFlags = `  -n, --namespace <ns>   namespace (default: the kubeconfig context's, else "default")
      --kubeconfig <f>   kubeconfig file (default: the files $KUBECONFIG lists, else ~/.kube/config)
      --context <name>   kubeconfig context
`;
const helpFlag = `  -h, --help             this help
`;

export const usage = `kubectl napwake: pause and wake workloads managed by Napwake, and see its rightsizing.

Usage:
  kubectl napwake pause <workload> [-n namespace]    pause at the next reconcile
  kubectl napwake resume <workload> [-n namespace]   resume at the next reconcile
  kubectl napwake status [-n namespace | -A] [-o json]
                                                     the managed workloads, their phase and held replicas
  kubectl napwake recommendations [-n namespace | -A] [<workload>]
                                                     CPU and memory recommendations per container

<workload> is deployment/<name>, statefulset/<name> or <name>: a managed Deployment of that name, else the
ManagedWorkload of that name, else a managed StatefulSet; for recommendations, <name> is a workload of either kind
or a Rightsizing's name.

Flags for every command:
${connectionFlags}  -h, --help             help for a command: kubectl napwake <command> --help

Exit codes: 0 ok, 1 error, 2 usage.
`;

// What the controller does with a pause by hand (decide.ts): no forecast veto before it, no pre-wake after it.
const pauseByHandNote = `A pause by hand overrides the forecast's veto, and the forecast does not pre-wake a workload paused by
hand: new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or
kubectl napwake resume wakes it.
`;

const requestHelp = (action: Action) => `kubectl napwake ${action} <workload> [-n namespace]

${
  action === "pause"
    ? "Asks Napwake to pause a workload (scale it to zero, remembering its replica count) at its next reconcile."
    : "Asks Napwake to resume a paused workload (scale it back to its remembered replica count) at its next reconcile."
}
It sets the annotation napwake.dev/${action}-requested on the workload's ManagedWorkload to the current time.
${action === "pause" ? pauseByHandNote : ""}
<workload>: deployment/<name>, statefulset/<name> or <name>: a managed Deployment of that name, else the
ManagedWorkload of that name, else a managed StatefulSet.

Flags:
${connectionFlags}${helpFlag}
Examples:
  kubectl napwake ${action} web -n shop
  kubectl napwake ${action} statefulset/db -n shop
`;

const statusHelp = `kubectl napwake status [-n namespace | -A] [-o json]

Lists ManagedWorkloads: target, phase, replicas (current, and held while paused), how long idle, how long
paused, the forecast's phase and, in dry-run, the replica-hours a pause would have saved.

  REASON     why it is in its phase: the Paused condition's reason (Idle, Requested, ForecastVeto, PreWake,
             Resumed, Active...), or the Managed condition's while Unmanaged
  IDLE FOR   since the last activity; while awake, since the last wake (or adoption) if that came later
  FORECAST   the forecast's phase; "(suspended)": the forecast is trusted but its advice is suspended,
             because the activity it expected did not come

-o json adds the times: last activity, paused at, advice suspended since, and the next pre-wake.

Flags:
  -A, --all-namespaces   every namespace
  -o, --output json      the rows as JSON instead of a table
${connectionFlags}${helpFlag}`;

const recommendationsHelp = `kubectl napwake recommendations [-n namespace | -A] [<workload>]

Shows Napwake's CPU and memory recommendations, one row per container of each workload that has a
Rightsizing (a workload a RightsizingPolicy or the cluster default covers, once the recommender has run):

  CURRENT       what the pod template asks for: CPU request/memory request/memory limit ("-": not set)
  RECOMMENDED   the recommended values, in the same order ("-": none yet)
  CHANGE        the relative change of each value ("new": nothing set now)
  MODE          the CPU mode/the memory mode (off, audit, auto-patch); "*": auto-patch was asked for but
                degraded to audit, WHY says which readiness checks failed
  WHY           too little history, auto-patch blocked, or the recommender's first reason codes

<workload>: deployment/<name>, statefulset/<name>, <name> (a workload of either kind) or a Rightsizing's
name (<name>.<kind>). Every field, bounds and confidence included: kubectl get rightsizing <name> -o yaml.

Flags:
  -A, --all-namespaces   every namespace
${connectionFlags}${helpFlag}
Examples:
  kubectl napwake recommendations -n shop
  kubectl napwake recommendations statefulset/db -n shop
  kubectl napwake recommendations -A
`;

export const commandHelp: Record<string, string> = {
  pause: requestHelp("pause"),
  resume: requestHelp("resume"),
  status: statusHelp,
  recommendations: recommendationsHelp,
};

const connectionOptions = {
  namespace: { type: "string", short: "n" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const listOptions = {
  ...connectionOptions,
  "all-namespaces": { type: "boolean", short: "A" },
} as const;

const statusOptions = {
  ...listOptions,
  output: { type: "string", short: "o" },
} as const;

function usageError(message: string, text = usage): Command {
  return { kind: "usage-error", message, text };
}

export function parseCommand(argv: readonly string[]): Command {
  const booleans = booleanValues(argv);
  if ("error" in booleans) return usageError(booleans.error);
  const [name, ...rest] = booleans.args.flatMap(splitShortEquals);
  if (name === undefined) return usageError("no command given");
  if (name === "-h" || name === "--help") return { kind: "help", text: usage };
  if (name === "help") {
    const topic = rest[0];
    if (topic === undefined) return { kind: "help", text: usage };
    const text = commandHelp[topic];
    return text ? { kind: "help", text } : usageError(`unknown command "${topic}"`);
  }
  if (name === "pause" || name === "resume") return parseRequest(name, rest);
  if (name === "status") return parseStatus(rest);
  if (name === "recommendations") return parseRecommendations(rest);
  return usageError(
    name.startsWith("-") ? `a command comes first, before ${name}` : `unknown command "${name}"`,
  );
}

type Flags = {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  help?: boolean;
  "all-namespaces"?: boolean;
  output?: string;
};

/** The flags and positionals of one command, or the usage error (or help) to answer with. */
function parseFlags(
  argv: string[],
  options: ParseArgsConfig["options"],
  help: string,
): { values: Flags; positionals: string[] } | Command {
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (err) {
    return usageError(flagError(err), help);
  }
  if (parsed.values.help) return { kind: "help", text: help };
  // kubectl reads an empty -n as none given; sent on, it would ask for /namespaces//.
  if (parsed.values.namespace === "")
    return usageError("-n/--namespace needs a name: leave it out for the kubeconfig's namespace", help);
  return parsed;
}

function parseRequest(action: Action, argv: string[]): Command {
  const help = commandHelp[action] ?? usage;
  const parsed = parseFlags(argv, connectionOptions, help);
  if ("kind" in parsed) return parsed;
  const { values, positionals } = parsed;
  const [workload, ...extra] = positionals;
  if (workload === undefined) return usageError(`${action} needs a workload, e.g. deployment/web`, help);
  if (extra.length) return usageError(`${action} takes one workload, got ${positionals.join(" ")}`, help);
  return {
    kind: "request",
    action,
    workload,
    ...defined({ namespace: values.namespace, kubeconfig: values.kubeconfig, context: values.context }),
  };
}

function parseStatus(argv: string[]): Command {
  const help = commandHelp.status ?? usage;
  const parsed = parseFlags(argv, statusOptions, help);
  if ("kind" in parsed) return parsed;
  const { values, positionals } = parsed;
  if (positionals.length) return usageError(`status takes no arguments, got ${positionals.join(" ")}`, help);
  const allNamespaces = values["all-namespaces"] ?? false;
  if (allNamespaces && values.namespace !== undefined)
    return usageError("use either -n <namespace> or -A, not both", help);
  const output = values.output ?? "table";
  if (output !== "table" && output !== "json")
    return usageError(`unknown output format "${output}": use -o json (or leave it out for a table)`, help);
  return {
    kind: "status",
    allNamespaces,
    output,
    ...defined({ namespace: values.namespace, kubeconfig: values.kubeconfig, context: values.context }),
  };
}

function parseRecommendations(argv: string[]): Command {
  const help = commandHelp.recommendations ?? usage;
  const parsed = parseFlags(argv, listOptions, help);
  if ("kind" in parsed) return parsed;
  const { values, positionals } = parsed;
  const [workload, ...extra] = positionals;
  if (extra.length)
    return usageError(`recommendations takes at most one workload, got ${positionals.join(" ")}`, help);
  const allNamespaces = values["all-namespaces"] ?? false;
  if (allNamespaces && values.namespace !== undefined)
    return usageError("use either -n <namespace> or -A, not both", help);
  return {
    kind: "recommendations",
    allNamespaces,
    ...defined({
      namespace: values.namespace,
      workload,
      kubeconfig: values.kubeconfig,
      context: values.context,
    }),
  };
}

/** The boolean flags, each with its other spelling. */
const booleanFlags: Record<string, string> = {
  "-A": "--all-namespaces",
  "--all-namespaces": "-A",
  "-h": "--help",
  "--help": "-h",
};

/**
 * kubectl accepts a boolean flag with a value, `-A=true` or `--all-namespaces=false` (as Go reads booleans: 1, t,
 * true, 0, f, false, in any case): parseArgs refuses the long form and reads the short one as -A and an argument
 * "true". True is the flag; false is no flag, and the last one given wins, so `-A -A=false` is not all namespaces.
 */
function booleanValues(argv: readonly string[]): { args: string[] } | { error: string } {
  const args: string[] = [];
  for (const arg of argv) {
    const match = /^(-A|--all-namespaces|-h|--help)=(.*)$/.exec(arg);
    if (!match) {
      args.push(arg);
      continue;
    }
    const [, flag = "", value = ""] = match;
    if (/^(1|t|true)$/i.test(value)) args.push(flag);
    else if (/^(0|f|false)$/i.test(value)) {
      const spellings = [flag, booleanFlags[flag]];
      for (let i = args.length - 1; i >= 0; i--) if (spellings.includes(args[i])) args.splice(i, 1);
    } else return { error: `${flag} takes true or false, got ${JSON.stringify(value)}` };
  }
  return { args };
}

/** kubectl accepts `-n=shop`; parseArgs would read it as the namespace "=shop". */
function splitShortEquals(arg: string): string[] {
  const match = /^(-[a-zA-Z])=(.*)$/.exec(arg);
  return match ? [match[1] ?? arg, match[2] ?? ""] : [arg];
}

function flagError(err: unknown): string {
  // parseArgs's messages name the flag; the hint that follows them is for its own API, not for a person.
  const message = err instanceof Error ? err.message : String(err);
  return message.split(". To specify")[0]?.split("\n")[0] ?? message;
}

function defined<T extends Record<string, string | undefined>>(values: T): Partial<Record<keyof T, string>> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<
    Record<keyof T, string>
  >;
}
