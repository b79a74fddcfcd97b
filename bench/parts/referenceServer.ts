// The least-work reference of `npm run bench -- orders` (issue 22): what a durable exchange must at
// least do per order on this machine, run in its own process against the same Postgres with the
// same client as the node. node:http; the same Binance HMAC check (query without `signature`,
// timestamp and recvWindow); an in-memory price-level book per market; group commit: every order,
// cancel and trade decided while the previous commit was in flight goes to Postgres in ONE
// statement (a data-modifying CTE, one round trip, one transaction), and each answer is written
// only after that COMMIT. No Effect, no cluster, no chain, no settlement.
//
// Started with fork(); configuration in BENCH_REF_CONFIG (JSON: databaseUrl, keys [{apiKey,
// secretKey}], markets [{symbol, makers: [{side, price, quantity}]}]). It answers on 127.0.0.1 at a
// free port and sends { ready: port }. Ops over IPC like bench/parts/orderNode.ts: loop {reset}
// (event loop utilization and 5 ms timer delay since the last reset), counts (orders, trades,
// cancels, commits so far).
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeLoopMeter } from "./loopMeter.ts"
import pg from "pg"

interface RefConfig {
  readonly databaseUrl: string
  readonly keys: ReadonlyArray<{ readonly apiKey: string; readonly secretKey: string }>
  readonly markets: ReadonlyArray<{ readonly symbol: string; readonly makers: ReadonlyArray<{ readonly side: Side; readonly price: string; readonly quantity: string }> }>
}
type Side = "BUY" | "SELL"

const config = JSON.parse(process.env.BENCH_REF_CONFIG ?? "{}") as RefConfig
const secrets = new Map(config.keys.map((k) => [k.apiKey, Buffer.from(k.secretKey)]))
const prefix = "/api/public/v1"
const recvWindowMs = 5000

// --- the book: price levels in order, FIFO per level, cancel by id ---

interface Order {
  readonly id: number
  readonly symbol: string
  readonly apiKey: string
  readonly side: Side
  readonly price: number
  readonly qty: number
  remaining: number
}

class Side1 {
  /** Prices with resting orders, best first. */
  readonly prices: Array<number> = []
  readonly levels = new Map<number, Array<Order>>()
  constructor(readonly better: (a: number, b: number) => boolean) {}
  add(o: Order) {
    let level = this.levels.get(o.price)
    if (level === undefined) {
      level = []
      this.levels.set(o.price, level)
      let lo = 0
      let hi = this.prices.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (this.better(this.prices[mid]!, o.price)) lo = mid + 1
        else hi = mid
      }
      this.prices.splice(lo, 0, o.price)
    }
    level.push(o)
  }
  remove(o: Order) {
    const level = this.levels.get(o.price)
    if (level === undefined) return
    const i = level.indexOf(o)
    if (i >= 0) level.splice(i, 1)
    if (level.length === 0) {
      this.levels.delete(o.price)
      this.prices.splice(this.prices.indexOf(o.price), 1)
    }
  }
}

interface Book {
  readonly bids: Side1
  readonly asks: Side1
}
const books = new Map<string, Book>(config.markets.map((m) => [m.symbol, { bids: new Side1((a, b) => a > b), asks: new Side1((a, b) => a < b) }]))
const orders = new Map<number, Order>()
let nextOrderId = 1
let nextTradeId = 1

interface Trade {
  readonly id: number
  readonly maker: Order
  readonly taker: Order
  readonly price: number
  readonly qty: number
}

/** Matches `o` against the other side, then rests what is left. Integers in hundredths. */
const place = (o: Order, trades: Array<Trade>) => {
  const book = books.get(o.symbol)!
  const other = o.side === "BUY" ? book.asks : book.bids
  const crosses = (p: number) => (o.side === "BUY" ? p <= o.price : p >= o.price)
  while (o.remaining > 0 && other.prices.length > 0 && crosses(other.prices[0]!)) {
    const level = other.levels.get(other.prices[0]!)!
    const maker = level[0]!
    const qty = Math.min(maker.remaining, o.remaining)
    maker.remaining -= qty
    o.remaining -= qty
    trades.push({ id: nextTradeId++, maker, taker: o, price: maker.price, qty })
    if (maker.remaining === 0) {
      other.remove(maker)
      orders.delete(maker.id)
    }
  }
  if (o.remaining > 0) {
    ;(o.side === "BUY" ? book.bids : book.asks).add(o)
    orders.set(o.id, o)
  }
}

