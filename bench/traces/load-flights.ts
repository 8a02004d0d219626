// Reads the flights file from the optional `vega-datasets` package; null when it is not installed.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { flightsToTrace } from "./flights.ts";
import type { Trace } from "./trace.ts";

/** Largest first: more flights give a denser, more realistic activity series. */
const CANDIDATE_FILES = ["flights-20k.json", "flights-10k.json", "flights-5k.json", "flights-2k.json"];

function packageDir(): string | null {
  const require = createRequire(import.meta.url);
  try {
    return dirname(require.resolve("vega-datasets/package.json"));
  } catch {
    const local = join(import.meta.dirname, "..", "..", "node_modules", "vega-datasets");
    try {
      readFileSync(join(local, "package.json"));
      return local;
    } catch {
      return null;
    }
  }
}

export function loadFlightsTrace(): { trace: Trace | null; note: string } {
  const dir = packageDir();
  if (!dir) return { trace: null, note: "vega-datasets is not installed: flights trace skipped" };
  for (const file of CANDIDATE_FILES) {
    let text: string;
    try {
      text = readFileSync(join(dir, "data", file), "utf8");
    } catch {
      continue;
    }
    const records: unknown = JSON.parse(text);
    if (!Array.isArray(records)) return { trace: null, note: `${file} is not a JSON array: skipped` };
    const trace = flightsToTrace(records, `flights (${file})`);
    return { trace, note: trace ? `loaded ${file}` : `${file} had no readable dates: skipped` };
  }
  return { trace: null, note: "vega-datasets has no flights-*.json file: flights trace skipped" };
}
