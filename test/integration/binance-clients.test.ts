// Unchanged Binance client libraries against a real node: ccxt with the README's recipe (its own
// base path, X-MBX-APIKEY, form-body POSTs) and @binance/connector (hard-coded /api/v3, query
// parameters with a JSON content type and an empty body). Each call goes through the libraries'
// own signing and error mapping, so a drift in our signature rules or error bodies fails here.
import { Spot } from "@binance/connector"
import ccxt from "ccxt"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode
let reader: { apiKey: string; secretKey: string; userId: number }
let trader: { apiKey: string; secretKey: string; userId: number }
const v1 = "/api/public/v1"
const address = "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"

beforeAll(async () => {
  db = await createTestDatabase("clients")
  node = await startNode(db.url, { SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "100000", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000" })
  reader = await createKey(db.url, { scopes: ["read"], addresses: [address] })
  trader = await createKey(db.url, { scopes: ["read", "trade"] })
})
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
    options: { fetchMarkets: { types: ["spot"] }, fetchCurrencies: false, fetchMargins: false, fetchTradesMethod: "publicGetTrades" },
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
})
