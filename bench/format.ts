// Plain-text tables for the benchmark output.

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

/** `value` relative to `baseline`: -0.5 is half of it; 0 when the baseline is 0. */
export function relativeChange(value: number, baseline: number): number {
  return baseline === 0 ? 0 : value / baseline - 1;
}

/** "12.5% fewer" (one decimal), "as many", or "3.0% more". */
export function fewer(count: number, baseline: number): string {
  const change = relativeChange(count, baseline) * 100;
  if (change === 0) return "as many";
  return change < 0 ? `${(-change).toFixed(1)}% fewer` : `${change.toFixed(1)}% more`;
}

export function percentChange(value: number, baseline: number): string {
  if (baseline === 0) return value === 0 ? "0%" : "n/a";
  const change = ((value - baseline) / baseline) * 100;
  return `${change > 0 ? "+" : ""}${change.toFixed(0)}%`;
}

/** Nearest-rank percentile (p in 0..100) of samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
