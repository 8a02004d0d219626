// A library forecaster to compare with: MSTL (daily and weekly seasons) with an AutoETS trend, from the
// optional `@bsull/augurs` package (WASM). Loaded once, synchronously from the package's .wasm file.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { DAY_SLOTS, WEEK_SLOTS } from "../../forecast/index.ts";

/** Forecasts `horizon` slots after `history` (gaps are NaN), never below 0. */
export type Forecaster = (history: Float64Array, horizon: number) => Float64Array;

export type AugursLoad = { ok: true; mstl: Forecaster; version: string } | { ok: false; reason: string };

export async function loadAugursMstl(): Promise<AugursLoad> {
  let dir: string;
  let version: string;
  try {
    // The package exports only its modules, not package.json: find it next to the MSTL module.
    dir = dirname(createRequire(import.meta.url).resolve("@bsull/augurs/mstl"));
    version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  } catch (cause) {
    return {
      ok: false,
      reason: `@bsull/augurs is not installed (${(cause as Error).message.split("\n")[0]})`,
    };
  }
  try {
    const mstl = await import("@bsull/augurs/mstl");
    mstl.initSync({ module: readFileSync(join(dir, "mstl_bg.wasm")) });
    const forecaster: Forecaster = (history, horizon) => {
      const model = mstl.MSTL.ets([DAY_SLOTS, WEEK_SLOTS], { impute: false });
      try {
        model.fit(fillGaps(history));
        return Float64Array.from(model.predict(horizon).point, (v) => Math.max(0, v));
      } finally {
        model.free();
      }
    };
    return { ok: true, mstl: forecaster, version };
  } catch (cause) {
    return { ok: false, reason: `@bsull/augurs ${version} could not run MSTL: ${String(cause)}` };
  }
}

/** Gaps take the value of the same slot a week (else a day) before, else 0: MSTL needs a full series. */
export function fillGaps(values: Float64Array): Float64Array {
  const filled = values.slice();
  filled.forEach((value, i) => {
    if (!Number.isNaN(value)) return;
    const lastWeek = filled[i - WEEK_SLOTS];
    const yesterday = filled[i - DAY_SLOTS];
    filled[i] = lastWeek !== undefined && !Number.isNaN(lastWeek) ? lastWeek : (yesterday ?? 0);
  });
  return filled.map((v) => (Number.isNaN(v) ? 0 : v));
}