// --- group commit ---

const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 1, application_name: "bench:reference" })

interface Pending {
  readonly newOrders: Array<Order>
  readonly trades: Array<Trade>
  readonly cancels: Array<Order>
  readonly answers: Array<() => void>
}
const emptyPending = (): Pending => ({ newOrders: [], trades: [], cancels: [], answers: [] })
let pending = emptyPending()
let committing = false
const counts = { orders: 0, trades: 0, cancels: 0, commits: 0, rowsPerCommit: 0 }

// One statement, so one round trip and one transaction: new orders (with what they filled), trades,
// cancels, and the makers' remaining quantity.
const commitSql = `WITH o AS (
    INSERT INTO ref_orders (id, symbol, api_key, side, price, qty, remaining)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])),
  t AS (
    INSERT INTO ref_trades (id, maker_id, taker_id, price, qty)
    SELECT * FROM unnest($8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])),
  m AS (
    UPDATE ref_orders r SET remaining = r.remaining - f.qty
    FROM (SELECT maker_id, sum(qty) AS qty FROM unnest($9::bigint[], $12::bigint[]) AS x(maker_id, qty) GROUP BY maker_id) f
    WHERE r.id = f.maker_id)
  UPDATE ref_orders SET cancelled = true WHERE id = ANY($13::bigint[])`

const flush = () => {
  if (committing || pending.answers.length === 0) return
  committing = true
  const batch = pending
  pending = emptyPending()
  const o = batch.newOrders
  const t = batch.trades
  pool.query(commitSql, [
    o.map((x) => x.id), o.map((x) => x.symbol), o.map((x) => x.apiKey), o.map((x) => x.side), o.map((x) => x.price), o.map((x) => x.qty), o.map((x) => x.remaining),
    t.map((x) => x.id), t.map((x) => x.maker.id), t.map((x) => x.taker.id), t.map((x) => x.price), t.map((x) => x.qty),
    batch.cancels.map((x) => x.id)
  ]).then(() => {
    counts.commits++
    counts.orders += o.length
    counts.trades += t.length
    counts.cancels += batch.cancels.length
    for (const answer of batch.answers) answer()
  }, (e: unknown) => {
    console.error("reference commit failed", e)
    process.exit(1)
  }).finally(() => {
    committing = false
    flush()
  })
}

// --- HTTP ---

const send = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}
const refuse = (res: ServerResponse, status: number, code: number, msg: string) => send(res, status, JSON.stringify({ code, msg }))
const decimal = (s: string | null) => (s === null || !/^\d+(\.\d{1,2})?$/.test(s) ? NaN : Math.round(Number(s) * 100))
const text = (n: number) => (n / 100).toFixed(8)

const verified = (req: IncomingMessage, res: ServerResponse, query: string): URLSearchParams | undefined => {
  const apiKey = req.headers["x-mbx-apikey"]
  const secret = typeof apiKey === "string" ? secrets.get(apiKey) : undefined
  if (secret === undefined) return void refuse(res, 401, -2015, "Invalid API-key, IP, or permissions for action.")
  const at = query.lastIndexOf("&signature=")
  if (at < 0) return void refuse(res, 400, -1102, "Mandatory parameter 'signature' was not sent, was empty/null, or malformed.")
  const payload = query.slice(0, at)
  const given = Buffer.from(query.slice(at + "&signature=".length), "hex")
  const expected = createHmac("sha256", secret).update(payload).digest()
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return void refuse(res, 400, -1022, "Signature for this request is not valid.")
  const params = new URLSearchParams(payload)
  const ts = Number(params.get("timestamp"))
  const now = Date.now()
  if (!Number.isInteger(ts) || ts >= now + 1000 || now - ts > recvWindowMs) return void refuse(res, 400, -1021, "Timestamp for this request is outside of the recvWindow.")
  return params
}

