// Unchanged Binance client libraries against a real node: ccxt with the README's recipe (its own
// base path, X-MBX-APIKEY, form-body POSTs), @binance/connector (hard-coded /api/v3, query
// parameters with a JSON content type and an empty body) and tiagosiebler's `binance` MainClient
// (hard-coded api/v3, everything in the query). Each call goes through the libraries' own signing,
// parsing and error mapping, so a drift in our signature rules, shapes or codes fails here.
// Each library also trades on a market of the node's ledger devnet: a LIMIT order placed, fetched,
// listed and cancelled, an order that crosses a resting ask and settles in two legs, the trade
// read back with its legs, and the balances of the authorized asset.
import { Spot } from "@binance/connector"
import { MainClient } from "binance"
import ccxt from "ccxt"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { DUSD, issueProperty, listMarket, newTraders, type Trader } from "../support/tradingWorld.ts"

/**
 * Reads until `ok` or 30 s. A free balance counts a leg as pending until its Settlement records it
 * in a block (the node's Omni view may see the block first), so right after a trade it can be
 * briefly lower; it converges within about a block.
 */
const settled = async <A>(read: () => Promise<A>, ok: (a: A) => boolean): Promise<A> => {
  const end = Date.now() + 30_000
  let a = await read()
  while (!ok(a) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 500))
    a = await read()
  }
  return a
}

let db: TestDatabase
let node: RunningNode
let reader: { apiKey: string; secretKey: string; userId: number }
let trader: { apiKey: string; secretKey: string; userId: number }
const v1 = "/api/public/v1"
const address = "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"

// The trading world: one market, a maker that rests the asks the clients' orders cross, and one
// trader per library with a funded 100 DUSD authorization (so each library's reads see only its own).
const symbol = "TSTDUSD"
let maker: Trader
let ccxtTrader: Trader
let connectorTrader: Trader
let tiagoTrader: Trader

