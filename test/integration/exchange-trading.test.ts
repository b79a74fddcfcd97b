// Exchange trading end to end on one node and its ledger devnet: a market of two Omni properties,
// two users each with an authorization funded on chain, LIMIT orders that rest, cross, settle
// and cancel through the Binance-shaped endpoints, and the refusals of bad input.
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedGet, signedQuery, type Key } from "../../harness/signed.ts"
import { cli } from "../support/cli.ts"
import { DUSD, fundOmni, issueProperty, listMarket, newAddress } from "../support/tradingWorld.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { marketPathCounts } from "../../src/exchange/http/OrderHandlers.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>
let seller: Key & { userId: number; address: string }
let buyer: Key & { userId: number; address: string }
let reader: Key & { userId: number }
const symbol = "TSTDUSD"
const prefix = "/api/public/v1"

const call = async (method: "POST" | "DELETE" | "GET", path: string, key: Key, params: Record<string, string | number>) => {
  const res = await fetch(`${node.baseUrl}${prefix}${path}?${signedQuery(key, params)}`, { method, headers: { "X-MBX-APIKEY": key.apiKey } })
  return { status: res.status, body: (await res.json()) as any }
}

const grant = async (key: Key, asset: string, cap: string) => {
  const r = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", asset, "--cap", cap, "--expires-in", "1h", "--json"], env)
  expect(r.stderr).toBe("")
  return JSON.parse(r.stdout) as { delegatedAddress: string; grantId: string }
}

