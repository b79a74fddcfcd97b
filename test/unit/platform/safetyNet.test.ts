// The listener's safety net (src/platform/http/Listener.ts): what a request answers when its
// handler failed in a way no handler mapped. The fuzz run found an interruption (an entity call cut
// short while the runner lost its shards under load) answered 503 with an empty body and no
// content type; it is now the service's own 503 in its shape, with Retry-After.
import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, FiberId } from "effect"
import { describe, expect, it } from "vitest"
import { errorShapeReplies } from "../../../src/platform/http/errorBodyEdge.ts"
import { safetyNet } from "../../../src/platform/http/Listener.ts"
import { exchangeErrors } from "../../../src/exchange/http/ExchangeEdge.ts"
import type { ServiceEdge } from "../../../src/platform/http/ServiceEdge.ts"

const edgeWith = (errors: ServiceEdge["errors"]) => ({ service: "test", errors }) as unknown as ServiceEdge

const answer = (edge: ServiceEdge, cause: Cause.Cause<unknown>) =>
  Effect.runPromise(Effect.map(safetyNet(edge)(cause), (r) => {
    const body = (r as HttpServerResponse.HttpServerResponse & { body: { body: Uint8Array | string } }).body
    const text = typeof body.body === "string" ? body.body : Buffer.from(body.body).toString()
    return { status: r.status, headers: r.headers, text }
  }))

describe("the listener's safety net", () => {
  it("an interruption while the client waits is the service's 503 in its own shape, with Retry-After", async () => {
    const interrupted = Cause.interrupt(FiberId.make(1, 0))
    const desk = await answer(edgeWith(errorShapeReplies), interrupted)
    expect(desk.status).toBe(503)
    expect(JSON.parse(desk.text)).toEqual({ error: { code: "internal", message: expect.any(String) } })
    expect(desk.headers["retry-after"]).toBe("1")
    const exchange = await answer(edgeWith(exchangeErrors), interrupted)
    expect(exchange.status).toBe(503)
    expect(JSON.parse(exchange.text)).toEqual({ code: -1001, msg: expect.any(String) })
  })

  it("a defect is the same 503 in shape; nothing of it shows", async () => {
    const r = await answer(edgeWith(errorShapeReplies), Cause.die(new Error("secret internals at /src/x.ts:12")))
    expect(r.status).toBe(503)
    expect(r.text).not.toContain("secret")
  })
})
