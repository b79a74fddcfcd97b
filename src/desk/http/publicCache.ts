// The PublicCache middleware (schemas/desk/transparency.ts): `Cache-Control: public,
// max-age=30` on every transparency and registry answer, the same age the node caches them.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { PublicCache } from "../../../schemas/desk/transparency.ts"
import { edgeStateOf } from "../../platform/http/ServiceEdge.ts"
import { cacheTtlSec } from "./Transparency.ts"

export const publicCacheHeaders = { "cache-control": `public, max-age=${cacheTtlSec}` } as const

export const layer = Layer.succeed(
  PublicCache,
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const state = edgeStateOf(request)
    state.headers = { ...state.headers, ...publicCacheHeaders }
  })
)
