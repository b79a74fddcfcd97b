// The desk's per-scope middleware on a route that needs a scope (the real scoped routes come with
// cash-out, rewards, stables and wrap): a key without the scope is 403 insufficient_scope, one
// with it passes. Keys come from a stub DeskKeys, so only the middleware is under test.
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Forbidden, ServiceUnavailable, Unauthorized } from "../../../schemas/desk/errors.ts"
import { type DeskCaller, DeskKeyWrap, DeskMember } from "../../../schemas/desk/security.ts"
import * as DeskKeyAuth from "../../../src/desk/auth/DeskKeyAuth.ts"
import { DeskKeys } from "../../../src/desk/keys/DeskKeys.ts"

const caller = (scopes: DeskCaller["scopes"]): DeskCaller => ({ memberId: `m-${scopes.join("-")}`, keyId: "k", scopes, feeBps: null, callbackUrl: null })
const keys: Record<string, DeskCaller> = { ["W".repeat(64)]: caller(["wrap"]), ["C".repeat(64)]: caller(["cashout", "rewards"]) }

const Api = HttpApi.make("scoped").add(HttpApiGroup.make("g")
  .add(HttpApiEndpoint.get("wrapOnly", "/wrap").addSuccess(Schema.Struct({ memberId: Schema.String })))
  .middleware(DeskKeyWrap))
  .addError(Unauthorized).addError(Forbidden).addError(ServiceUnavailable)

const handlers = HttpApiBuilder.group(Api, "g", (h) => h.handle("wrapOnly", () => Effect.map(DeskMember, (m) => ({ memberId: m.memberId }))))
const stubKeys = Layer.succeed(DeskKeys, { caller: (apiKey: string) => Effect.succeed(Option.fromNullable(keys[apiKey])), forget: () => {} })
const { handler, dispose } = HttpApiBuilder.toWebHandler(Layer.mergeAll(
  HttpApiBuilder.api(Api).pipe(Layer.provide(handlers), Layer.provide(DeskKeyAuth.layer), Layer.provide(stubKeys)),
  HttpServer.layerContext
))
afterAll(() => dispose())

const get = async (headers: Record<string, string>) => {
  const r = await handler(new Request("http://desk.test/wrap", { headers }))
  return { status: r.status, body: await r.json() }
}

describe("desk scope middleware", () => {
  it("refuses a key without the route's scope with 403 insufficient_scope, by either header", async () => {
    const forbidden = { status: 403, body: { error: { code: "insufficient_scope", message: "This API key lacks the wrap scope." } } }
    expect(await get({ "x-api-key": "C".repeat(64) })).toEqual(forbidden)
    expect(await get({ authorization: `Bearer ${"C".repeat(64)}` })).toEqual(forbidden)
  })

  it("lets a key with the scope through, by either header", async () => {
    expect(await get({ "x-api-key": "W".repeat(64) })).toEqual({ status: 200, body: { memberId: "m-wrap" } })
    expect(await get({ authorization: `Bearer ${"W".repeat(64)}` })).toEqual({ status: 200, body: { memberId: "m-wrap" } })
  })
})
