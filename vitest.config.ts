import { defineConfig } from "vitest/config"

// One suite in three projects: unit (pure, fast, nothing outside the process), integration
// (real Postgres, real chain nodes) and cluster (real processes). Files run in parallel forks;
// each integration file uses its own database or its own node, so they do not share state.
// `npm run test:unit` runs `--project unit`. The global setup provides what npm cannot
// (litecoind, a running Postgres) for the projects that need it.
const needsMachine = { globalSetup: ["./test/support/globalSetup.ts"] }

// The long tier (test/support/tier.ts, docs/testing.md): `npm run test:long`, which CI runs after
// `npm test` and the chaos run. Whole files, each a minute or more of faults on a part the core
// suite and the chaos run already cover once:
const longFiles = [
  "test/cluster/attestor-failover.test.ts",
  "test/cluster/social-posts-kill.test.ts",
  "test/cluster/desk-wrap-kill.test.ts",
  "test/cluster/processes.test.ts",
  "test/integration/embedded-supervised.test.ts",
  "test/integration/embedded-shard-watchdog.test.ts",
  "test/integration/cluster-start.test.ts"
]
// and files in both tiers, each tier running its own variants (`variantsOfTier`): the core one
// process per node, the long one two (SHARDLINE_PROCESSES); the core `npm start`, the long a
// cluster node.
const splitFiles = [
  "test/cluster/orders-kill.test.ts",
  "test/cluster/settlement-kill.test.ts",
  "test/integration/external-pg-reconnect.test.ts"
]

export default defineConfig({
  test: {
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/summaryReporter.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], exclude: longFiles, ...needsMachine } },
      { extends: true, test: { name: "cluster", include: ["test/cluster/**/*.test.ts"], exclude: longFiles, ...needsMachine } },
      { extends: true, test: { name: "long", include: [...longFiles, ...splitFiles], env: { SHARDLINE_TEST_TIER: "long" }, ...needsMachine } }
    ]
  }
})
