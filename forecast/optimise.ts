// Bounded minimisation: Nelder-Mead on unconstrained coordinates that a logistic squash maps into
// the bounds, so every point the objective ever sees is inside them.

import type { Bounds } from "./config.ts";

export type MinimiseOptions = { maxEvaluations: number; tolerance: number };

export type MinimiseResult = { point: number[]; value: number; evaluations: number };

export function squash(x: number, [low, high]: Bounds): number {
  return low + (high - low) / (1 + Math.exp(-x));
}

export function unsquash(value: number, [low, high]: Bounds): number {
  if (high <= low) return 0;
  const p = Math.min(Math.max((value - low) / (high - low), 1e-6), 1 - 1e-6);
  return Math.log(p / (1 - p));
}

/** Minimises `objective` over the box `bounds`, starting at `start` (which is clamped into it). */
export function minimiseBounded(
  objective: (point: readonly number[]) => number,
  bounds: readonly Bounds[],
  start: readonly number[],
  options: MinimiseOptions,
): MinimiseResult {
  const toPoint = (x: readonly number[]) => x.map((xi, i) => squash(xi, bounds[i] ?? [0, 1]));
  const result = nelderMead(
    (x) => objective(toPoint(x)),
    start.map((value, i) => unsquash(value, bounds[i] ?? [0, 1])),
    options,
  );
  return { ...result, point: toPoint(result.point) };
}

type Vertex = { x: number[]; f: number };

/** Plain Nelder-Mead with the standard coefficients (reflect 1, expand 2, contract and shrink 1/2). */
export function nelderMead(
  objective: (x: readonly number[]) => number,
  start: readonly number[],
  { maxEvaluations, tolerance }: MinimiseOptions,
): MinimiseResult {
  let evaluations = 0;
  const evaluate = (x: number[]): Vertex => {
    evaluations++;
    const f = objective(x);
    return { x, f: Number.isFinite(f) ? f : Number.POSITIVE_INFINITY };
  };
  const simplex: Vertex[] = [evaluate([...start])];
  start.forEach((_, i) => {
    const x = [...start];
    x[i] = (x[i] ?? 0) + 1;
    simplex.push(evaluate(x));
  });

  while (evaluations < maxEvaluations) {
    simplex.sort((a, b) => a.f - b.f);
    const best = simplex[0] as Vertex;
    const worst = simplex[simplex.length - 1] as Vertex;
    const secondWorst = simplex[simplex.length - 2] as Vertex;
    if (Math.abs(worst.f - best.f) <= tolerance * (Math.abs(best.f) + tolerance)) break;

    const centroid = start.map((_, i) => {
      let sum = 0;
      for (let v = 0; v < simplex.length - 1; v++) sum += simplex[v]?.x[i] ?? 0;
      return sum / (simplex.length - 1);
    });
    const along = (t: number) => centroid.map((c, i) => c + t * (c - (worst.x[i] ?? 0)));

    const reflected = evaluate(along(1));
    if (reflected.f < best.f) {
      const expanded = evaluate(along(2));
      simplex[simplex.length - 1] = expanded.f < reflected.f ? expanded : reflected;
    } else if (reflected.f < secondWorst.f) {
      simplex[simplex.length - 1] = reflected;
    } else {
      const contracted = evaluate(along(reflected.f < worst.f ? 0.5 : -0.5));
      if (contracted.f < Math.min(worst.f, reflected.f)) {
        simplex[simplex.length - 1] = contracted;
      } else {
        for (let v = 1; v < simplex.length; v++) {
          const x = (simplex[v] as Vertex).x.map((xi, i) => (best.x[i] ?? 0) + 0.5 * (xi - (best.x[i] ?? 0)));
          simplex[v] = evaluate(x);
        }
      }
    }
  }
  simplex.sort((a, b) => a.f - b.f);
  const best = simplex[0] as Vertex;
  return { point: best.x, value: best.f, evaluations };
}
