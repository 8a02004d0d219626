import type { KubernetesObject, ObjectCache } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { type CacheEvents, watchedCache } from "./watched-cache.ts";

type Callback = (obj: KubernetesObject) => void;

/** A stand-in for the informer's store and event source: a map and the callbacks registered on it. */
function informerOf(objects: KubernetesObject[]) {
  const callbacks = new Map<string, Callback[]>();
  const store: ObjectCache<KubernetesObject> = {
    get: (name, namespace) =>
      objects.find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    list: (namespace) =>
      objects.filter((o) => namespace === undefined || o.metadata?.namespace === namespace),
  };
  const events: CacheEvents = {
    on: (verb, cb) => callbacks.set(verb, [...(callbacks.get(verb) ?? []), cb]),
  };
  const emit = (verb: string, obj: KubernetesObject) => {
    for (const cb of callbacks.get(verb) ?? []) cb(obj);
  };
  return { store, events, emit };
}

const object = (name: string, spec?: object): KubernetesObject & { spec?: object } => ({
  kind: "ManagedWorkload",
  metadata: { name, namespace: "shop" },
  ...(spec ? { spec } : {}),
});

const warnings = () => {
  const seen: { fields: object; message: string }[] = [];
  return { seen, log: { warn: (fields: object, message: string) => seen.push({ fields, message }) } };
};

describe("a watched cache", () => {
  const unreadable = (o: KubernetesObject) => ("spec" in o ? null : "it has no spec");
  const good = object("web", { targetRef: {} });
  const specless = object("blank");

  it("leaves out of list and get the objects the controllers cannot read", () => {
    const { store, events } = informerOf([good, specless]);
    const cache = watchedCache(store, events, { unreadable }).cache;
    expect(cache.list("shop").map((o) => o.metadata?.name)).toEqual(["web"]);
    expect(cache.get("blank", "shop")).toBeUndefined();
    expect(cache.get("web", "shop")).toBe(good);
  });

  it("tells no listener of an unreadable object, and reports it instead", () => {
    const { store, events, emit } = informerOf([]);
    const { seen, log } = warnings();
    const heard: string[] = [];
    watchedCache(store, events, { unreadable, log }).onChange((o) => heard.push(o.metadata?.name ?? ""));
    emit("add", specless);
    emit("add", good);
    expect(heard).toEqual(["web"]);
    expect(seen).toEqual([
      {
        fields: { object: "ManagedWorkload shop/blank", reason: "it has no spec" },
        message: "left out of the cache",
      },
    ]);
  });

  it("tells of an unreadable object deleted, by name, so what its name blocked can go ahead", () => {
    const { store, events, emit } = informerOf([]);
    const gone: object[] = [];
    const heard: string[] = [];
    const cache = watchedCache(store, events, { unreadable });
    cache.onLeftOutGone((meta) => gone.push(meta));
    cache.onChange((o) => heard.push(o.metadata?.name ?? ""));
    emit("update", specless);
    emit("delete", specless);
    emit("delete", good);
    expect(gone).toEqual([{ name: "blank", namespace: "shop" }]);
    expect(heard).toEqual(["web"]);
  });

  it("reports a listener that throws, and still calls the others, so one bad object never ends the process", () => {
    const { store, events, emit } = informerOf([]);
    const { seen, log } = warnings();
    const cache = watchedCache(store, events, { log });
    const heard: string[] = [];
    cache.onChange(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'targetRef')");
    });
    cache.onChange((o) => heard.push(o.metadata?.name ?? ""));
    expect(() => emit("update", good)).not.toThrow();
    expect(heard).toEqual(["web"]);
    expect(seen[0]?.message).toBe("a cache listener failed");
  });

  it("stops calling a listener once it is removed", () => {
    const { store, events, emit } = informerOf([]);
    const cache = watchedCache(store, events);
    const heard: string[] = [];
    const remove = cache.onChange((o) => heard.push(o.metadata?.name ?? ""));
    emit("add", good);
    remove();
    emit("delete", good);
    expect(heard).toEqual(["web"]);
  });
});
