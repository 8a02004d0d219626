import { describe, expect, it } from "vitest";
import { lookOrClockAlone } from "./controller.ts";
import { ForecastBook, type ForecastLook } from "./forecasting.ts";

function deps() {
  const errors: string[] = [];
  const forgotten: string[] = [];
  const forecasts = new ForecastBook();
  forecasts.forget = (key: string) => void forgotten.push(key);
  const log = { info: () => {}, warn: () => {}, error: (_: object, msg: string) => void errors.push(msg) };
  return { deps: { forecasts, log }, errors, forgotten };
}

describe("a forecast that fails", () => {
  it("leaves the decision to the idle clock, says so, and forgets the engine", () => {
    const { deps: d, errors, forgotten } = deps();
    const look = lookOrClockAlone(d, "shop/web.deployment", () => {
      throw new RangeError("Invalid time value");
    });
    expect(look).toBeUndefined();
    expect(errors).toEqual(["forecast failed; the idle clock decides alone"]);
    expect(forgotten).toEqual(["shop/web.deployment"]);
  });

  it("passes a working forecast's look through untouched", () => {
    const { deps: d, errors } = deps();
    const look: ForecastLook = { advice: null, prediction: undefined, notices: [] };
    expect(lookOrClockAlone(d, "k", () => look)).toBe(look);
    expect(errors).toEqual([]);
  });
});
