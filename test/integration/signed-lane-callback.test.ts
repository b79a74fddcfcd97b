// The signed lane's callback path (SignedLane.ts, `orderActions.direct`): POST and DELETE /order
// for a market active on the node go onto its queue with a plain callback, no fiber per request,
// and must answer byte for byte as the HttpApi path does. Two nodes (each on its own database),
// one with the lanes on and one with them off, get the same calls from traders made alike; the
// status, the headers the lane sets and the raw body text must match, less the clock's fields and
// a fill's addresses and txids (each node has its own keys). The counters show which path answered
// on the lane node: every call the callback path, and, when the market fails under a batch, the
// two calls it had queued continue on a fiber (the failed one "status unknown", the one behind it
// through the cluster to the rebuilt market), still answering as the HttpApi path does.
import { request } from "node:http"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { marketPathCounts } from "../../src/exchange/http/OrderHandlers.ts"
import { signedLaneCounts } from "../../src/exchange/http/SignedLane.ts"
import { signerPathCounts } from "../../src/exchange/authorization/LocalAuthorizations.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"
import { cli, cliJson } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { within } from "../support/pg.ts"

interface Side {
  readonly db: TestDatabase
  readonly node: RunningNode
  /** Its calls come from its own loopback address: each node's IP budget sees the same calls. */
  readonly from: string
}
let lane: Side
let httpApi: Side

