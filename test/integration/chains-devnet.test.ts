// A node with its default chains: in-process devnets for the ledger and ethereum, base and bsc,
// mining on a clock. /ops, /metrics and the ops CLI show their heights going up.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chainMetric, eventually, opsChains as opsChainsOf } from "../support/chainsOps.ts"
import { cli } from "../support/cli.ts"
import { createTestDatabase, type TestDatabase } from "../support/db.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("chains")
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "100" })
})

afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const opsChains = () => opsChainsOf(node.baseUrl)
const metric = (name: string, chain: string) => chainMetric(node.baseUrl, name, chain)

describe("a node with devnet chains", () => {
  it("reports every chain in /ops, each with a height that rises with the block clock", async () => {
    const first = await eventually(async () => {
      const chains = await opsChains()
      return chains.length === 4 && chains.every((c) => c.available && c.height! > 0) ? chains : undefined
    })
    expect(first.map((c) => [c.chain, c.kind, c.node])).toEqual([
      ["ledger", "devnet", "shardline:embedded"],
      ["ethereum", "devnet", "shardline:embedded"],
      ["base", "devnet", "shardline:embedded"],
      ["bsc", "devnet", "shardline:embedded"]
    ])
    expect(first.map((c) => c.chainId)).toEqual([undefined, 1, 8453, 56])
    // A block every 100 ms; the node reports every 2 s.
    const later = await eventually(async () => {
      const chains = await opsChains()
      return chains.every((c, i) => c.height! > first[i]!.height!) ? chains : undefined
    })
    for (const c of later) expect(c).toMatchObject({ available: true })
  })

  it("exports shardline_chain_height and shardline_chain_up per chain in /metrics", async () => {
    const h1 = await eventually(() => metric("shardline_chain_height", "ledger"))
    const h2 = await eventually(async () => {
      const h = await metric("shardline_chain_height", "ledger")
      return h !== undefined && h > h1 ? h : undefined
    })
    expect(h2).toBeGreaterThan(h1)
    for (const chain of ["ledger", "ethereum", "base", "bsc"]) {
      expect(await metric("shardline_chain_up", chain)).toBe(1)
      expect(await metric("shardline_chain_height", chain)).toBeGreaterThan(0)
    }
  })

  it("the ops CLI prints the chains section", async () => {
    const out = await cli(["ops"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
    expect(out.code).toBe(0)
    expect(out.stdout).toMatch(/^chains:$/m)
    expect(out.stdout).toMatch(/^ {2}ledger +devnet +height \d+ +shardline:embedded$/m)
    expect(out.stdout).toMatch(/^ {2}base +devnet +block \d+ +chain id 8453 +shardline:embedded$/m)
  })
})
