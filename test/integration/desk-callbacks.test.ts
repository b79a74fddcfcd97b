// Outbound callbacks through a real node: a test event to a real receiver, signed so the receiver's
// check passes with the key's signing secret, every attempt in the key's log with its outcome
// (delivered, rejected, failed after the 5 s timeout), only the key's own log; and, on a node
// without SHARDLINE_CALLBACK_ALLOW_HTTP, a loopback target refused without a connection.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyCallback } from "../../src/desk/callbacks/callbackSignature.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
let strict: RunningNode
let receiver: Server
let receiverUrl: string
let mode: "ok" | "error" | "hang" = "ok"
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = []

const v1 = "/api/public/v1"
const call = async (n: RunningNode, method: string, path: string, apiKey: string) => {
  const r = await fetch(`${n.deskUrl}${v1}${path}`, { method, headers: { "x-api-key": apiKey } })
  return { status: r.status, body: (await r.json()) as any }
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      received.push({ headers: req.headers, body })
      if (mode === "hang") return // never answers
      res.writeHead(mode === "ok" ? 204 : 500).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  db = await createTestDatabase("deskcallbacks")
  node = await startNode(db.url, { SHARDLINE_CALLBACK_ALLOW_HTTP: "true" })
  strict = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await strict?.stop()
  await db?.drop()
  receiver?.closeAllConnections()
  await new Promise((r) => receiver?.close(r))
})

describe("desk callbacks", () => {
  it("posts a signed test event the receiver can verify, and logs every attempt for the key alone", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], callbackUrl: receiverUrl })
    const other = await createDeskKey(db.url, { scopes: ["wrap"] })
    const sent = await call(node, "POST", "/callbacks/test", key.apiKey)
    expect(sent).toMatchObject({ status: 200, body: { sent: true, delivery: { type: "ping", outcome: "delivered", httpStatus: 204, url: receiverUrl } } })
    const got = received.at(-1)!
    expect(got.headers["x-svc-event"]).toBe("ping")
    expect(verifyCallback(key.signingSecret, { timestamp: got.headers["x-svc-timestamp"] as string, signature: got.headers["x-svc-signature"] as string }, got.body, Math.floor(Date.now() / 1000))).toBe("ok")
    expect(verifyCallback(other.signingSecret, { timestamp: got.headers["x-svc-timestamp"] as string, signature: got.headers["x-svc-signature"] as string }, got.body, Math.floor(Date.now() / 1000))).toBe("bad-signature")
    const body = JSON.parse(got.body)
    expect(body).toMatchObject({ eventId: sent.body.delivery.eventId, type: "ping", amount: 0, order: { status: "test", payoutAmount: 0 } })
    expect(Date.parse(body.occurredAt)).toBeGreaterThan(Date.now() - 60_000)

    mode = "error"
    expect((await call(node, "POST", "/callbacks/test", key.apiKey)).body.delivery).toMatchObject({ outcome: "rejected", httpStatus: 500 })
    mode = "hang"
    const hung = await call(node, "POST", "/callbacks/test", key.apiKey)
    expect(hung.body.delivery).toMatchObject({ outcome: "failed", httpStatus: null })
    expect(hung.body.delivery.durationMs).toBeGreaterThanOrEqual(4_900)
    mode = "ok"

    const log = await call(node, "GET", "/callbacks", key.apiKey)
    expect(log.body.deliveries.map((d: any) => d.outcome)).toEqual(["failed", "rejected", "delivered"])
    expect((await call(node, "GET", "/callbacks", other.apiKey)).body).toEqual({ deliveries: [] })
    // A key without a callback URL sends nothing.
    expect((await call(node, "POST", "/callbacks/test", other.apiKey)).body).toEqual({ sent: false })
    expect((await call(node, "GET", "/callbacks", "x".repeat(64))).status).toBe(401)
  }, 60_000)

  it("refuses a loopback target without SHARDLINE_CALLBACK_ALLOW_HTTP, without connecting", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], callbackUrl: receiverUrl.replace("http:", "https:") })
    const before = received.length
    const sent = await call(strict, "POST", "/callbacks/test", key.apiKey)
    expect(sent.body).toMatchObject({ sent: true, delivery: { outcome: "refused_target", httpStatus: null } })
    expect(sent.body.delivery.error).toMatch(/not a public address/)
    expect(received.length).toBe(before)
  })
})
