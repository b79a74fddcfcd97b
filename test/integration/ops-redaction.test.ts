// What /ops tells (issue 27, point 12). With no SHARDLINE_OPS_TOKEN configured (the loopback
// default) anyone on the host may read /ops, so it leaves out partner webhook order references and
// the fee sponsor's address and balance; a node with a token shows its holder the full view.
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"
import { eventually } from "../support/chainsOps.ts"
import { idOnShardOf, shardsSettled } from "../support/shards.ts"

let db: TestDatabase
let open: RunningNode
let guarded: RunningNode
const secretA = "partner-a-secret-for-the-ops-test"
const token = "ops-token-for-the-redaction-test"
const shortRef = "TX-OPS12345"

beforeAll(async () => {
  db = await createTestDatabase("opsredact")
  // Two nodes on one database are a cluster, so they run the socket topology: two `single` nodes
  // split the shards but cannot reach each other's entities, and this webhook hung whenever its
  // order's shard fell to the second node (issue 22; docs/operations.md, "Two nodes on one
  // database"). Default lock timings, both nodes up, and the order placed on the second node's
  // shards, so the webhook's PartnerEvent crosses from the node that takes it to its peer.
  const cluster = { SHARDLINE_TOPOLOGY: "socket", SHARDLINE_DEVNET_PER_NODE: "true" }
  open = await startNode(db.url, { ...cluster, SHARDLINE_WEBHOOK_SECRET_PARTNER_A: secretA })
  guarded = await startNode(db.url, { ...cluster, SHARDLINE_OPS_TOKEN: token })
  await eventually(() => shardsSettled([open, guarded]), 60_000)
  const orderId = await idOnShardOf(guarded, Array.from({ length: 64 }, () => randomUUID()))
  expect(orderId).toBeDefined()
  const key = await createDeskKey(db.url, { scopes: ["cashout"] })
  await db.query(`INSERT INTO desk_orders (id, short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout,
      deposit_address, required_confirmations, expires_at)
    SELECT $3, $2, member_id, id, 'cashout', 'awaiting_deposit', 'DUSD', 'base', 100000000, 300000, 99700, 'Tdeposit', 1, now() + interval '1 hour'
    FROM desk_api_keys WHERE key_hash = encode(sha256($1::bytea), 'hex')`, [key.apiKey, shortRef, orderId])
  const hook = await fetch(`${open.deskUrl}/api/public/v1/webhooks/partner-a`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secretA}` },
    body: JSON.stringify({ event: "payout_confirmed", order_id: shortRef }),
    signal: AbortSignal.timeout(20_000)
  })
  expect(hook.status).toBe(200)
}, 180_000)
afterAll(async () => {
  await open?.stop()
  await guarded?.stop()
  await db?.drop()
})

const full = async () => {
  const r = await fetch(`${guarded.baseUrl}/ops`, { headers: { authorization: `Bearer ${token}` } })
  expect(r.status).toBe(200)
  return (await r.json()) as any
}

describe("/ops without a configured token", () => {
  it("the full view (token presented) names the order and the fee sponsor's address and balance", async () => {
    const address = await guarded.run(Effect.map(FeeSponsor, (s) => s.address))
    const view = await eventually(async () => {
      const v = await full()
      return v.feeSponsor?.sats != null ? v : undefined
    }, 20_000)
    expect(view.access).toBe("full")
    expect(view.partnerWebhooks.latest[0]).toMatchObject({ partner: "partner-a", event: "payout_confirmed", order: shortRef })
    expect(view.feeSponsor.address).toBe(address)
    expect(view.nodes.some((n: any) => n.stats.feeSponsor?.address === address)).toBe(true)
  })

  it("answers the open view without order references, addresses and balances", async () => {
    const address = await open.run(Effect.map(FeeSponsor, (s) => s.address))
    const sats: string = (await eventually(async () => {
      const v = await full()
      return v.feeSponsor?.sats != null ? v : undefined
    }, 20_000)).feeSponsor.sats
    const r = await fetch(`${open.baseUrl}/ops`)
    expect(r.status).toBe(200)
    const text = await r.text()
    const view = JSON.parse(text)
    expect(view.access).toBe("public")
    expect(view.withheld).toContain("SHARDLINE_OPS_TOKEN")
    // What ops needs stays: the event, the counts, the runners and shards, when the sponsor was read.
    expect(view.partnerWebhooks.lastDay).toBe(1)
    expect(view.partnerWebhooks.latest).toEqual([{ id: expect.any(String), partner: "partner-a", event: "payout_confirmed", at: expect.any(String) }])
    expect(view.shardOwners.length).toBeGreaterThan(0)
    expect(view.feeSponsor).toEqual({ node: expect.any(String), checkedAt: expect.any(String) })
    // Nowhere in the body: the reference, the sponsor's address, its balance.
    expect(text).not.toContain(shortRef)
    expect(text).not.toContain(address)
    expect(text).not.toMatch(/"sats"/)
    expect(text).not.toContain(`"${sats}"`)
  })
})
