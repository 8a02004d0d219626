import { dumpYaml, type KubernetesObject } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { toClientModel } from "./apply.ts";

const crd: KubernetesObject & Record<string, unknown> = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "things.example.dev" },
  spec: {
    group: "example.dev",
    names: { kind: "Thing", plural: "things" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            "x-kubernetes-validations": [{ rule: "has(self.spec)", message: "spec is required" }],
            properties: { spec: { type: "object", properties: { size: { type: "integer", default: 3 } } } },
          },
        },
      },
    ],
  },
};

describe("toClientModel", () => {
  it("keeps wire-named schema keys (CEL rules, defaults) through the client's serialiser", () => {
    const wire = dumpYaml(toClientModel(crd));
    expect(wire).toContain("x-kubernetes-validations");
    expect(wire).toContain("spec is required");
    expect(wire).toContain("default: 3");
  });

  it("leaves custom resources as they are", () => {
    const thing = {
      apiVersion: "example.dev/v1",
      kind: "Thing",
      metadata: { name: "a" },
      spec: { "odd-key": 1 },
    };
    expect(toClientModel(thing)).toEqual(thing);
  });
});
