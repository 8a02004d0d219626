/** "1 replica", "3 replicas": counts in notes and messages read as written English (a count read as text too). */
export function replicaCount(count: number | string): string {
  return `${count} ${String(count) === "1" ? "replica" : "replicas"}`;
}
