// A stopping node waits for what it is answering (src/platform/http/Drain.ts). The signed lane
// (issue 22) answers before Effect; its requests were not counted in flight, so a drain under order
// load found nothing to wait for and closed the listeners under the lane's requests (a full run saw
// node-stop-under-load get no 503 "stopping" with the lane on). Here the edge runs in a real
// node:http server with a lane that answers late: the drain must count it until it is answered.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { makeDrain } from "../../../src/platform/http/Drain.ts"
import { makeFront } from "../../../src/platform/http/Edge.ts"
import { errorShapeReplies, rateLimitHeaders } from "../../../src/platform/http/errorBodyEdge.ts"
import { makeRouteTable } from "../../../src/platform/http/RouteTable.ts"
import type { ServiceEdge, SignedLane } from "../../../src/platform/http/ServiceEdge.ts"
import type { RateLimiterShape } from "../../../src/platform/RateLimiter.ts"
import { Effect } from "effect"

const usage = { used: 1, limit: 1_000, allowed: true, retryAfterSec: 60 }
const limiter: RateLimiterShape = { consume: () => usage, peek: () => usage, prune: Effect.succeed(0) }

/** A lane that takes POST /order and answers after `delayMs`, and refuses GET /order at once. */
const lateLane = (delayMs: number): SignedLane => (req, res, path, _q, state, done) => {
  if (path !== "/order") return false
  const answer = () => {
    res.writeHead(200, { "content-type": "application/json", ...state.headers })
    res.end("{}")
    done(200)
  }
  if (req.method === "GET") answer()
  else setTimeout(answer, delayMs)
  return true
}

const edgeOf = (lane: SignedLane): ServiceEdge => ({
  service: "test",
  errors: errorShapeReplies,
  rewrite: (url) => url,
  usageHeaders: rateLimitHeaders,
  ipWeightPerMin: 1_000,
  bodyBytesMax: 1_000,
  routes: makeRouteTable([]),
  fast: new Map(),
  signedLane: lane,
  cached: new Set()
})

let server: Server | undefined
afterEach(() => new Promise<void>((r) => (server === undefined ? r() : server.close(() => r()))))

const serve = async (drain: ReturnType<typeof makeDrain>) => {
  const front = makeFront({ edge: edgeOf(lateLane(300)), limiter, fastLane: true, drain, settings: { trustedProxies: undefined, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, connectionsPerIpMax: 16 } })
  server = createServer((req, res) => {
    if (!front(req, res)) {
      res.writeHead(404)
      res.end()
    }
  })
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()))
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`
}

describe("the drain and the signed lane", () => {
  it("a request the lane is answering is in flight until answered; the drain waits for it", async () => {
    const drain = makeDrain()
    const base = await serve(drain)
    const answered = fetch(`${base}/order`, { method: "POST" })
    await new Promise((r) => setTimeout(r, 100))
    expect(drain.inFlight()).toBe(1)
    drain.begin()
    expect(await drain.idle(50)).toBe(false)
    expect((await answered).status).toBe(200)
    expect(await drain.idle(1_000)).toBe(true)
    // After the drain began, a new request is the 503 "stopping", whoever would have answered it.
    const late = await fetch(`${base}/order`, { method: "POST" })
    expect(late.status).toBe(503)
    expect(late.headers.get("connection")).toBe("close")
  })

  it("a request the lane answered at once is not left counted", async () => {
    const drain = makeDrain()
    const base = await serve(drain)
    expect((await fetch(`${base}/order`)).status).toBe(200)
    expect(drain.inFlight()).toBe(0)
    expect(await drain.idle(10)).toBe(true)
  })
})
