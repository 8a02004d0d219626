/** "1 replica", "3 replicas": counts in notes and messages read as written English (a count read as text too). */
export function replicaCount(count: number | string): string {
  return `${count} ${String(count) === "1" ? "replica" : "replicas"}`;
}

/**
 * `value` in double quotes for a message, cut to its first `max` characters (whole code points) and "…": an
 * annotation may hold 256 KiB, which a refusal or an Event should not repeat.
 */
export function quotedValue(value: string, max = 64): string {
  const chars = Array.from(value);
  return chars.length <= max ? JSON.stringify(value) : `${JSON.stringify(chars.slice(0, max).join(""))}…`;
}
