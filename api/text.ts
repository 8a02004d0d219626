/** "1 replica", "3 replicas": counts in notes and messages read as written English. */
export function replicaCount(count: number): string {
  return `${count} ${count === 1 ? "replica" : "replicas"}`;
}
