/** Kubernetes resource quantities (`250m`, `1.5`, `128Mi`, `1e3`, `100n`) as plain numbers. */

const suffixes: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const pattern = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** Parses a quantity to its value in base units (cores for CPU, bytes for memory). Throws on bad input. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === "number") return quantity;
  const match = pattern.exec(quantity.trim());
  if (!match?.[1]) throw new Error(`"${quantity}" is not a Kubernetes quantity (examples: 250m, 1.5, 128Mi)`);
  const mantissa = Number(match[1]);
  if (match[2]) return mantissa * 10 ** Number(match[2].slice(1));
  return mantissa * (suffixes[match[3] ?? ""] ?? 1);
}

/** A quantity's value, or undefined when it is absent or not a quantity (for readers that carry on without it). */
export function quantityOrUndefined(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  try {
    return parseQuantity(quantity);
  } catch {
    return undefined;
  }
}

/** CPU cores as a quantity string in millicores, the way people write requests. */
export function formatMillicores(cores: number): string {
  return `${Math.round(cores * 1000)}m`;
}

/** Bytes as a quantity string: in Mi where they are whole Mi, else in bytes (1G is 1000000000, not 954Mi). */
export function formatMebibytes(bytes: number): string {
  const mebibytes = bytes / 2 ** 20;
  return Number.isInteger(mebibytes) ? `${mebibytes}Mi` : String(Math.round(bytes));
}
