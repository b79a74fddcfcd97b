// What the shared HTTP edge needs to know about one service: its error shape, its routes and
// weights, its rate-limit headers, what it answers before Effect (the fast lane), and its limits.
// Each service defines one in its own folder; nothing here knows a service.
import type { IncomingMessage, ServerResponse } from "node:http"
import { NodeHttpServerRequest } from "@effect/platform-node"
import type { HttpServerRequest } from "@effect/platform"
import type { Usage } from "../RateLimiter.ts"
import type { RouteTable } from "./RouteTable.ts"
import { clientIpFrom, normalizeIp, type ProxyRange } from "./clientIp.ts"

/** A pre-encoded answer in the service's own error shape. */
export interface Reply {
  readonly status: number
  /** JSON text. */
  readonly body: string
}

/** The answers every listener gives without a handler, each in the service's shape. */
export interface ErrorReplies {
  readonly notFound: Reply
  /** Bytes that are not HTTP, a bad request line, a request the router cannot read. */
  readonly malformed: Reply
  readonly headersTooLarge: Reply
  readonly bodyTooLarge: Reply
  readonly timeout: Reply
  /** CONNECT and other methods no route takes. */
  readonly methodNotAllowed: Reply
  /** The safety net: something unexpected failed (never a 500, never a stack trace). */
  readonly internal: Reply
  /** 503: the node is stopping (its drain has begun); sent with `Connection: close`. */
  readonly stopping: Reply
  readonly rateLimited: (limit: number) => Reply
  /** A multipart body where the service takes none (see ServiceEdge.refusesMultipart). */
  readonly multipartRefused?: Reply
  /** Text no route takes (a NUL, an unpaired surrogate, JSON nested too deep: textGuard.ts), 400 with the reason. */
  readonly refusedText: (reason: string) => Reply
  /** `Upgrade: websocket` and any other protocol upgrade: no route offers one (400). */
  readonly upgradeRefused: Reply
  /** An `Expect` other than 100-continue (417). */
  readonly expectationFailed: Reply
  /** A client IP past its open-connection cap (429); the connection is closed after it. */
  readonly tooManyConnections: (limit: number) => Reply
}

/** A GET answered in node:http, before Effect: the body comes from the same pure function and
 * schema as the Effect handler of that route, so both paths give the same bytes. Given the query
 * string (without "?"): a 200 body (JSON text, or its UTF-8 bytes when the route keeps an answer
 * for many requests: encoded once, written as they are), a 200 body with headers of its own (the
 * desk's CORS and Cache-Control), a refusal in the service's shape, or undefined to leave the
 * request to the Effect app (an answer that needs I/O, or a body not built yet or too old). */
export type FastRender = (query: string) => string | Buffer | Reply | { readonly body: string; readonly headers: Record<string, string> } | undefined

/** A GET whose answer is a long-lived stream (SSE), served by node:http on its own whatever the
 * fast-lane setting: it owns the response from here on. */
export type StreamRoute = (req: IncomingMessage, res: ServerResponse, query: string, headers: Record<string, string>) => void

/** Signed calls a service answers in node:http (the exchange's order path): given the request, its
 * path and raw query after rewrite, and the edge's state (IP charged, route weight, headers), it
 * returns true when it took the request (and answers it, calling `done` with the status), false
 * to leave it to the Effect app untouched (nothing read from the request). */
export type SignedLane = (req: IncomingMessage, res: ServerResponse, path: string, rawQuery: string, state: EdgeState, done: (status: number) => void) => boolean

/** A 200 JSON body kept by a service's own cache, with the headers its route adds (CORS). */
export interface CachedAnswer {
  readonly body: string
  readonly headers: Record<string, string>
}

