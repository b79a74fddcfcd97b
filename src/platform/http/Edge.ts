// The node:http server in front of a service's Effect app. Before any Effect code runs it does the
// per-request work every route shares: the service's URL rewrite, the client IP, the route's
// weight charged to the IP's bucket (a plain map, no I/O), the 429 and the too-large body, and it
// answers the fast lane (hot public GETs rendered by the same pure functions and schemas as their
// handlers) and the cached pages. Everything else goes on to the Effect app with an EdgeState
// attached. Why: the Effect pipeline alone costs ~200-250 µs of CPU per request, five times a bare
// node:http answer (docs/operations.md), and ping/time/market data are most of the traffic.
import { createHash } from "node:crypto"
import { type IncomingMessage, Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { gzipSync } from "node:zlib"
import type { RateLimiterShape } from "../RateLimiter.ts"
import { type Drain, processDrain } from "./Drain.ts"
import { isTrustedProxy, normalizeIp } from "./clientIp.ts"
import type { EdgeSettings } from "./EdgeSettings.ts"
import { recordRequest } from "./httpMetrics.ts"
import { refusedUrlText } from "./textGuard.ts"
import { costOfUnknown, type RouteInfo } from "./RouteTable.ts"
import { preflightHeaders } from "./openCors.ts"
import { clientIpOf, type EdgeState, type Reply, type ServiceEdge, setEdgeState } from "./ServiceEdge.ts"

export interface EdgeOptions {
  readonly edge: ServiceEdge
  readonly limiter: RateLimiterShape
  readonly settings: EdgeSettings
  /** Off: every request goes through the Effect app (tests run both ways; bench compares). */
  readonly fastLane: boolean
  /** The process's drain unless a test gives its own. */
  readonly drain?: Drain
}

/** How long a refused oversized body is read and dropped before the connection is cut. */
export const drainMs = 5_000
/** Cached pages below this are not worth compressing. */
const gzipBytesMin = 1024

const jsonType = "application/json"

const send = (res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string>) => {
  res.writeHead(status, { "content-type": jsonType, "content-length": String(Buffer.byteLength(body)), ...headers })
  res.end(body)
}

/** The socket of a refused body goes after drainMs whatever the client does: ending our side
 * leaves it half open, and a client that never closes its own (the fuzz run's did) would hold
 * it, and the listener's close, for ever. */
const cutLater = (req: IncomingMessage) => {
  const timer = setTimeout(() => req.socket.destroy(), drainMs)
  req.socket.once("close", () => clearTimeout(timer))
}

/** Answers in the service's shape, then keeps reading what the client still sends until it is done
 * (or drainMs), and only then closes: closing with unread bytes would reset the connection and
 * the client would never read the answer. */
const refuseBody = (req: IncomingMessage, res: ServerResponse, reply: Reply, headers: Record<string, string>) => {
  send(res, reply.status, reply.body, headers)
  cutLater(req)
  req.once("end", () => req.socket.end())
  req.resume()
}

/** Once the edge has answered a request the Effect app is still handling (a chunked body past
 * the limit), the app's own answer goes nowhere: its writes complete at once and send nothing. */
const detachResponse = (res: ServerResponse) => {
  const complete = (args: Array<unknown>) => {
    const callback = args.find((a) => typeof a === "function") as (() => void) | undefined
    if (callback !== undefined) process.nextTick(callback)
  }
  res.writeHead = (() => res) as typeof res.writeHead
  res.write = ((...args: Array<unknown>) => (complete(args), true)) as typeof res.write
  res.end = ((...args: Array<unknown>) => (complete(args), res)) as typeof res.end
}

/**
 * Counts a chunked body's bytes as node's parser hands them over (a chunked body declares no
 * length, so the Content-Length check cannot see it). Past `limit`, `over` runs once; from then on
 * the bytes are dropped as they arrive, and the connection is ended when the body is done (or cut
 * after drainMs), so the client reads the answer instead of a reset.
 */
const countBody = (req: IncomingMessage, limit: number, over: () => void) => {
  let seen = 0
  let cut = false
  const push = req.push.bind(req)
  req.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (cut) {
      if (chunk === null) req.socket.end()
      return true
    }
    if (chunk !== null && chunk !== undefined) {
      seen += (chunk as Buffer).length
      if (seen > limit) {
        cut = true
        cutLater(req)
        over()
        return true
      }
    }
    return push(chunk, encoding)
  }
}

