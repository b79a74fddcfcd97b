// Tracing off (no OTLP endpoint, the default) is free: the node disables the tracer beneath
// everything it runs, so a signed order, a cluster message, SQL statements and background work
// make no span at all. A tracer given beneath the node counts every span asked of it.
import { Layer, Option, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedGet, signedQuery } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { DUSD, issueProperty, listMarket, newTraders, type Trader } from "../support/tradingWorld.ts"

let db: TestDatabase
let node: RunningNode
let trader: Trader
const symbol = "OFFDUSD"
const made: Array<string> = []

/** Counts span requests; the spans it hands out record nothing. */
const counting = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => {
    made.push(name)
    return {
      _tag: "Span", name, parent, context, links, kind, sampled: true, spanId: "counted", traceId: Option.isSome(parent) ? parent.value.traceId : "counted",
      status: { _tag: "Started", startTime }, attributes: new Map(),
      end: () => {}, attribute: () => {}, event: () => {}, addLinks: () => {}
    }
  },
  context: (f) => f()
})

beforeAll(async () => {
  db = await createTestDatabase("tracingoff")
  node = await startNode(db.url, {}, Layer.setTracer(counting))
  const tok = await issueProperty(node, "Untraced token", 1_000_000n)
  await listMarket(db, symbol, { code: "OFF", propertyId: tok }, DUSD)
  ;[trader] = await newTraders(node, db, [[{ asset: { code: "OFF", propertyId: tok }, amount: 10n }]])
}, 120_000)

afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("tracing off", () => {
  it("makes no span for signed requests, cluster messages, SQL or background work", async () => {
    const placed = await fetch(`${node.baseUrl}/api/v3/order?${signedQuery(trader, { symbol, side: "SELL", type: "LIMIT", timeInForce: "GTC", price: "3.00", quantity: "1" })}`, {
      method: "POST",
      headers: { "X-MBX-APIKEY": trader.apiKey, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }
    })
    expect(placed.status).toBe(200)
    expect((await signedGet(node.baseUrl, "/api/public/v1/account", trader)).status).toBe(200)
    expect((await fetch(`${node.baseUrl}/ops`)).status).toBe(200)
    await new Promise((r) => setTimeout(r, 2500)) // a report, chain probes, timers
    expect(made).toEqual([])
  })
})
