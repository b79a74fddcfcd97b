// Issue 27 ("Done when"): a seeded fuzz run across the three listeners of a real node: every
// operation of each listener's own OpenAPI document (and the routes it serves beside it), with
// parameters, bodies, headers and methods made hostile (harness/fuzz/). Not one answer may be a 5xx,
// missing, cut, a stack trace, or an error outside the listener's shape. This is the short run; the
// long one (10,000+ requests) is `npm run fuzz -- --requests 10000 --seed S` (docs/operations.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import type { FuzzContext } from "../../harness/fuzz/generate.ts"
import { runFuzz, summary } from "../../harness/fuzz/run.ts"
import { fuzzNodeSettings, fuzzTargets, prepareFuzz } from "../../harness/fuzz/world.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode
let context: FuzzContext

beforeAll(async () => {
  db = await createTestDatabase("fuzz")
  node = await startNode(db.url, { ...fuzzNodeSettings })
  context = await prepareFuzz(db.url, node)
}, 180_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const requests = Number(process.env.FUZZ_REQUESTS ?? 1500)
const seed = Number(process.env.FUZZ_SEED ?? 20261128)

describe("fuzzing the three listeners", () => {
  it(`${requests} seeded requests (seed ${seed}): no 5xx, no missing or cut answer, every error in its listener's shape`, async () => {
    const report = await runFuzz({ targets: fuzzTargets(node), context, seed, requests, concurrency: 6 })
    console.log(summary(report))
    // Every listener was reached, and most of what each documents.
    expect(Object.keys(report.statuses).sort()).toEqual(["desk", "exchange", "social"])
    expect(report.operationsHit).toBeGreaterThan(report.operations * 0.8)
    expect(report.fivexx).toBe(0)
    expect(report.failures.map((f) => `#${f.index} ${f.route} → ${f.status}: ${f.problems.join("; ")}`)).toEqual([])
  }, 240_000)
})
