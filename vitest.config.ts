import { defineConfig } from "vitest/config";

// Two projects: pure unit tests, and integration tests that need the local control plane
// (started once per run by test/cluster/global-setup.ts, inside the network namespace that
// test/cluster/netns-run.sh creates).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["**/*.test.ts"],
          exclude: ["node_modules/**", "test/integration/**", "test/e2e/**"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/cluster/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
