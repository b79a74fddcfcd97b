import { defineConfig } from "vitest/config"

// One suite: unit tests (pure, fast), integration tests (real Postgres, real chain nodes)
// and cluster tests (real processes). Files run in parallel forks; each integration file
// uses its own database schema or its own node, so they do not share state.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
