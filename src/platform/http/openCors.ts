// The OpenCors middleware (schemas/common/OpenCors.ts): `Access-Control-Allow-Origin: *` on every
// answer of the group, errors included, through the headers the edge puts on the response.
import { HttpApi, HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { OpenCors } from "../../../schemas/common/OpenCors.ts"
import { edgeStateOf } from "./ServiceEdge.ts"

export const corsHeaders = { "access-control-allow-origin": "*" } as const

export const layer = Layer.succeed(
  OpenCors,
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const state = edgeStateOf(request)
    state.headers = { ...state.headers, ...corsHeaders }
  })
)

/**
 * The paths of the API's OpenCors routes and their methods: a browser's CORS preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) to one of them is answered by the edge.
 */
export const openCorsPaths = (api: HttpApi.HttpApi.Any): ReadonlyMap<string, ReadonlyArray<string>> => {
  const paths = new Map<string, Array<string>>()
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if (![...middleware].some((m) => m.key === OpenCors.key)) return
      const methods = paths.get(endpoint.path) ?? paths.set(endpoint.path, []).get(endpoint.path)!
      methods.push(endpoint.method, ...(endpoint.method === "GET" ? ["HEAD"] : []))
    }
  })
  return paths
}

/** Request headers a preflight may ask for: a list of header names, bounded. */
const headerList = /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+){0,19}$/

/**
 * The 204 answer to a preflight (Fetch standard): any origin, the route's methods, the headers
 * the browser asked to send (names only, at most 20), cached by the browser for a day.
 */
export const preflightHeaders = (methods: ReadonlyArray<string>, requested: string | undefined): Record<string, string> => ({
  ...corsHeaders,
  "access-control-allow-methods": [...methods, "OPTIONS"].join(", "),
  "access-control-allow-headers": requested !== undefined && headerList.test(requested.trim()) ? requested.trim() : "accept, content-type",
  "access-control-max-age": "86400"
})
