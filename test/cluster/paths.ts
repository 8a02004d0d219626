import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, for files the harness reads (manifests, entry points). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
