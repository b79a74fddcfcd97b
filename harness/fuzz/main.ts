// `npm run fuzz -- --requests 10000 --seed S [--concurrency 8] [--only i,j] [--out FILE]`: the long
// fuzz run (the short one is test/integration/fuzz-listeners.test.ts). It starts a node as a child
// process (as `npm start` does) on a fresh database of the test Postgres (harness/db.ts), prepares
// credentials and ids, runs the seeded requests across the three listeners and prints the totals
// and every failure with its index; `--only` replays those indexes alone. Exit 0 only with 0
// failures (no 5xx, no missing or cut answer, no error outside its listener's shape).
import { writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { createTestDatabase } from "../db.ts"
import { spawnNode } from "../nodeProcess.ts"
import { testMasterKey } from "../config.ts"
import { runFuzz, summary } from "./run.ts"
import { fuzzNodeSettings, fuzzTargets, prepareFuzz } from "./world.ts"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "10000" },
    seed: { type: "string", default: String(Date.now() % 1_000_000) },
    concurrency: { type: "string", default: "8" },
    only: { type: "string" },
    out: { type: "string" }
  }
})
const requests = Number(values.requests)
const seed = Number(values.seed)
const concurrency = Number(values.concurrency)
const only = values.only?.split(",").map(Number)
if (!Number.isInteger(requests) || requests < 1 || !Number.isInteger(seed) || seed < 0 || !Number.isInteger(concurrency) || concurrency < 1 || only?.some((i) => !Number.isInteger(i))) {
  console.error("usage: npm run fuzz -- [--requests N] [--seed S] [--concurrency C] [--only i,j,…] [--out FILE]")
  process.exit(2)
}

const db = await createTestDatabase("fuzzrun")
let exit = 1
try {
  const node = await spawnNode({ ...fuzzNodeSettings, SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_TOPOLOGY: "single" }, { startTimeoutMs: 120_000 })
  try {
    const context = await prepareFuzz(db.url, node)
    console.log(`fuzz: node ${node.name} (pid ${node.pid}); ${only === undefined ? `${requests} requests` : `replaying ${only.length}`}, seed ${seed}, ${concurrency} at once`)
    const report = await runFuzz({ targets: fuzzTargets(node), context, seed, requests, concurrency, ...(only === undefined ? {} : { only }), log: (l) => console.log(`  ${l}`) })
    console.log(summary(report, 50))
    if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(report, null, 2))
    exit = report.failures.length === 0 ? 0 : 1
    if (!node.isRunning()) {
      console.log(`fuzz: the node exited during the run:\n${node.output().slice(-4000)}`)
      exit = 1
    }
  } finally {
    await node.dispose()
  }
} catch (e) {
  console.error(`fuzz: ${e instanceof Error ? e.message : String(e)}`)
} finally {
  await db.drop()
}
process.exit(exit)
