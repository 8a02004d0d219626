/** Kubernetes resource quantities (`250m`, `1.5`, `128Mi`, `1e3`, `100n`) as plain numbers. */

/** Decimal suffixes as powers of ten, read into the number's exponent so a value is rounded once (700m is 0.7). */
const decimalExponents: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** Binary suffixes: powers of two, by which a double multiplies exactly. */
const binaryFactors: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const pattern = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** Parses a quantity to its value in base units (cores for CPU, bytes for memory). Throws on bad input. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === "number") return quantity;
  const match = pattern.exec(quantity.trim());
  const mantissa = match?.[1];
  if (!mantissa) throw new Error(`"${quantity}" is not a Kubernetes quantity (examples: 250m, 1.5, 128Mi)`);
  const suffix = match[3] ?? "";
  const binary = binaryFactors[suffix];
  const value =
    binary !== undefined
      ? Number(mantissa) * binary
      : Number(`${mantissa}e${Number(match[2] ?? 0) + (decimalExponents[suffix] ?? 0)}`);
  if (!Number.isFinite(value)) throw new Error(`"${quantity}" is too large a quantity to read`);
  return value;
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
