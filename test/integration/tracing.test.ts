// Traces and log lines (issue 26, points 2 and 3). A node with an OTLP endpoint exports the span
// tree of a signed order: the listener's server span, the cluster message to the Market entity,
// the entity's batch and its SQL statements, and the legs' broadcast on the ledger. With no
// endpoint (the default) the node makes no span at all. JSON log lines carry the ids of the trace
// they were logged in.
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedQuery } from "../../harness/signed.ts"
import { type CollectedSpan, type Collector, startCollector } from "../support/otlpCollector.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { DUSD, issueProperty, listMarket, newTraders, type Trader } from "../support/tradingWorld.ts"

let db: TestDatabase
let collector: Collector
let node: RunningNode
let seller: Trader
let buyer: Trader
const symbol = "TRCDUSD"
const secretA = "partner-a-secret-of-the-tracing-test"
const logLines: Array<string> = []

const traceparent = () => {
  const traceId = randomBytes(16).toString("hex")
  const parentId = randomBytes(8).toString("hex")
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` }
}

const order = (key: Trader, params: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${node.baseUrl}/api/v3/order?${signedQuery(key, { symbol, type: "LIMIT", timeInForce: "GTC", ...params })}`, {
    method: "POST",
    headers: { "X-MBX-APIKEY": key.apiKey, ...headers }
  })