const orderBody = (o: Order, fills: ReadonlyArray<Trade>) => JSON.stringify({
  symbol: o.symbol, orderId: String(o.id), clientOrderId: `ref${o.id}`, transactTime: Date.now(), price: text(o.price), origQty: text(o.qty),
  executedQty: text(o.qty - o.remaining), status: o.remaining === 0 ? "FILLED" : o.remaining < o.qty ? "PARTIALLY_FILLED" : "NEW",
  timeInForce: "GTC", type: "LIMIT", side: o.side, fills: fills.map((f) => ({ price: text(f.price), qty: text(f.qty), tradeId: f.id }))
})

const newOrder = (apiKey: string, params: URLSearchParams, res: ServerResponse) => {
  const symbol = params.get("symbol") ?? ""
  const side = params.get("side")
  const price = decimal(params.get("price"))
  const qty = decimal(params.get("quantity"))
  if (!books.has(symbol)) return refuse(res, 400, -1121, "Invalid symbol.")
  if ((side !== "BUY" && side !== "SELL") || !(price > 0) || !(qty > 0)) return refuse(res, 400, -1102, "A mandatory parameter was not sent, was empty/null, or malformed.")
  const o: Order = { id: nextOrderId++, symbol, apiKey, side, price, qty, remaining: qty }
  const fills: Array<Trade> = []
  place(o, fills)
  pending.newOrders.push(o)
  pending.trades.push(...fills)
  pending.answers.push(() => send(res, 200, orderBody(o, fills)))
  flush()
}

const cancel = (apiKey: string, params: URLSearchParams, res: ServerResponse) => {
  const o = orders.get(Number(params.get("orderId")))
  if (o === undefined || o.apiKey !== apiKey || o.symbol !== params.get("symbol")) return refuse(res, 400, -2011, "Unknown order sent.")
  const book = books.get(o.symbol)!
  ;(o.side === "BUY" ? book.bids : book.asks).remove(o)
  orders.delete(o.id)
  pending.cancels.push(o)
  pending.answers.push(() => send(res, 200, JSON.stringify({ ...JSON.parse(orderBody(o, [])), status: "CANCELED" })))
  flush()
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const url = req.url ?? ""
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  // The bench sends no body; a body is read and dropped so the connection stays usable.
  req.resume()
  req.on("end", () => {
    if (path !== `${prefix}/order` || (req.method !== "POST" && req.method !== "DELETE")) return refuse(res, 404, -1020, "This operation is not supported.")
    const params = verified(req, res, q < 0 ? "" : url.slice(q + 1))
    if (params === undefined) return
    const apiKey = req.headers["x-mbx-apikey"] as string
    if (req.method === "POST") newOrder(apiKey, params, res)
    else cancel(apiKey, params, res)
  })
})

// --- the loop's figures, as orderNode.ts reports them ---

const loopFigures = makeLoopMeter()

process.on("message", (msg: { id: number; op: string; reset?: boolean }) => {
  let result: unknown
  if (msg.op === "loop") {
    result = loopFigures(msg.reset === true)
  } else if (msg.op === "counts") result = { ...counts }
  process.send?.({ id: msg.id, ok: result !== undefined, result, error: result === undefined ? `unknown op ${msg.op}` : undefined })
})

const start = async () => {
  await pool.query(`CREATE TABLE IF NOT EXISTS ref_orders (id BIGINT PRIMARY KEY, symbol TEXT NOT NULL, api_key TEXT NOT NULL, side TEXT NOT NULL,
      price BIGINT NOT NULL, qty BIGINT NOT NULL, remaining BIGINT NOT NULL, cancelled BOOLEAN NOT NULL DEFAULT false);
    CREATE TABLE IF NOT EXISTS ref_trades (id BIGINT PRIMARY KEY, maker_id BIGINT NOT NULL, taker_id BIGINT NOT NULL, price BIGINT NOT NULL, qty BIGINT NOT NULL)`)
  // The makers' resting orders at the touch, as the bench places them on the node.
  for (const m of config.markets) {
    for (const mk of m.makers) {
      const o: Order = { id: nextOrderId++, symbol: m.symbol, apiKey: "maker", side: mk.side, price: decimal(mk.price), qty: decimal(mk.quantity), remaining: decimal(mk.quantity) }
      place(o, [])
      pending.newOrders.push(o)
    }
  }
  await new Promise<void>((resolve) => {
    pending.answers.push(resolve)
    flush()
  })
  server.listen(0, "127.0.0.1", () => process.send?.({ ready: (server.address() as AddressInfo).port }))
}
start().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
