import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { httpCode } from "./errors.ts";

describe("the status code of an API error", () => {
  it.each([
    { name: "an API exception's code", err: new ApiException(409, "conflict", {}, {}), code: 409 },
    { name: "a numeric code on any error", err: Object.assign(new Error("gone"), { code: 404 }), code: 404 },
    {
      name: "nothing for a system error's string code",
      err: Object.assign(new Error("x"), { code: "ECONNRESET" }),
      code: undefined,
    },
    { name: "nothing for an error without a code", err: new Error("x"), code: undefined },
    { name: "nothing for something thrown that is not an object", err: "boom", code: undefined },
    { name: "nothing for null", err: null, code: undefined },
  ])("is $name", ({ err, code }) => {
    expect(httpCode(err)).toBe(code);
  });
});