export interface ServiceEdge {
  /** Metrics label and log name: "exchange", "desk", "social". */
  readonly service: string
  readonly errors: ErrorReplies
  /** Rewrites a request URL before routing (the exchange serves /api/v3 as an alias); identity otherwise. */
  readonly rewrite: (url: string) => string
  /** Rate-limit headers on every answer, from the bucket that was charged. */
  readonly usageHeaders: (usage: Usage) => Record<string, string>
  /** Weight per client IP per minute on this listener, for every request (signed ones too) but fair-use routes. */
  readonly ipWeightPerMin: number
  /** Weight per client IP per minute of the routes marked FairUse (keyless cached reads), counted
   * apart from ipWeightPerMin; undefined: they count against ipWeightPerMin like any route. */
  readonly fairUseIpWeightPerMin?: number
  /** Largest request body; a longer declared Content-Length is answered before it is read. */
  readonly bodyBytesMax: number
  /** Routes (by label) with a larger body limit than bodyBytesMax: uploads that stream. */
  readonly bodyBytesMaxByRoute?: ReadonlyMap<string, number>
  /** Refuse `multipart/*` request bodies before any parser sees them: no route of the service takes
   * them, and @effect/platform's multipart parser waits forever on an empty or truncated one. */
  readonly refusesMultipart?: boolean
  /** Refuses a request on its headers alone, before a byte of its body is read (a webhook's secret):
   * the refusal and any headers of its own, or undefined to go on. */
  readonly bodyGate?: (route: string, request: IncomingMessage) => { readonly reply: Reply; readonly headers?: Record<string, string> } | undefined
  readonly routes: RouteTable
  /** GET routes answered in node:http; keyed by path after rewrite. */
  readonly fast: ReadonlyMap<string, FastRender>
  /** Paths open to any origin and their methods: an `OPTIONS` preflight to one is answered 204 (openCors.ts). */
  readonly preflight?: ReadonlyMap<string, ReadonlyArray<string>>
  /** Stream routes by path after rewrite (always served by the edge). */
  readonly streams?: ReadonlyMap<string, StreamRoute>
  /** Called when the listener starts closing: streams end themselves, or closing would wait for them. */
  readonly onClose?: () => void
  /** GETs on parameterised paths answered from a node-local cache the handlers fill (social post
   * lookup); undefined = not cached, the Effect app answers. Receives the path and Host header. */
  readonly fastCached?: (path: string, host: string | undefined) => CachedAnswer | undefined
  /** GETs a service can answer from memory by writing the response itself (hot media ranges);
   * returns the status it answered, or undefined to leave the request to the Effect app. */
  readonly fastRaw?: (req: IncomingMessage, res: ServerResponse, path: string, headers: Record<string, string>) => number | undefined
  /** Signed calls answered before Effect with the same schemas, checks and actions (fast lane on). */
  readonly signedLane?: SignedLane
  /** GET routes whose 200 answer never changes while the node runs (OpenAPI, docs page): the
   * first answer is produced by the Effect app and kept, later ones are served from it. */
  readonly cached: ReadonlySet<string>
}

/** What the edge learned about one request before any handler ran; the handler side (auth
 * middleware, the after-step) reads and extends it. */
export interface EdgeState {
  readonly started: number
  readonly ip: string
  readonly route: string
  readonly weight: number
  /** Rate-limit headers for the answer; a signed route's middleware replaces them with the key's. */
  headers: Record<string, string>
  /** The edge answered while the app still ran (a chunked body past the limit): the app's answer is dropped, not counted. */
  answered: boolean
}

const states = new WeakMap<IncomingMessage, EdgeState>()

export const setEdgeState = (request: IncomingMessage, state: EdgeState): void => {
  states.set(request, state)
}

/** The state the edge attached to this request (always present on a listener's requests). */
export const edgeStateOf = (request: HttpServerRequest.HttpServerRequest): EdgeState => {
  const state = states.get(NodeHttpServerRequest.toIncomingMessage(request))
  // Every request reaches Effect through the edge server, which sets it first.
  if (state === undefined) throw new Error("request did not pass the HTTP edge")
  return state
}

/** The client IP: the socket's, or behind trusted proxies the right-most X-Forwarded-For entry
 * that is not one of them (clientIp.ts); `proxies` undefined = no proxy is trusted. */
export const clientIpOf = (request: IncomingMessage, proxies: ReadonlyArray<ProxyRange> | undefined): string => {
  const socketIp = request.socket.remoteAddress ?? "unknown"
  if (proxies === undefined) return normalizeIp(socketIp)
  const forwarded = request.headers["x-forwarded-for"]
  return clientIpFrom(socketIp, Array.isArray(forwarded) ? forwarded.join(",") : forwarded, proxies)
}
