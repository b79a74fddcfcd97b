// Read your own writes (issue 23, point 1): when `demo trader` or `authorizations grant` says a
// delegated address is funded, the market can spend it at once. A fresh trader's first orders,
// twenty concurrent BUYs among them, are all accepted right after the CLI returns; `account`
// shows what the market lets the trader spend; the same after a grant replaces another.
// The node runs the default devnet block clock (10 s, as on `npm start`), so no block arrives by
// chance between the CLI's answer and the orders.
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newGrantId } from "../../src/exchange/authorization/AuthorizationEntity.ts"
import { configLayer } from "../../src/config.ts"
import { pgLayer } from "../../src/platform/database/Database.ts"
import { storageClient } from "../../src/platform/ShardingSettings.ts"
import { grantAndAwait } from "../../src/cli/authorizations.ts"
import { fundDelegatedFromDemo } from "../../src/cli/demoWallet.ts"
import { faucetOmniSend } from "../../harness/faucetOmni.ts"
import { createKey } from "../../harness/keys.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedGet, signedQuery, type Key } from "../../harness/signed.ts"
import { cli, cliJson } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { DUSD, newAddress } from "../support/tradingWorld.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>

beforeAll(async () => {
  db = await createTestDatabase("funding_visible")
  // The file places about ninety orders (weight 20 each) from one IP within a minute or two: the
  // default IP budget (1200 a minute) would answer some of them 429, which is not what is tested.
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "10000", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000" })
  env = cliEnvOf(db.url, node)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

interface Trader extends Key {
  readonly userId: number
  readonly authorizations: ReadonlyArray<{ asset: string; funded: string; delegatedAddress: string }>
}

const order = async (key: Key, params: Record<string, string>) => {
  const res = await fetch(`${node.baseUrl}/api/public/v1/order?${signedQuery(key, params)}`, { method: "POST", headers: { "X-MBX-APIKEY": key.apiKey } })
  return { status: res.status, body: (await res.json()) as { orderId?: string; status?: string; code?: number; msg?: string } }
}

const freeOf = async (key: Key, asset: string) => {
  const account = (await (await signedGet(node.baseUrl, "/api/public/v1/account", key)).json()) as { balances: Array<{ asset: string; free: string }> }
  return account.balances.find((b) => b.asset === asset)?.free
}

describe("funding is visible when the tools say it is", () => {
  it("a fresh trader's first orders, twenty concurrent BUYs, are all accepted; account agrees", { timeout: 180_000 }, async () => {
    const t = cliJson<Trader>(await cli(["demo", "trader", "--fund", "DUSD:100,SHRD:50", "--json"], env))
    expect(t.authorizations.find((a) => a.asset === "DUSD")?.funded).toBe("100")
    // At once, no wait: twenty BUYs of 1 SHRD at 1 DUSD (the book is empty: they all rest).
    const buys = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      order(t, { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1", newClientOrderId: `buy-${i}` })))
    expect(buys.map((b) => b.body.msg ?? b.body.status)).toEqual(Array(20).fill("NEW"))
    // The account shows what the market reserved, and what is still free is what it accepts.
    expect(await freeOf(t, "DUSD")).toBe("80.00000000")
    const sell = await order(t, { symbol: "SHRDDUSD", side: "SELL", type: "LIMIT", timeInForce: "GTC", price: "3", quantity: "50" })
    expect(sell.body.msg ?? sell.body.status).toBe("NEW")
    const tooMuch = await order(t, { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "81" })
    expect(tooMuch.body).toMatchObject({ code: -2010, msg: expect.stringMatching(/80\.00000000/) })
  })

  // Deterministic versions of the two races, inside the node (no CLI start-up between the write
  // and the read): the tool's own write, and a payment the node's view has not applied yet.
  it("FundDemo answers only once the node's view has the block: account shows it at once", { timeout: 180_000 }, async () => {
    const t = cliJson<Trader>(await cli(["demo", "trader", "--fund", "DUSD:100", "--cap", "DUSD:10", "--json"], env))
    // What the CLI process runs in: the node's database and a storage-only cluster client.
    const asCli = storageClient(node.config).pipe(
      Layer.provideMerge(pgLayer({ applicationName: "test:cli" })),
      Layer.provideMerge(configLayer(node.config))
    )
    for (const cap of ["20", "30", "40"]) {
      const free = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const outcome = yield* grantAndAwait(t.userId, "DUSD", cap, 3_600_000, newGrantId())
        if (outcome._tag !== "Done") return yield* Effect.dieMessage(`grant ${cap}: ${outcome._tag}`)
        yield* fundDelegatedFromDemo(t.userId, "DUSD", outcome.grant.delegatedAddress!, cap)
        return yield* Effect.promise(() => freeOf(t, "DUSD"))
      }).pipe(Effect.provide(asCli))))
      expect(free).toBe(`${cap}.00000000`)
    }
  })

  it("the market syncs its view before refusing for funds: orders right after an on-chain payment are accepted", { timeout: 180_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const address = newAddress()
      const key = await createKey(db.url, { scopes: ["read", "trade"], addresses: [address] })
      const granted = cliJson<{ delegatedAddress: string }>(
        await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "DUSD", "--cap", "20", "--expires-in", "1h", "--json"], env))
      // Paid and mined on the ledger; the node's view has not applied the block yet.
      await node.run(faucetOmniSend(granted.delegatedAddress, DUSD.propertyId, 20n * 10n ** 8n))
      const buys = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        order(key, { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1", newClientOrderId: `r${round}-${i}` })))
      expect(buys.map((b) => b.body.msg ?? b.body.status)).toEqual(Array(20).fill("NEW"))
      // Past the funds, the refusal still comes (once the view is known to be current).
      const more = await order(key, { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1" })
      expect(more.body).toMatchObject({ code: -2010 })
    }
  })

  it("after authorizations grant replaces a grant, the first order against it is accepted", { timeout: 180_000 }, async () => {
    const t = cliJson<Trader>(await cli(["demo", "trader", "--fund", "DUSD:100,SHRD:60", "--cap", "SHRD:20", "--json"], env))
    const granted = cliJson<{ delegatedAddress: string; funded: { balance: string } }>(
      await cli(["authorizations", "grant", "--key", t.apiKey, "--asset", "SHRD", "--cap", "30", "--expires-in", "1h", "--json"], env))
    expect(granted.funded.balance).toBe("30")
    const sells = await Promise.all(Array.from({ length: 5 }, (_, i) =>
      order(t, { symbol: "SHRDDUSD", side: "SELL", type: "LIMIT", timeInForce: "GTC", price: "5", quantity: "6", newClientOrderId: `sell-${i}` })))
    expect(sells.map((s) => s.body.msg ?? s.body.status)).toEqual(Array(5).fill("NEW"))
    expect(await freeOf(t, "SHRD")).toBe("0.00000000")
  })
})