/** Waits until the node's Omni view shows the funds (its follower polls every 250 ms). */
const account = async (key: Key) => (await (await signedGet(node.baseUrl, `${prefix}/account`, key)).json()) as any
const untilFunded = async (key: Key, asset: string, free: string) => {
  for (let i = 0; i < 100; i++) {
    const a = await account(key)
    if (a.balances?.find((b: any) => b.asset === asset)?.free === free) return a
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${asset} never became free ${free}: ${JSON.stringify(await account(key))}`)
}

beforeAll(async () => {
  db = await createTestDatabase("trading")
  node = await startNode(db.url)
  env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
  const tst = await issueProperty(node, "Trading test token", 1_000_000n)
  await listMarket(db, symbol, { code: "TST", propertyId: tst }, DUSD)
  const sellerAddress = newAddress()
  const buyerAddress = newAddress()
  seller = { ...(await createKey(db.url, { scopes: ["read", "trade"], addresses: [sellerAddress] })), address: sellerAddress }
  buyer = { ...(await createKey(db.url, { scopes: ["read", "trade"], addresses: [buyerAddress] })), address: buyerAddress }
  reader = await createKey(db.url, { scopes: ["read"], addresses: [newAddress()] })
  const s = await grant(seller, "TST", "50")
  const b = await grant(buyer, "DUSD", "1000")
  await fundOmni(node, s.delegatedAddress, tst, 40n * 10n ** 8n) // less than the cap: the funded check binds first
  await fundOmni(node, b.delegatedAddress, DUSD.propertyId, 1000n * 10n ** 8n)
  await untilFunded(seller, "TST", "40.00000000")
  await untilFunded(buyer, "DUSD", "1000.00000000")
}, 120_000)

afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("exchange trading", () => {
  it("lists the market in exchangeInfo with Binance's filters", async () => {
    const info = (await (await fetch(`${node.baseUrl}${prefix}/exchangeInfo`)).json()) as any
    const m = info.symbols.find((s: any) => s.symbol === symbol)
    expect(m).toMatchObject({ baseAsset: "TST", quoteAsset: "DUSD", status: "TRADING", orderTypes: ["LIMIT"] })
    expect(m.filters.map((f: any) => f.filterType)).toEqual(["PRICE_FILTER", "LOT_SIZE", "MIN_NOTIONAL", "NOTIONAL"])
    expect(m.filters[0]).toMatchObject({ tickSize: "0.01" })
  })

  it("rests, crosses at the maker's price, and records both settlement legs", async () => {
    const ask = await call("POST", "/order", seller, { symbol: "TST_DUSD", side: "SELL", price: "2.50", quantity: "4", newClientOrderId: "ask-1" })
    expect(ask.status).toBe(200)
    expect(ask.body).toMatchObject({ symbol, status: "NEW", origQty: "4.00000000", executedQty: "0.00000000", fills: [] })
    const bid = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "2.60", quantity: "1.5" })
    expect(bid.status).toBe(200)
    expect(bid.body).toMatchObject({ status: "FILLED", executedQty: "1.50000000", cummulativeQuoteQty: "3.75000000" })
    expect(bid.body.fills).toHaveLength(1)
    const fill = bid.body.fills[0]
    expect(fill).toMatchObject({ price: "2.50000000", qty: "1.50000000", commission: "0" })
    const [base, quote] = fill.legs
    expect(base).toMatchObject({ asset: "TST", amount: "1.50000000", to: buyer.address })
    expect(quote).toMatchObject({ asset: "DUSD", amount: "3.75000000", to: seller.address })
    const legs = await db.query<{ leg: string; amount: string }>(`SELECT leg, amount::text FROM settlement_legs WHERE trade_id = $1 ORDER BY leg`, [fill.tradeId])
    expect(legs).toEqual([{ leg: "base", amount: "150000000" }, { leg: "quote", amount: "375000000" }])

    const order = await call("GET", "/order", seller, { orderId: ask.body.orderId })
    expect(order.body).toMatchObject({ status: "PARTIALLY_FILLED", executedQty: "1.50000000", isWorking: true })
    const trades = await call("GET", "/myTrades", buyer, { symbol })
    expect(trades.body).toHaveLength(1)
    expect(trades.body[0]).toMatchObject({ isBuyer: true, isMaker: false, price: "2.50000000", orderId: bid.body.orderId })
    expect(trades.body[0].legs).toHaveLength(2)
    const sellerTrades = await call("GET", "/myTrades", seller, {})
    expect(sellerTrades.body[0]).toMatchObject({ isBuyer: false, isMaker: true, orderId: ask.body.orderId })

    // The account: the seller's open order still holds 2.5 TST.
    const a = await account(seller)
    expect(a.authorizations[0]).toMatchObject({ asset: "TST", used: "1.5", reserved: "2.5", remaining: "46" })
    expect(a.balances[0]).toMatchObject({ asset: "TST", locked: "2.50000000" })
  })

  it("orders for a market this node runs go straight into its queue, not through a cluster message (issue 22.2)", async () => {
    const before = { ...marketPathCounts }
    const rest = await call("POST", "/order", seller, { symbol, side: "SELL", price: "9.00", quantity: "1", newClientOrderId: "direct-1" })
    expect(rest.body).toMatchObject({ status: "NEW" })
    const cancelled = await call("DELETE", "/order", seller, { symbol, origClientOrderId: "direct-1" })
    expect(cancelled.body).toMatchObject({ status: "CANCELED", origClientOrderId: "direct-1" })
    expect(marketPathCounts.direct - before.direct).toBe(2)
    expect(marketPathCounts.cluster - before.cluster).toBe(0)
  })

  it("answers a repeated client order id with the order it already made", async () => {
    const first = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.00", quantity: "2", newClientOrderId: "same-id" })
    const again = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.00", quantity: "2", newClientOrderId: "same-id" })
    expect(again.body.orderId).toBe(first.body.orderId)
    const open = await call("GET", "/openOrders", buyer, { symbol })
    expect(open.body.filter((o: any) => o.clientOrderId === "same-id")).toHaveLength(1)
  })

  it("refuses a reused client order id with other parameters: -2010 Duplicate order sent. (issue 27.9)", async () => {
    const first = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.00", quantity: "1", newClientOrderId: "reused-id" })
    expect(first.status).toBe(200)
    for (const other of [{ price: "1.01", quantity: "1" }, { price: "1.00", quantity: "2" }]) {
      const r = await call("POST", "/order", buyer, { symbol, side: "BUY", ...other, newClientOrderId: "reused-id" })
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ code: -2010, msg: "Duplicate order sent." })
    }
    const open = await call("GET", "/openOrders", buyer, { symbol })
    expect(open.body.filter((o: any) => o.clientOrderId === "reused-id")).toHaveLength(1)
  })

  it("honours Binance's cancelRestrictions", async () => {
    const o = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.05", quantity: "1", newClientOrderId: "r-1", newOrderRespType: "ACK" })
    const refused = await call("DELETE", "/order", buyer, { orderId: o.body.orderId, cancelRestrictions: "ONLY_PARTIALLY_FILLED" })
    expect(refused).toEqual({ status: 400, body: { code: -2011, msg: "Order was not canceled due to cancel restrictions." } })
    expect((await call("GET", "/order", buyer, { orderId: o.body.orderId })).body.status).toBe("NEW")
    const bad = await call("DELETE", "/order", buyer, { orderId: o.body.orderId, cancelRestrictions: "ONLY_OLD" })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe(-1100)
    const canceled = await call("DELETE", "/order", buyer, { orderId: o.body.orderId, cancelRestrictions: "ONLY_NEW" })
    expect(canceled.body).toMatchObject({ status: "CANCELED", origClientOrderId: "r-1" })
  })

  it("cancels by orderId alone, by symbol and client id, and all on a symbol", async () => {
    const a = await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.10", quantity: "1", newClientOrderId: "c-1", newOrderRespType: "ACK" })
    expect(Object.keys(a.body).sort()).toEqual(["clientOrderId", "orderId", "orderListId", "symbol", "transactTime"])
    const c1 = await call("DELETE", "/order", buyer, { orderId: a.body.orderId })
    expect(c1.body).toMatchObject({ status: "CANCELED", origClientOrderId: "c-1" })
    await call("POST", "/order", buyer, { symbol, side: "BUY", price: "1.20", quantity: "1", newClientOrderId: "c-2" })
    const c2 = await call("DELETE", "/order", buyer, { symbol, origClientOrderId: "c-2" })
    expect(c2.body).toMatchObject({ status: "CANCELED" })
    const all = await call("DELETE", "/openOrders", buyer, { symbol })
    expect(all.status).toBe(200)
    expect((await call("GET", "/openOrders", buyer, {})).body).toEqual([])
    const history = await call("GET", "/allOrders", buyer, { symbol, limit: 2 })
    expect(history.body).toHaveLength(2)
    expect(Number(history.body[0].orderId)).toBeLessThan(Number(history.body[1].orderId))
  })

  it("refuses bad input with the documented codes and changes nothing", async () => {
    const before = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM orders`)
    const cases: Array<[Record<string, string>, Key, number, RegExp]> = [
      [{ symbol: "NOPE_DUSD", side: "BUY", price: "1", quantity: "1" }, buyer, -1121, /Invalid symbol/],
      [{ symbol, side: "BUY", price: "1.001", quantity: "1" }, buyer, -2010, /Filter failure: PRICE_FILTER/],
      [{ symbol, side: "BUY", price: "1", quantity: "0.0001" }, buyer, -2010, /Filter failure: LOT_SIZE/],
      [{ symbol, side: "BUY", price: "0.01", quantity: "1" }, buyer, -2010, /Filter failure: NOTIONAL/],
      [{ symbol, side: "BUY", price: "-1", quantity: "1" }, buyer, -1100, /price/],
      [{ symbol, side: "BUY", price: "abc", quantity: "1" }, buyer, -1100, /price/],
      [{ symbol, side: "BUY", price: "1" }, buyer, -1102, /quantity/],
      [{ symbol, side: "BUY", price: "100", quantity: "11" }, buyer, -2010, /remaining cap of the DUSD authorization/],
      [{ symbol, side: "SELL", price: "1", quantity: "45" }, seller, -2010, /funded balance of the TST delegated address/],
      [{ symbol, side: "BUY", price: "1", quantity: "1" }, seller, -2010, /No live authorization for DUSD/]
    ]
    for (const [params, key, code, msg] of cases) {
      const r = await call("POST", "/order", key, params)
      expect(r.status, JSON.stringify(params)).toBe(400)
      expect(r.body.code, JSON.stringify(params)).toBe(code)
      expect(r.body.msg).toMatch(msg)
    }
    const readOnly = await call("POST", "/order", reader, { symbol, side: "BUY", price: "1", quantity: "1" })
    expect(readOnly.status).toBe(401)
    expect(readOnly.body.code).toBe(-2015)
    const after = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM orders`)
    expect(after).toEqual(before)
  })

  it("does not let one key read or cancel another key's orders", async () => {
    const mine = await call("POST", "/order", seller, { symbol, side: "SELL", price: "9", quantity: "1", newClientOrderId: `p-${randomUUID().slice(0, 8)}` })
    const peek = await call("GET", "/order", buyer, { orderId: mine.body.orderId })
    expect(peek.body.code).toBe(-2013)
    const cancel = await call("DELETE", "/order", buyer, { orderId: mine.body.orderId })
    expect(cancel.body.code).toBe(-2011)
    expect((await call("GET", "/order", seller, { orderId: mine.body.orderId })).body.status).toBe("NEW")
    expect((await call("GET", "/order", seller, { orderId: "999999999999" })).body.code).toBe(-2013)
  })

  it("rebuilds the book from the database after a restart", async () => {
    const open = (await call("GET", "/openOrders", seller, { symbol })).body
    expect(open.length).toBeGreaterThan(0)
    await node.stop()
    node = await startNode(db.url, { SHARDLINE_DATA_DIR: node.config.dataDir })
    expect((await call("GET", "/openOrders", seller, { symbol })).body).toEqual(open)
    // Cancelling needs the order in the rebuilt book (the entity checks the book has what it tracks).
    const canceled = await call("DELETE", "/order", seller, { orderId: open[0].orderId })
    expect(canceled.body).toMatchObject({ status: "CANCELED", orderId: open[0].orderId })
  }, 60_000)
})
