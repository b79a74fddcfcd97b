// The desk shows an ERC-20 amount in the decimals its contract answers (decimals(), read through
// the EVM port and cached), not in a table of devnet decimals: on the in-process EVM devnet, bsc's
// USDC has 18 decimals, base's 6, and an ethereum "USDC" configured at an 18-decimal contract
// (SHARDLINE_EVM_TOKEN_CONTRACTS pointing at the devnet's DAI) is quoted, stored and shown in 18.
import { randomBytes } from "node:crypto"
import { privateKeyToAddress } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { deskCaller } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const call = deskCaller(() => node.deskUrl)
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"
const hotKey = `0x${randomBytes(32).toString("hex")}` as const

beforeAll(async () => {
  db = await createTestDatabase("deskdecimals")
  node = await startNode(db.url, {
    SHARDLINE_EVM_HOT_WALLET_KEY: hotKey,
    SHARDLINE_EVM_TOKEN_CONTRACTS: `ethereum:USDC=${devnetTokenAddress(privateKeyToAddress(hotKey), "DAI")}`
  })
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const storedPayout = async (id: string) => (await db.query<{ p: string }>("SELECT payout::text AS p FROM desk_orders WHERE id = $1", [id]))[0]!.p

describe("desk order amounts in the contract's decimals", () => {
  it("quotes, stores and shows a cash-out's USDC in its contract's decimals on each chain", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    // 12 SUSD less the 10 bps fee: 11.988 USDC, in each chain's USDC units.
    for (const [chain, units] of [["bsc", "11988000000000000000"], ["base", "11988000"], ["ethereum", "11988000000000000000"]] as const) {
      const created = await call("POST", "/cashout/orders", key.apiKey, { amount: 12, chain, payoutAddress: payout })
      expect(created.status, chain).toBe(201)
      expect(created.body.payoutAmount, chain).toBe("11.988")
      expect(await storedPayout(created.body.id), chain).toBe(units)
      const polled = await call("GET", `/cashout/orders/${created.body.id}`, key.apiKey)
      expect(polled.body.payoutAmount, chain).toBe("11.988")
    }
  }, 90_000)
})
