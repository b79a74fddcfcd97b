import { defineConfig } from "vitest/config"

// One suite in three projects: unit (pure, fast, nothing outside the process), integration
// (real Postgres, real chain nodes) and cluster (real processes). Files run in parallel forks;
// each integration file uses its own database or its own node, so they do not share state.
// `npm run test:unit` runs `--project unit`. The global setup provides what npm cannot
// (litecoind, a running Postgres) for the projects that need it.
const needsMachine = { globalSetup: ["./test/support/globalSetup.ts"] }

export default defineConfig({
  test: {
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/summaryReporter.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], ...needsMachine } },
      { extends: true, test: { name: "cluster", include: ["test/cluster/**/*.test.ts"], ...needsMachine } }
    ]
  }
})