beforeAll(async () => {
  db = await createTestDatabase("clients")
  node = await startNode(db.url, { SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "100000", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000" })
  reader = await createKey(db.url, { scopes: ["read"], addresses: [address] })
  trader = await createKey(db.url, { scopes: ["read", "trade"] })
  const tst = { code: "TST", propertyId: await issueProperty(node, "Clients test token", 1_000_000n) }
  await listMarket(db, symbol, tst, DUSD)
  const dusd100 = [{ asset: DUSD, amount: 100n }]
  ;[maker, ccxtTrader, connectorTrader, tiagoTrader] = await newTraders(node, db, [[{ asset: tst, amount: 20n }], dusd100, dusd100, dusd100]) as [Trader, Trader, Trader, Trader]
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

/** The README's ccxt recipe, verbatim apart from the base URL. */
const ccxtClient = (key: { apiKey: string; secretKey: string }) =>
  new ccxt.binance({
    apiKey: key.apiKey,
    secret: key.secretKey,
    urls: { api: { public: `${node.baseUrl}${v1}`, private: `${node.baseUrl}${v1}` } },
    options: { fetchMarkets: { types: ["spot"] }, fetchCurrencies: false, fetchMargins: false },
    rateLimit: 250
  })

const rejection = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error("expected the call to fail")
}

/** The maker rests an ask (through our own signed client) for a library's order to cross. */
const makerAsks = async (price: string, quantity: string) => {
  const res = await fetch(`${node.baseUrl}${v1}/order?${signedQuery(maker, { symbol, side: "SELL", price, quantity })}`, {
    method: "POST",
    headers: { "X-MBX-APIKEY": maker.apiKey }
  })
  const body = (await res.json()) as { status: string; orderId: string }
  expect(body.status).toBe("NEW")
  return body.orderId
}

/**
 * The two settlement legs of `buyer` taking 2 TST at 2.50 from the maker: base from the maker's
 * TST delegated address to the buyer's own, quote from the buyer's DUSD delegated address to the
 * maker's own. (txids are filled in once legs are signed; here only their type is fixed.)
 */
const expectLegsOf2At250 = (legs: unknown, buyer: Trader) =>
  expect(legs).toEqual([
    { asset: "TST", amount: "2.00000000", from: maker.delegated.TST, to: buyer.address, txid: expect.any(String), confirmations: expect.any(Number), status: expect.any(String) },
    { asset: "DUSD", amount: "5.00000000", from: buyer.delegated.DUSD, to: maker.address, txid: expect.any(String), confirmations: expect.any(Number), status: expect.any(String) }
  ])

describe("ccxt (unchanged library, README recipe)", () => {
  it("reads the server time", async () => {
    const t = await ccxtClient(reader).fetchTime()
    expect(typeof t).toBe("number")
    expect(Math.abs(t! - Date.now())).toBeLessThan(2_000)
  })

  it("signs GET /account with X-MBX-APIKEY and gets the user's account", async () => {
    const account = (await ccxtClient(reader).privateGetAccount()) as Record<string, unknown>
    expect(account.uid).toBe(reader.userId)
    expect(account.accountType).toBe("SPOT")
    expect(account.balances).toEqual([])
    expect(account.addresses).toEqual([{ address, type: "p2pkh" }])
  })

  it("signs a form-body POST /order: the signature holds and the symbol check answers BadSymbol", async () => {
    const e = await rejection(ccxtClient(trader).privatePostOrder({
      symbol: "NOPE_USDT", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1", newOrderRespType: "FULL"
    }))
    expect(e).toBeInstanceOf(ccxt.BadSymbol)
    expect(e.message).toContain("-1121")
  })

  it("signs DELETE /order the same way", async () => {
    const e = await rejection(ccxtClient(trader).privateDeleteOrder({ symbol: "NOPE_USDT", orderId: 1 }))
    expect(e).toBeInstanceOf(ccxt.BadSymbol)
  })

  it("maps our refusals to its error classes: wrong secret, unknown key, read key placing an order", async () => {
    const wrongSecret = await rejection(ccxtClient({ apiKey: reader.apiKey, secretKey: "x".repeat(64) }).privateGetAccount())
    expect(wrongSecret).toBeInstanceOf(ccxt.AuthenticationError)
    expect(wrongSecret.message).toContain("-1022")
    const unknownKey = await rejection(ccxtClient({ apiKey: "A".repeat(64), secretKey: reader.secretKey }).privateGetAccount())
    expect(unknownKey).toBeInstanceOf(ccxt.AuthenticationError)
    expect(unknownKey.message).toContain("-2015")
    const readOnly = await rejection(ccxtClient(reader).privatePostOrder({
      symbol: "NOPE_USDT", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1"
    }))
    expect(readOnly).toBeInstanceOf(ccxt.AuthenticationError)
    expect(readOnly.message).toContain("-2015")
  })

  it("trades TST/DUSD: createOrder, fetchOrder, fetchOpenOrders, fetchBalance, cancelOrder, fetchOrders, fetchMyTrades with legs", async () => {
    const ex = ccxtClient(ccxtTrader)
    const markets = await ex.loadMarkets()
    expect(markets["TST/DUSD"]).toMatchObject({
      id: symbol, base: "TST", quote: "DUSD", spot: true, active: true,
      precision: { price: 0.01, amount: 0.001 },
      limits: { price: { min: 0.01, max: 100000 }, amount: { min: 0.001, max: 100000 }, cost: { min: 1 } }
    })

    // A resting bid: ccxt sends its own x-… client id, newOrderRespType FULL and timeInForce GTC.
    const bid = await ex.createOrder("TST/DUSD", "limit", "buy", 2, 1)
    expect(bid).toMatchObject({ symbol: "TST/DUSD", type: "limit", side: "buy", timeInForce: "GTC", price: 1, amount: 2, filled: 0, remaining: 2, status: "open" })
    expect(bid.clientOrderId).toMatch(/^x-TKT5PX2F/)
    expect(bid.id).toMatch(/^[0-9]+$/)
    expect(await ex.fetchOrder(bid.id!, "TST/DUSD")).toMatchObject({ id: bid.id, clientOrderId: bid.clientOrderId, status: "open", price: 1, amount: 2, filled: 0 })
    expect((await ex.fetchOpenOrders("TST/DUSD")).map((o) => [o.id, o.status])).toEqual([[bid.id, "open"]])

    // The bid holds 2 DUSD of the 100 authorized and funded: used (Binance's locked) 2, free 98.
    const held = await ex.fetchBalance()
    expect(held["DUSD"]).toEqual({ free: 98, used: 2, total: 100 })

    expect(await ex.cancelOrder(bid.id!, "TST/DUSD")).toMatchObject({ id: bid.id, status: "canceled", filled: 0 })
    expect(await ex.fetchOpenOrders("TST/DUSD")).toEqual([])

    // Crossing the maker's ask fills at the maker's price, inline, with both legs in the answer.
    await makerAsks("2.50", "2")
    const take = await ex.createOrder("TST/DUSD", "limit", "buy", 2, 2.6)
    expect(take).toMatchObject({ status: "closed", price: 2.6, amount: 2, filled: 2, remaining: 0, cost: 5, average: 2.5 })
    expect(take.trades).toHaveLength(1)
    expectLegsOf2At250((take.info as { fills: Array<{ legs: unknown }> }).fills[0]!.legs, ccxtTrader)

    const orders = await ex.fetchOrders("TST/DUSD")
    expect(orders.map((o) => [o.id, o.status, o.filled])).toEqual([[bid.id, "canceled", 0], [take.id, "closed", 2]])

    const trades = await ex.fetchMyTrades("TST/DUSD")
    expect(trades).toHaveLength(1)
    expect(trades[0]).toMatchObject({ symbol: "TST/DUSD", order: take.id, side: "buy", takerOrMaker: "taker", price: 2.5, amount: 2, cost: 5 })
    expectLegsOf2At250((trades[0]!.info as { legs: unknown }).legs, ccxtTrader)

    // Spent 5 of the cap; nothing held any more.
    const after = await settled(() => ex.fetchBalance(), (b) => (b["DUSD"] as { free?: number } | undefined)?.free === 95)
    expect(after["DUSD"]).toEqual({ free: 95, used: 0, total: 95 })
  })

  it("reads market data as ccxt does by default: fetchOrderBook, fetchTicker, fetchTrades (aggTrades), fetchOHLCV (klines)", async () => {
    const ex = ccxtClient(reader)
    await ex.loadMarkets()
    await makerAsks("3.00", "1")
    const book = await settled(() => ex.fetchOrderBook("TST/DUSD", 5), (b) => b.asks.length > 0)
    expect(book.asks[0]).toEqual([3, 1])
    expect(book.nonce).toBeGreaterThan(0)
    const ticker = await ex.fetchTicker("TST/DUSD")
    expect(ticker).toMatchObject({ symbol: "TST/DUSD", last: 2.5, open: 2.5, high: 2.5, low: 2.5, baseVolume: 2, quoteVolume: 5, ask: 3, askVolume: 1 })
    const trades = await ex.fetchTrades("TST/DUSD")
    expect(trades.map((t) => [t.price, t.amount, t.side])).toEqual([[2.5, 2, "buy"]])
    const candles = await ex.fetchOHLCV("TST/DUSD", "1m", undefined, 3)
    // The trade's candle, or flat candles at its close after it when the minute has turned.
    expect(candles.length).toBeGreaterThan(0)
    expect(candles.at(-1)![4]).toBe(2.5)
    expect(candles.reduce((v, c) => v + (c[5] ?? 0), 0)).toBeLessThanOrEqual(2)
  })
})

describe("@binance/connector (unchanged library, hard-coded /api/v3)", () => {
  const spot = (key: { apiKey: string; secretKey: string }) => new Spot(key.apiKey, key.secretKey, { baseURL: node.baseUrl })
  const errorBody = async (p: Promise<unknown>) => {
    const e = (await rejection(p)) as Error & { response?: { status: number; data: { code: number; msg: string } } }
    expect(e.response).toBeDefined()
    return { status: e.response!.status, ...e.response!.data }
  }

  it("reads the time and the signed account through /api/v3", async () => {
    const time = await spot(reader).time()
    expect(Math.abs((time.data as { serverTime: number }).serverTime - Date.now())).toBeLessThan(2_000)
    const account = await spot(reader).account()
    expect((account.data as { uid: number }).uid).toBe(reader.userId)
  })

  it("signs a POST whose parameters are all in the query with a JSON content type and an empty body", async () => {
    const body = await errorBody(spot(trader).newOrder("NOPE_USDT", "BUY", "LIMIT", { price: "1", quantity: 1, timeInForce: "GTC" }))
    expect(body).toEqual({ status: 400, code: -1121, msg: "Invalid symbol." })
  })

  it("gets Binance's error body for a bad signature", async () => {
    const body = await errorBody(spot({ apiKey: reader.apiKey, secretKey: "y".repeat(64) }).account())
    expect(body.code).toBe(-1022)
    expect(body.status).toBe(400)
  })

  it("trades TSTDUSD: newOrder, getOrder, openOrders, cancelOrder, cancelOpenOrders, allOrders, myTrades with legs, account", async () => {
    const s = spot(connectorTrader)
    type O = { orderId: string; clientOrderId: string; status: string; price: string; origQty: string; executedQty: string; fills?: Array<{ legs: unknown }> }
    const first = (await s.newOrder(symbol, "BUY", "LIMIT", { price: "1.00", quantity: 2, timeInForce: "GTC", newClientOrderId: "conn-bid-1" })).data as O
    expect(first).toMatchObject({ symbol, clientOrderId: "conn-bid-1", status: "NEW", price: "1.00000000", origQty: "2.00000000", executedQty: "0.00000000", fills: [] })
    const second = (await s.newOrder(symbol, "BUY", "LIMIT", { price: "1.10", quantity: 1, timeInForce: "GTC", newOrderRespType: "ACK", selfTradePreventionMode: "EXPIRE_MAKER" })).data as O
    expect(Object.keys(second).sort()).toEqual(["clientOrderId", "orderId", "orderListId", "symbol", "transactTime"])
    // A self-trade prevention mode the engine does not have is refused, not silently replaced.
    expect(await errorBody(s.newOrder(symbol, "BUY", "LIMIT", { price: "1.20", quantity: 1, timeInForce: "GTC", selfTradePreventionMode: "EXPIRE_TAKER" }))).toEqual({
      status: 400, code: -1100, msg: "Illegal characters found in parameter 'selfTradePreventionMode'; legal range is 'EXPIRE_MAKER'."
    })

    expect((await s.getOrder(symbol, { orderId: first.orderId })).data).toMatchObject({ orderId: first.orderId, status: "NEW", isWorking: true, price: "1.00000000" })
    expect((await s.getOrder(symbol, { origClientOrderId: "conn-bid-1" })).data).toMatchObject({ orderId: first.orderId })
    expect(((await s.openOrders({ symbol })).data as Array<O>).map((o) => o.orderId)).toEqual([first.orderId, second.orderId])

    const account = async () => (await s.account()).data as {
      balances: Array<{ asset: string; free: string; locked: string }>
      authorizations: Array<{ asset: string; used: string; reserved: string; remaining: string }>
    }
    expect((await account()).balances).toEqual([{ asset: "DUSD", free: "96.90000000", locked: "3.10000000" }])

    // Binance's newClientOrderId on a cancel names the cancel: it comes back as clientOrderId.
    expect((await s.cancelOrder(symbol, { orderId: first.orderId, newClientOrderId: "conn-cancel-1" })).data)
      .toMatchObject({ orderId: first.orderId, origClientOrderId: "conn-bid-1", clientOrderId: "conn-cancel-1", status: "CANCELED" })
    const all = (await s.cancelOpenOrders(symbol)).data as Array<O>
    expect(all.map((o) => [o.orderId, o.status])).toEqual([[second.orderId, "CANCELED"]])
    expect((await s.openOrders({ symbol })).data).toEqual([])

    await makerAsks("2.50", "2")
    const take = (await s.newOrder(symbol, "BUY", "LIMIT", { price: "2.60", quantity: 2, timeInForce: "GTC" })).data as O
    expect(take).toMatchObject({ status: "FILLED", executedQty: "2.00000000", cummulativeQuoteQty: "5.00000000" })
    expect(take.fills).toHaveLength(1)
    expectLegsOf2At250(take.fills![0]!.legs, connectorTrader)

    const history = (await s.allOrders(symbol)).data as Array<O>
    expect(history.map((o) => [o.orderId, o.status])).toEqual([[first.orderId, "CANCELED"], [second.orderId, "CANCELED"], [take.orderId, "FILLED"]])
    expect(((await s.allOrders(symbol, { orderId: second.orderId, limit: 1 })).data as Array<O>).map((o) => o.orderId)).toEqual([second.orderId])

    const trades = (await s.myTrades(symbol)).data as Array<Record<string, unknown>>
    expect(trades).toHaveLength(1)
    expect(trades[0]).toMatchObject({ symbol, orderId: take.orderId, price: "2.50000000", qty: "2.00000000", quoteQty: "5.00000000", isBuyer: true, isMaker: false })
    expectLegsOf2At250(trades[0]!.legs, connectorTrader)
    expect((await s.myTrades(symbol, { orderId: first.orderId })).data).toEqual([])

    const a = await settled(account, (x) => x.balances[0]?.free === "95.00000000")
    expect(a.authorizations).toMatchObject([{ asset: "DUSD", used: "5", reserved: "0", remaining: "95" }])
    expect(a.balances).toEqual([{ asset: "DUSD", free: "95.00000000", locked: "0.00000000" }])
  })
})

describe("binance by tiagosiebler (unchanged library, MainClient with baseUrl)", () => {
  const main = (key: Key) => new MainClient({ api_key: key.apiKey, api_secret: key.secretKey, baseUrl: node.baseUrl })

  it("trades TSTDUSD: submitNewOrder, getOrder, getOpenOrders, cancelOrder, getAllOrders, getAccountTradeList with legs, getAccountInformation", async () => {
    const c = main(tiagoTrader)
    // The library types orderId as a number (Binance's): ours are decimal strings of safe integers.
    type O = { orderId: string; clientOrderId: string; status: string; fills?: Array<{ legs: unknown }> }
    const bid = (await c.submitNewOrder({ symbol, side: "BUY", type: "LIMIT", timeInForce: "GTC", price: 1, quantity: 3 })) as unknown as O
    expect(bid).toMatchObject({ symbol, status: "NEW", price: "1.00000000", origQty: "3.00000000", fills: [] })
    expect(bid.clientOrderId).toMatch(/^x-U5D79M5B/)
    const orderId = Number(bid.orderId)

    expect(await c.getOrder({ symbol, orderId })).toMatchObject({ orderId: bid.orderId, clientOrderId: bid.clientOrderId, status: "NEW" })
    expect(((await c.getOpenOrders({ symbol })) as unknown as Array<O>).map((o) => o.orderId)).toEqual([bid.orderId])
    const held = await c.getAccountInformation()
    expect(held.balances).toEqual([{ asset: "DUSD", free: "97.00000000", locked: "3.00000000" }])

    expect(await c.cancelOrder({ symbol, orderId })).toMatchObject({ orderId: bid.orderId, status: "CANCELED" })
    expect(await c.getOpenOrders({ symbol })).toEqual([])
    // Its error objects carry our code and message.
    await expect(c.cancelOrder({ symbol, orderId })).rejects.toMatchObject({ code: -2011 })
    await expect(c.getOrder({ symbol, orderId: orderId + 1000 })).rejects.toMatchObject({ code: -2013, message: "Order does not exist." })
    await expect(c.submitNewOrder({ symbol, side: "BUY", type: "MARKET", quantity: 1 })).rejects.toMatchObject({
      code: -1100, message: "Illegal characters found in parameter 'type'; legal range is 'LIMIT'."
    })

    await makerAsks("2.50", "2")
    const take = (await c.submitNewOrder({ symbol, side: "BUY", type: "LIMIT", timeInForce: "GTC", price: 2.6, quantity: 2, newOrderRespType: "FULL" })) as unknown as O
    expect(take).toMatchObject({ status: "FILLED", executedQty: "2.00000000", cummulativeQuoteQty: "5.00000000" })
    expectLegsOf2At250(take.fills![0]!.legs, tiagoTrader)

    const history = (await c.getAllOrders({ symbol })) as unknown as Array<O>
    expect(history.map((o) => [o.orderId, o.status])).toEqual([[bid.orderId, "CANCELED"], [take.orderId, "FILLED"]])

    const trades = (await c.getAccountTradeList({ symbol })) as unknown as Array<Record<string, unknown>>
    expect(trades).toHaveLength(1)
    expect(trades[0]).toMatchObject({ symbol, orderId: take.orderId, price: "2.50000000", qty: "2.00000000", isBuyer: true, isMaker: false })
    expectLegsOf2At250(trades[0]!.legs, tiagoTrader)

    const after = await settled(() => c.getAccountInformation(), (x) => x.balances[0]?.free === "95.00000000")
    expect(after.balances).toEqual([{ asset: "DUSD", free: "95.00000000", locked: "0.00000000" }])
  })
})
