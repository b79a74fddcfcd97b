// The OpenCors middleware (schemas/common/OpenCors.ts): `Access-Control-Allow-Origin: *` on every
// answer of the group, errors included, through the headers the edge puts on the response.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { OpenCors } from "../../../schemas/common/OpenCors.ts"
import { edgeStateOf } from "./ServiceEdge.ts"

export const corsHeaders = { "access-control-allow-origin": "*" } as const

export const OpenCorsLive = Layer.succeed(
  OpenCors,
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const state = edgeStateOf(request)
    state.headers = { ...state.headers, ...corsHeaders }
  })
)