/**
 * A handler that stops reading a body early (an upload refused for the type its first bytes show)
 * ends its request stream, whose finalizer in @effect/platform destroys the request, and node then
 * destroys the socket: the client got no answer at all (found by the fuzz run, seed 7, #1219).
 * Until the answer is out, a destroy while the socket lives only drops the rest of the body; the
 * socket still goes after drainMs. A client that hangs up destroys a dead socket, as before.
 */
const keepSocketForAnswer = (req: IncomingMessage, res: ServerResponse) => {
  const destroy = req.destroy.bind(req)
  req.destroy = ((error?: Error) => {
    // A body read whole: destroying the request leaves a keep-alive socket alone, as before.
    if (req.complete || res.writableFinished || req.socket.destroyed) return destroy(error)
    req.resume()
    const timer = setTimeout(() => req.socket.destroy(), drainMs)
    const clear = () => clearTimeout(timer)
    req.once("end", clear)
    req.socket.once("close", clear)
    return req
  }) as typeof req.destroy
}

/** The handler reading a body that went past the limit stops with an error; the socket stays open
 * for the drain (a destroyed request would take its socket, and the answer, with it). */
const failBodyRead = (req: IncomingMessage) => {
  req.destroy = (() => req) as typeof req.destroy
  if (req.listenerCount("error") > 0) req.emit("error", new Error("request body over the limit"))
  req.socket.resume()
}

interface CachedPage {
  readonly headers: Record<string, string>
  readonly body: Buffer
  readonly gzip: Buffer | undefined
  readonly etag: string
}

const headerRecord = (raw: unknown): Record<string, string> => {
  const out: Record<string, string> = {}
  if (raw !== null && typeof raw === "object") {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === "string") out[k.toLowerCase()] = v
  }
  return out
}