/** Waits for the exporter's batch (every 5 s) to bring the spans `ready` wants. */
const spansOf = async (traceId: string, ready: (spans: ReadonlyArray<CollectedSpan>) => boolean) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const spans = collector.spans().filter((s) => s.traceId === traceId)
    if (ready(spans)) return spans
    if (Date.now() > deadline) throw new Error(`trace ${traceId} incomplete: ${spans.map((s) => s.name).join(", ")}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

beforeAll(async () => {
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    logLines.push(args.map(String).join(" "))
  })
  db = await createTestDatabase("tracing")
  collector = await startCollector()
  node = await startNode(db.url, {
    SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    SHARDLINE_LOG_FORMAT: "json",
    SHARDLINE_WEBHOOK_SECRET_PARTNER_A: secretA
  })
  const tok = await issueProperty(node, "Tracing token", 1_000_000n)
  await listMarket(db, symbol, { code: "TRC", propertyId: tok }, DUSD)
  ;[seller, buyer] = await newTraders(node, db, [[{ asset: { code: "TRC", propertyId: tok }, amount: 10n }], [{ asset: DUSD, amount: 100n }]])
}, 120_000)

afterAll(async () => {
  await node?.stop()
  await collector?.stop()
  await db?.drop()
  vi.restoreAllMocks()
})

const parentOf = (spans: ReadonlyArray<CollectedSpan>, child: CollectedSpan) => spans.find((s) => s.spanId === child.parentSpanId)
const one = (spans: ReadonlyArray<CollectedSpan>, pick: (s: CollectedSpan) => boolean, what: string) => {
  const found = spans.filter(pick)
  expect(found.length, what).toBeGreaterThan(0)
  return found[0]!
}
const isUnder = (spans: ReadonlyArray<CollectedSpan>, span: CollectedSpan, ancestor: CollectedSpan): boolean => {
  for (let p = parentOf(spans, span); p !== undefined; p = parentOf(spans, p)) if (p.spanId === ancestor.spanId) return true
  return false
}

describe("tracing on", () => {
  it("exports the span tree of a signed POST /api/v3/order: HTTP → cluster message → Market entity → SQL, and the legs' broadcast", async () => {
    expect((await order(seller, { side: "SELL", price: "2.00", quantity: "1", newClientOrderId: "trace-ask" })).status).toBe(200)
    const caller = traceparent()
    const bid = await order(buyer, { side: "BUY", price: "2.00", quantity: "1", newClientOrderId: "trace-bid" }, { traceparent: caller.header })
    expect(bid.status).toBe(200)
    const txids = ((await bid.json()) as { fills: Array<{ legs: Array<{ txid: string }> }> }).fills.flatMap((f) => f.legs.map((l) => l.txid))
    expect(txids).toHaveLength(2)
    const spans = await spansOf(caller.traceId, (s) => s.filter((x) => x.name === "chain.broadcast").length >= 2 && s.some((x) => x.name === "Market.batch"))
    expect(collector.paths().every((p) => p === "/v1/traces")).toBe(true)

    // The listener's span continues the caller's traceparent.
    const server = one(spans, (s) => s.name === "POST /api/public/v1/order", "the server span")
    expect(server.parentSpanId).toBe(caller.parentId)
    expect(server.kind).toBe(2) // server
    expect(server.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/api/public/v1/order", "http.response.status_code": 200, "shardline.service": "exchange" })
    expect(server.resource).toMatchObject({ "service.name": "shardline", "service.instance.id": "shardline:embedded" })
    // The cluster message: the client's span under the request, the entity's handler under it.
    const client = one(spans, (s) => s.name === "Market.client.Place", "the cluster client span")
    expect(client.parentSpanId).toBe(server.spanId)
    const entity = one(spans, (s) => s.name === `Market(${symbol}).Place`, "the Market entity's span")
    expect(entity.parentSpanId).toBe(client.spanId)
    expect(entity.attributes).toMatchObject({ "entity.type": "Market", "entity.id": symbol })
    // The entity's group commit and its SQL statements.
    const batch = one(spans, (s) => s.name === "Market.batch", "the batch span")
    expect(batch.parentSpanId).toBe(entity.spanId)
    const transaction = one(spans, (s) => s.name === "sql.transaction" && s.parentSpanId === batch.spanId, "the batch's transaction")
    // BEGIN goes with the batch's read and COMMIT with its write (pipelinedTransaction.ts): two round trips.
    const statements = spans.filter((s) => s.name === "sql.execute" && s.parentSpanId === transaction.spanId)
    const texts = statements.map((s) => String(s.attributes["db.statement"] ?? s.attributes["db.query.text"]))
    expect(texts).toHaveLength(2)
    expect(texts[0]).toMatch(/^BEGIN;\n/)
    expect(texts[1]).toMatch(/INSERT INTO[\s\S]*;\nCOMMIT$/)
    // The legs signed by each grant's Authorization entity (called straight on this node: its span
    // is named as the cluster's handler span) and broadcast on the ledger.
    const broadcasts = spans.filter((s) => s.name === "chain.broadcast")
    for (const b of broadcasts) {
      expect(isUnder(spans, b, batch)).toBe(true)
      expect(parentOf(spans, b)!.name).toMatch(/^Authorization\(.+\)\.SignLegs$/)
      expect(b.attributes["chain.name"]).toBe("ledger")
    }
    // Both legs (and the fee sponsor's funding of a delegated address, when it needs coin).
    expect(broadcasts.map((b) => b.attributes["tx.id"])).toEqual(expect.arrayContaining(txids))
    // Nothing secret in any span: no API key, no signature, no query string.
    const text = JSON.stringify(spans)
    expect(text).not.toContain(buyer.apiKey)
    expect(text).not.toContain("signature")
  })

  it("logs JSON lines, with the trace and span ids of the request they were logged in", async () => {
    const caller = traceparent()
    const hook = await fetch(`${node.deskUrl}/api/public/v1/webhooks/partner-a`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secretA}`, traceparent: caller.header },
      body: JSON.stringify({ event: "note", order_id: "TX-TRACE001" })
    })
    expect(hook.status).toBe(200)
    const spans = await spansOf(caller.traceId, (s) => s.some((x) => x.name === "POST /api/public/v1/webhooks/{partner}" || x.name.startsWith("POST /api/public/v1/webhooks")))
    expect(logLines.length).toBeGreaterThan(0)
    // The test's own cluster clients (newTraders, issueProperty: storage clients in this process)
    // log in Effect's default format, e.g. "No healthy runners available" on a loaded machine; the
    // node's lines are the JSON ones.
    const nodeLines = logLines.filter((line) => line.startsWith("{"))
    expect(nodeLines.length).toBeGreaterThan(0)
    const records = nodeLines.map((line) => JSON.parse(line) as { message: unknown; logLevel: string; timestamp: string; traceId?: string; spanId?: string })
    for (const r of records) expect(r).toMatchObject({ logLevel: expect.any(String), timestamp: expect.any(String) })
    const line = records.find((r) => String(r.message).startsWith("partner webhook: partner-a"))
    expect(line).toMatchObject({ logLevel: "WARN", traceId: caller.traceId })
    expect(spans.map((s) => s.spanId)).toContain(line!.spanId)
    // Lines logged outside any recorded trace (activations, the node's start) carry no ids.
    expect(records.some((r) => r.traceId === undefined)).toBe(true)
  })
})