beforeAll(async () => {
  const [laneDb, apiDb] = await Promise.all([createTestDatabase("lanecb_lane"), createTestDatabase("lanecb_api")])
  const vars = { SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000" }
  lane = { db: laneDb, node: await startNode(laneDb.url, { ...vars, SHARDLINE_HTTP_FAST_LANE: "true", SHARDLINE_HTTP_SIGNED_LANE: "true" }), from: "127.0.0.2" }
  httpApi = { db: apiDb, node: await startNode(apiDb.url, { ...vars, SHARDLINE_HTTP_FAST_LANE: "false" }), from: "127.0.0.3" }
}, 180_000)
afterAll(async () => {
  for (const side of [lane, httpApi]) {
    await side?.node.stop()
    await side?.db.drop()
  }
})

interface Reply {
  readonly status: number
  /** The headers the lane writes itself, and the used weight. */
  readonly headers: Record<string, string | undefined>
  readonly text: string
}

const send = (side: Side, method: string, key: Key, params: Record<string, string>) =>
  new Promise<Reply>((resolve, reject) => {
    const url = new URL(side.node.baseUrl)
    const path = `/api/v3/order?${signedQuery(key, params)}`
    const req = request({ host: url.hostname, port: url.port, method, path, agent: false, localAddress: side.from, headers: { "x-mbx-apikey": key.apiKey } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const h = res.headers
        resolve({
          status: res.statusCode ?? 0,
          headers: { "content-type": h["content-type"], "content-length": h["content-length"] as string | undefined, "x-mbx-used-weight-1m": h["x-mbx-used-weight-1m"] as string | undefined },
          text: Buffer.concat(chunks).toString()
        })
      })
      res.on("error", reject)
    })
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} /order: no answer in 30 s`)))
    req.on("error", reject)
    req.end()
  })

/**
 * Masked in the raw text: the clock's fields, a generated client id (a cancel's, when the call
 * names none: 22 characters; the tests' own are shorter), and what each node's own keys and ledger
 * make (a fill's addresses and txids).
 */
const masked = (r: Reply) => ({
  ...r,
  text: r.text
    .replace(/"(updateTime|transactTime|time|workingTime)":\d+/g, "\"$1\":0")
    .replace(/"clientOrderId":"[A-Za-z0-9_-]{22}"/g, "\"clientOrderId\":\"-\"")
    .replace(/"(from|to|txid)":"[^"]*"/g, "\"$1\":\"-\"")
})

/** A demo trader of each node, funded alike, its key cached by a first call (the lane leaves an uncached key to the HttpApi path). */
const traders = (fund: string) =>
  Promise.all([lane, httpApi].map(async (side) => {
    const t = cliJson<Key>(await cli(["demo", "trader", "--fund", fund, "--json"], cliEnvOf(side.db.url, side.node)))
    const warm = await fetch(`${side.node.baseUrl}/api/v3/account?${signedQuery(t, {})}`, { headers: { "X-MBX-APIKEY": t.apiKey } })
    expect(warm.status).toBe(200)
    return t
  }))

const order = (symbol: string, side: string, price: string, id: string, more: Record<string, string> = {}) =>
  ({ symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity: "1", newClientOrderId: id, ...more })

type Step = readonly [name: string, method: "POST" | "DELETE", who: "maker" | "taker", params: (ids: Map<string, string>) => Record<string, string>]

const steps: ReadonlyArray<Step> = [
  ["place, ACK", "POST", "taker", () => order("SHRDDUSD", "BUY", "1", "a1", { newOrderRespType: "ACK" })],
  ["place, RESULT", "POST", "taker", () => order("SHRDDUSD", "BUY", "1", "r1", { newOrderRespType: "RESULT" })],
  ["place, FULL (the default)", "POST", "taker", () => order("SHRDDUSD", "BUY", "1", "f1")],
  ["the same place again: a retry, answered as the order is", "POST", "taker", () => order("SHRDDUSD", "BUY", "1", "f1")],
  ["its client id with another price: duplicate", "POST", "taker", () => order("SHRDDUSD", "BUY", "2", "f1")],
  ["bad tick: refused in the batch", "POST", "taker", () => order("SHRDDUSD", "BUY", "1.00001", "t1")],
  ["unknown symbol: refused before the market", "POST", "taker", () => order("NOPEDUSD", "BUY", "1", "n1")],
  ["cancel by client id", "DELETE", "taker", () => ({ symbol: "SHRDDUSD", origClientOrderId: "a1" })],
  ["cancel by order id, with a new client id", "DELETE", "taker", (ids) => ({ symbol: "SHRDDUSD", orderId: ids.get("r1")!, newClientOrderId: "c-r1" })],
  ["cancel it again: unknown order", "DELETE", "taker", (ids) => ({ orderId: ids.get("r1")! })],
  ["cancel only if partially filled: refused", "DELETE", "taker", () => ({ symbol: "SHRDDUSD", origClientOrderId: "f1", cancelRestrictions: "ONLY_PARTIALLY_FILLED" })],
  ["cancel, no reference: refused before the market", "DELETE", "taker", () => ({ symbol: "SHRDDUSD" })],
  ["a maker rests", "POST", "maker", () => order("SHRDDUSD", "SELL", "2", "s1")],
  ["a taker crosses it: a fill with its legs", "POST", "taker", () => order("SHRDDUSD", "BUY", "2", "x1")],
  ["cancel the filled order: refused", "DELETE", "maker", () => ({ symbol: "SHRDDUSD", origClientOrderId: "s1" })]
]

describe("the signed lane's callback path", () => {
  it("answers POST and DELETE /order as the HttpApi path does, and took every call", { timeout: 600_000 }, async () => {
    const [makers, takers] = [await traders("SHRD:50"), await traders("DUSD:100")]
    // The market wakes on its first order; from then on it is local and the callback path takes its calls.
    for (const [i, side] of [lane, httpApi].entries()) {
      expect(JSON.parse((await send(side, "POST", takers[i]!, order("SHRDDUSD", "BUY", "1", "warm"))).text).status).toBe("NEW")
    }
    const ids = [new Map<string, string>(), new Map<string, string>()]
    const bodies = new Map<string, { fills?: ReadonlyArray<unknown> }>()
    const before = { ...signedLaneCounts }
    const signersBefore = { ...signerPathCounts }
    for (const [name, method, who, params] of steps) {
      const [a, b] = await Promise.all([lane, httpApi].map((side, i) => send(side, method, (who === "maker" ? makers : takers)[i]!, params(ids[i]!))))
      expect({ name, ...masked(a!) }).toEqual({ name, ...masked(b!) })
      expect(a!.status, `${name}: ${a!.text}`).toBeLessThan(500)
      bodies.set(name, JSON.parse(a!.text))
      for (const [i, r] of [a!, b!].entries()) {
        const body = JSON.parse(r.text) as { clientOrderId?: string; orderId?: string }
        if (method === "POST" && body.orderId !== undefined) ids[i]!.set(body.clientOrderId!, body.orderId)
      }
    }
    expect(bodies.get("a taker crosses it: a fill with its legs")?.fills).toHaveLength(1)
    expect({ taken: signedLaneCounts.taken - before.taken, callback: signedLaneCounts.callback - before.callback, toFiber: signedLaneCounts.callbackToFiber - before.callbackToFiber })
      .toEqual({ taken: steps.length, callback: steps.length, toFiber: 0 })
    // The fill's two legs (the maker's grant and the taker's) were signed by their Authorization
    // entities straight, on each node, with no cluster message (LocalAuthorizations.ts).
    expect({ local: signerPathCounts.local - signersBefore.local, cluster: signerPathCounts.cluster - signersBefore.cluster }).toEqual({ local: 4, cluster: 0 })
  })

  it("a call whose market fails under it continues on a fiber, and answers as the HttpApi path does", { timeout: 180_000 }, async () => {
    // As in market-commit-failure.test.ts: a batch blocks on a lock held here and is cancelled in
    // Postgres, so that commit fails and the market leaves; the order queued behind it is told the
    // market is gone and goes to the rebuilt market through the cluster.
    const takers = await traders("DUSD:100")
    const buy = (side: Side, i: number, id: string) => send(side, "POST", takers[i]!, order("SHRDDUSD", "BUY", "1", id))
    // One node at a time: the counters are the test process's, and both nodes run in it.
    const answers = []
    for (const [i, side] of [lane, httpApi].entries()) answers.push(await (async () => {
      expect((await buy(side, i, "warm")).status).toBe(200)
      const before = { lane: { ...signedLaneCounts }, market: { ...marketPathCounts } }
      const holder = new pg.Client({ connectionString: side.db.url })
      await holder.connect()
      try {
        await holder.query("BEGIN")
        await holder.query("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        const blocked = buy(side, i, "blocked")
        let pid: number | undefined
        await within(20_000, async () => {
          pid = (await side.db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()"))[0]?.pid
          return pid !== undefined
        })
        const queued = buy(side, i, "queued")
        await within(5_000, () => marketPathCounts.direct - before.market.direct >= 2)
        await side.db.query("SELECT pg_cancel_backend($1)", [pid])
        await holder.query("COMMIT")
        const replies = [await blocked, await queued] as const
        return { replies, lane: { callback: signedLaneCounts.callback - before.lane.callback, toFiber: signedLaneCounts.callbackToFiber - before.lane.callbackToFiber }, moved: marketPathCounts.movedMidCall - before.market.movedMidCall }
      } finally {
        await holder.end()
      }
    })())
    const [onLane, onApi] = answers
    expect(onLane!.replies.map(masked)).toEqual(onApi!.replies.map(masked))
    expect(onLane!.replies[0].status).toBeGreaterThanOrEqual(500)
    expect(JSON.parse(onLane!.replies[1].text).status).toBe("NEW")
    // Both went onto the queue by the callback path, and both continued on a fiber; one through the cluster.
    expect({ lane: onLane!.lane, moved: onLane!.moved }).toEqual({ lane: { callback: 2, toFiber: 2 }, moved: 1 })
    expect({ lane: onApi!.lane, moved: onApi!.moved }).toEqual({ lane: { callback: 0, toFiber: 0 }, moved: 1 })
  })
})