/** Watches the Effect app answer one request and hands a 200's status, headers and bytes to `keep`. */
const capture = (res: ServerResponse, keep: (page: CachedPage) => void) => {
  const writeHead = res.writeHead.bind(res)
  const end = res.end.bind(res)
  let status = 0
  let headers: Record<string, string> = {}
  res.writeHead = ((code: number, ...rest: Array<unknown>) => {
    status = code
    headers = headerRecord(rest.find((r) => r !== null && typeof r === "object"))
    return (writeHead as (...a: Array<unknown>) => ServerResponse)(code, ...rest)
  }) as typeof res.writeHead
  res.end = ((chunk?: unknown, ...rest: Array<unknown>) => {
    if (status === 200 && (typeof chunk === "string" || chunk instanceof Uint8Array)) {
      const body = Buffer.from(chunk as Uint8Array)
      const kept: Record<string, string> = {}
      if (headers["content-type"]) kept["content-type"] = headers["content-type"]
      keep({
        headers: kept,
        body,
        gzip: body.length >= gzipBytesMin ? gzipSync(body) : undefined,
        etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`
      })
    }
    return (end as (...a: Array<unknown>) => ServerResponse)(chunk, ...rest)
  }) as typeof res.end
}

const sendPage = (req: IncomingMessage, res: ServerResponse, page: CachedPage, headers: Record<string, string>): number => {
  const common = { ...page.headers, ...headers, etag: page.etag, "cache-control": "public, max-age=300", vary: "accept-encoding" }
  if (req.headers["if-none-match"] === page.etag) {
    res.writeHead(304, common)
    res.end()
    return 304
  }
  const gzip = page.gzip !== undefined && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))
  const body = gzip ? page.gzip! : page.body
  res.writeHead(200, { ...common, "content-length": String(body.length), ...(gzip ? { "content-encoding": "gzip" } : {}) })
  res.end(body)
  return 200
}

/**
 * The per-IP weight bucket of one listener: each service counts its own clients (five social calls
 * spend nothing of the exchange's budget), and a listener's fair-use routes (RouteTable `fairUse`)
 * have a bucket of their own beside it.
 */
export const ipBucket = (service: string, tier: "ip" | "fair-use", ip: string): string =>
  tier === "ip" ? `ip:${service}:${ip}` : `ip:${service}:${tier}:${ip}`

const ipBudgetOf = (edge: ServiceEdge, route: RouteInfo): { readonly tier: "ip" | "fair-use"; readonly limit: number } =>
  route.fairUse === true && edge.fairUseIpWeightPerMin !== undefined
    ? { tier: "fair-use", limit: edge.fairUseIpWeightPerMin }
    : { tier: "ip", limit: edge.ipWeightPerMin }

/** What every request goes through first, whoever answers it: the rewrite, its route, its client
 * IP, the route's weight charged to the IP, the usage headers, and how it is counted in metrics. */
const charge = (options: EdgeOptions, req: IncomingMessage) => {
  const { edge, limiter } = options
  const started = performance.now()
  const method = req.method ?? "GET"
  const url = edge.rewrite(req.url ?? "/")
  if (url !== req.url) req.url = url
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  const route = edge.routes.lookup(method, path) ?? costOfUnknown
  const ip = clientIpOf(req, options.settings.trustedProxies)
  const budget = ipBudgetOf(edge, route)
  const usage = limiter.consume(ipBucket(edge.service, budget.tier, ip), route.weight, budget.limit)
  const headers = edge.usageHeaders(usage)
  const done = (status: number) => recordRequest(edge.service, method, route.label, status, performance.now() - started)
  // Over budget, the 429 replaces whatever the request would have had.
  const limited = usage.allowed
    ? undefined
    : { reply: edge.errors.rateLimited(budget.limit), headers: { ...headers, "retry-after": String(usage.retryAfterSec) } }
  return { started, method, url, q, path, route, ip, headers, done, limited }
}

/** The request handler that runs before Effect: true when it answered. */
export const makeFront = (options: EdgeOptions) => {
  const { edge } = options
  const drain = options.drain ?? processDrain
  const pages = new Map<string, CachedPage>()
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (drain.draining()) {
      // Stopping: nothing new starts; the client closes this connection and goes elsewhere.
      const started = performance.now()
      send(res, edge.errors.stopping.status, edge.errors.stopping.body, { connection: "close", "retry-after": "1" })
      recordRequest(edge.service, req.method ?? "GET", "stopping", edge.errors.stopping.status, performance.now() - started)
      return true
    }
    const { started, method, url, q, path, route, ip, headers, done, limited } = charge(options, req)
    if (limited !== undefined) {
      send(res, limited.reply.status, limited.reply.body, limited.headers)
      done(limited.reply.status)
      return true
    }
    const refusedUrl = refusedUrlText(url)
    if (refusedUrl !== undefined) {
      const reply = edge.errors.refusedText(refusedUrl)
      send(res, reply.status, reply.body, headers)
      done(reply.status)
      return true
    }
    const gated = edge.bodyGate?.(route.label, req)
    if (gated !== undefined) {
      refuseBody(req, res, gated.reply, { ...headers, ...gated.headers })
      done(gated.reply.status)
      return true
    }
    const bodyBytesMax = edge.bodyBytesMaxByRoute?.get(route.label) ?? edge.bodyBytesMax
    const declared = Number(req.headers["content-length"] ?? 0)
    if (declared > bodyBytesMax) {
      refuseBody(req, res, edge.errors.bodyTooLarge, headers)
      done(edge.errors.bodyTooLarge.status)
      return true
    }
    if (edge.refusesMultipart === true && /^\s*multipart\//i.test(String(req.headers["content-type"] ?? ""))) {
      refuseBody(req, res, edge.errors.multipartRefused ?? edge.errors.malformed, headers)
      done((edge.errors.multipartRefused ?? edge.errors.malformed).status)
      return true
    }
    const preflight = method === "OPTIONS" ? edge.preflight?.get(path) : undefined
    if (preflight !== undefined) {
      res.writeHead(204, { ...headers, ...preflightHeaders(preflight, req.headers["access-control-request-headers"]) })
      res.end()
      done(204)
      return true
    }
    const stream = method === "GET" ? edge.streams?.get(path) : undefined
    if (stream !== undefined) {
      stream(req, res, q < 0 ? "" : url.slice(q + 1), headers)
      done(200)
      return true
    }
    if (options.fastLane && edge.signedLane !== undefined) {
      const state: EdgeState = { started, ip, route: route.label, weight: route.weight, headers, answered: false }
      if (edge.signedLane(req, res, path, q < 0 ? "" : url.slice(q + 1), state, done)) {
        // In flight like any request handed to Effect: a drain waits for the lane's answer too
        // (untracked, a stopping node closed its listeners under the lane's requests).
        drain.track(res)
        return true
      }
    }
    if (method === "GET" && options.fastLane) {
      const render = edge.fast.get(path)
      const out = render === undefined ? undefined : render(q < 0 ? "" : url.slice(q + 1))
      if (out !== undefined) {
        const bare = typeof out === "string" || Buffer.isBuffer(out)
        const status = bare || !("status" in out) ? 200 : out.status
        const extra = !bare && "headers" in out ? out.headers : {}
        send(res, status, bare ? out : out.body, { ...headers, ...extra })
        done(status)
        return true
      }
      const cachedAnswer = edge.fastCached?.(path, req.headers.host)
      if (cachedAnswer !== undefined) {
        send(res, 200, cachedAnswer.body, { ...headers, ...cachedAnswer.headers })
        done(200)
        return true
      }
      const rawStatus = edge.fastRaw?.(req, res, path, headers)
      if (rawStatus !== undefined) {
        done(rawStatus)
        return true
      }
      if (edge.cached.has(path)) {
        const page = pages.get(path)
        if (page !== undefined) {
          done(sendPage(req, res, page, headers))
          return true
        }
        capture(res, (p) => pages.set(path, p))
      }
    }
    const state: EdgeState = { started, ip, route: route.label, weight: route.weight, headers, answered: false }
    setEdgeState(req, state)
    drain.track(res)
    if (req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0) keepSocketForAnswer(req, res)
    if (req.headers["transfer-encoding"] !== undefined) {
      countBody(req, bodyBytesMax, () => {
        if (!res.headersSent) {
          const reply = edge.errors.bodyTooLarge
          send(res, reply.status, reply.body, state.headers)
          done(reply.status)
          state.answered = true
          detachResponse(res)
        }
        failBodyRead(req)
      })
    }
    return false
  }
}

/** Transport-level failures (node:http refuses the bytes before any handler) in the service's shape. */
const clientErrorReply = (edge: ServiceEdge, code: string | undefined): Reply & { readonly reason: string } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { ...edge.errors.headersTooLarge, reason: "Request Header Fields Too Large" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { ...edge.errors.timeout, reason: "Request Timeout" }
    default:
      return { ...edge.errors.malformed, reason: "Bad Request" }
  }
}

/** Answers on the raw socket and ends our side; the socket goes after drainMs even if the client
 * never closes its own (node no longer tracks it, so nothing else would). */
const rawAnswer = (socket: Duplex, reply: Reply, reason: string, withBody: boolean, headers: Record<string, string> = {}) => {
  socket.end(
    `HTTP/1.1 ${reply.status} ${reason}\r\ncontent-type: ${jsonType}\r\ncontent-length: ${Buffer.byteLength(reply.body)}\r\n` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") + `connection: close\r\n\r\n${withBody ? reply.body : ""}`
  )
  const timer = setTimeout(() => socket.destroy(), drainMs)
  timer.unref()
  socket.once("close", () => clearTimeout(timer))
}

/** `Upgrade: websocket` (any upgrade): no route offers one. Charged and counted like any request,
 * answered on the raw socket (node hands an upgrade over with no response object), then closed. */
const refuseUpgrade = (options: EdgeOptions, req: IncomingMessage, socket: Duplex) => {
  const { headers, done, limited } = charge(options, req)
  const reply = limited?.reply ?? options.edge.errors.upgradeRefused
  rawAnswer(socket, reply, limited === undefined ? "Bad Request" : "Too Many Requests", req.method !== "HEAD", limited?.headers ?? headers)
  done(reply.status)
}

/** An `Expect` other than 100-continue (node would answer 417 with no body). */
const refuseExpectation = (options: EdgeOptions, req: IncomingMessage, res: ServerResponse) => {
  const { headers, done, limited } = charge(options, req)
  const reply = limited?.reply ?? options.edge.errors.expectationFailed
  send(res, reply.status, reply.body, { ...(limited?.headers ?? headers), connection: "close" })
  done(reply.status)
}

interface ParserError extends Error {
  readonly code?: string
  /** What the parser had read when it failed (node sets it for parse errors). */
  readonly rawPacket?: Buffer
}

/** Open connections per client IP on one listener; past the cap a new one is answered and closed
 * before node reads a byte of it. A trusted proxy's connections carry many clients: not counted. */
const connectionCap = (options: EdgeOptions) => {
  const open = new Map<string, number>()
  const { connectionsPerIpMax, trustedProxies } = options.settings
  return (socket: Socket): boolean => {
    const ip = normalizeIp(socket.remoteAddress ?? "unknown")
    if (trustedProxies !== undefined && isTrustedProxy(ip, trustedProxies)) return true
    const now = (open.get(ip) ?? 0) + 1
    if (now > connectionsPerIpMax) {
      const reply = options.edge.errors.tooManyConnections(connectionsPerIpMax)
      recordRequest(options.edge.service, "CONNECT", "connection", reply.status, 0)
      rawAnswer(socket, reply, "Too Many Requests", true)
      setTimeout(() => socket.destroy(), 1_000).unref()
      return false
    }
    open.set(ip, now)
    socket.once("close", () => {
      const left = (open.get(ip) ?? 1) - 1
      if (left === 0) open.delete(ip)
      else open.set(ip, left)
    })
    return true
  }
}

/** A node:http server whose requests pass the front first; the Effect app gets the rest. */
/** How long a closing listener leaves its open connections before it cuts them. */
const closeGraceMs = 1_000

export const makeEdgeServer = (options: EdgeOptions): Server => {
  const front = makeFront(options)
  const admit = connectionCap(options)
  class EdgeServer extends Server {
    override emit(event: string | symbol, ...args: Array<any>): boolean {
      if (event === "request" && front(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
      if (event === "connection" && !admit(args[0] as Socket)) return true
      if (event === "upgrade") {
        refuseUpgrade(options, args[0] as IncomingMessage, args[1] as Duplex)
        return true
      }
      return super.emit(event as string, ...args)
    }
    // close() waits for every open connection; a stream lasts minutes, so it is ended first.
    // What is still open a moment later (a response that never ends, a client that keeps a
    // request half-sent within its time limits) is cut: the node's stop (NodeMain) has already
    // waited for the requests in flight, and a stop must end whatever its clients do.
    override close(callback?: (err?: Error) => void): this {
      options.edge.onClose?.()
      super.close(callback)
      setTimeout(() => this.closeAllConnections(), closeGraceMs).unref()
      return this
    }
  }
  // HTTP/1.1 without Host is still answered in our shape (node would send an empty 400).
  const { headersTimeoutMs, bodyTimeoutMs } = options.settings
  const server = new EdgeServer({
    requireHostHeader: false,
    // Slow clients: node answers 408 (clientError below) when the headers, or the whole request,
    // take longer; it checks every connectionsCheckingInterval (30 s by default, which let a
    // trickled body hold a connection 315 s).
    headersTimeout: headersTimeoutMs,
    requestTimeout: headersTimeoutMs + bodyTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs / 2)
  })
  server.on("clientError", (error: ParserError, socket: Duplex) => {
    // A reset, a socket already answered, or a response already under way: nothing can be
    // written any more without corrupting what the client reads.
    if (error.code === "ECONNRESET" || !socket.writable || (socket as { _httpMessage?: ServerResponse })._httpMessage?.headersSent === true) {
      socket.destroy()
      return
    }
    const reply = clientErrorReply(options.edge, error.code)
    // A response to HEAD has no body (RFC 9110 9.3.2); a client would read ours as a second response.
    rawAnswer(socket, reply, reply.reason, error.rawPacket?.subarray(0, 5).toString("latin1") !== "HEAD ")
  })
  // Node emits this only to listeners: without one it writes a bare 417 itself.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => refuseExpectation(options, req, res))
  // CONNECT asks for a tunnel no route offers; node would drop the socket without a word.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    rawAnswer(socket, options.edge.errors.methodNotAllowed, "Method Not Allowed", true)
  })
  return server
}
