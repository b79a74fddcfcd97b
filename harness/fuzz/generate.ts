// One fuzz request from an operation and a seeded generator: a plausible call (documented method,
// parameters from their schemas and the run's known ids, valid credentials, a signed exchange call
// signed over what is sent) with some of it made hostile: values of the wrong type, size or
// encoding, parameters missing or doubled, bodies nested, cut or of another type, methods and
// paths no route takes, and headers a client should not send. The same seed and index give the
// same request (the ids it picks from are the run's own).
import { sign } from "../../src/exchange/auth/signature.ts"
import type { Rng } from "../chaos/rng.ts"
import type { RawRequest } from "./rawHttp.ts"
import type { Auth, JsonSchema, Operation, Param, Service, ServiceDocument } from "./operations.ts"

/** What a run knows: credentials that work, and ids of things that exist. */
export interface FuzzContext {
  readonly exchangeKey: { readonly apiKey: string; readonly secretKey: string }
  readonly exchangeSession: string
  readonly deskKey: string
  readonly socialSession: string
  readonly webhookSecret: string
  /** Known good values by kind: symbol, postId, shortId, cid, deskOrderId, address, … */
  readonly pools: Readonly<Record<string, ReadonlyArray<string>>>
  /** host:port of each listener, for Host headers and URLs in parameters. */
  readonly hosts: Readonly<Record<Service, string>>
}

export interface FuzzRequest extends RawRequest {
  readonly service: Service
  /** The operation's method and documented path (for the report). */
  readonly route: string
  /** The operation's documented path (`{name}` for its parameters). */
  readonly template: string
  /** The path actually sent, without the query. */
  readonly path: string
}

const hostileStrings = [
  "", " ", "0", "-1", "1e309", "-1e309", "NaN", "Infinity", "99999999999999999999999999", "-0.000000001", "0x1f", "1,000", "１２３",
  "null", "true", "[]", "{}", "%", "%zz", "%00", "a\u0000b", "\ud800", "\udc00x", "😀", "\u202eevil", "<script>alert(1)</script>",
  "' OR 1=1 --", "../../etc/passwd", "\r\nx-injected: 1", "é".repeat(300), "A".repeat(5_000), "9".repeat(400), "-9223372036854775809",
  "9223372036854775807", "18446744073709551616", "1.0000000000000000000001", "0.", ".5", "+1", "1_000", "Ⅻ", "  padded  "
]
const hostileNumbers = [0, -1, 1.5, -0.5, 2 ** 53 + 1, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 1e-320, 4294967296]

/** Values of the right kind for a parameter or field, by its name (the documents give types, not meaning). */
const plausible = (name: string, ctx: FuzzContext, rng: Rng): string | undefined => {
  const pool = (kind: string) => {
    const xs = ctx.pools[kind] ?? []
    return xs.length === 0 ? undefined : rng.pick(xs)
  }
  const n = name.toLowerCase()
  switch (n) {
    case "symbol": case "ticker_id": case "market_pair": return pool("symbol")
    case "symbols": return JSON.stringify(rng.chance(0.5) ? [pool("symbol")] : (ctx.pools["symbol"] ?? []).slice(0, 3))
    case "side": return rng.pick(["BUY", "SELL"])
    case "price": return rng.pick(["1", "1.00", "0.5", "2.25", "100"])
    case "quantity": return rng.pick(["1", "0.1", "2", "10"])
    case "orderid": case "fromid": return rng.pick(["1", "2", "17", String(rng.int(1, 100_000))])
    case "origclientorderid": case "newclientorderid": return `fz-${rng.int(1, 50)}`
    case "recvwindow": return rng.pick(["5000", "60000", "1"])
    case "limit": case "depth": return rng.pick(["1", "5", "100", "500"])
    case "starttime": case "endtime": case "start_time": case "end_time": return String(Date.now() - rng.int(0, 86_400_000))
    case "interval": return rng.pick(["1m", "1h", "1d", "1M"])
    case "streams": return `${(pool("symbol") ?? "x").toLowerCase()}@trade`
    case "range": return rng.pick(["24h", "7d", "30d", "90d", "all"])
    case "days": return rng.pick(["1", "30", "90"])
    case "address": case "wallet": case "newaddress": case "payoutaddress": case "refundaddress":
      return rng.chance(0.5) ? pool("address") : rng.pick(["0x1111111111111111111111111111111111111111", "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"])
    case "cid": case "media": return pool("cid")
    case "id": return rng.pick([pool("postId"), pool("shortId"), pool("deskOrderId"), pool("reference"), crypto.randomUUID()].filter((x) => x !== undefined) as Array<string>)
    case "commentid": return pool("commentId") ?? crypto.randomUUID()
    case "url": return `http://${ctx.hosts.social}/p/${pool("shortId") ?? "abcdef"}`
    case "maxwidth": case "maxheight": return rng.pick(["300", "640", "1200"])
    case "format": return rng.pick(["json", "xml"])
    case "theme": return rng.pick(["light", "dark"])
    case "autoplay": case "muted": return rng.pick(["0", "1"])
    case "t": return String(rng.int(0, 100))
    case "streamid": return rng.pick(["chan", "live-1"])
    case "asset": return rng.pick(["DUSD", "SUSD", "XUSD", "BTC", "LTC", "ETH", "USDC"])
    case "chain": return rng.pick(["base", "ethereum", "bsc", "ledger"])
    case "amount": return rng.pick(["10", "1.5", "100.25"])
    case "direction": return rng.pick(["wrap", "unwrap"])
    case "kind": return rng.pick(["story", "photo", "video", "text"])
    case "body": case "message": return rng.pick(["hello", "a post from the fuzzer", "x"])
    case "token": return rng.pick(["A".repeat(43), "tok"])
    case "apikey": return "k".repeat(64)
    case "type": return rng.pick(["LIMIT", "buy", "sell"])
    case "timeinforce": return "GTC"
    default: return undefined
  }
}

/** A value for a schema, plausible where the name says what it is. */
const sample = (doc: ServiceDocument, schema0: JsonSchema, name: string, ctx: FuzzContext, rng: Rng, depth = 0): unknown => {
  const schema = doc.resolve(schema0)
  const variants = (schema["anyOf"] ?? schema["oneOf"]) as ReadonlyArray<JsonSchema> | undefined
  if (variants !== undefined && variants.length > 0) return sample(doc, rng.pick(variants), name, ctx, rng, depth)
  const known = plausible(name, ctx, rng)
  if (Array.isArray(schema["enum"]) && schema["enum"].length > 0) return rng.pick(schema["enum"] as ReadonlyArray<unknown>)
  switch (schema["type"]) {
    case "object": {
      if (depth > 4) return {}
      const props = (schema["properties"] ?? {}) as Record<string, JsonSchema>
      const required = new Set((schema["required"] ?? []) as ReadonlyArray<string>)
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(props)) if (required.has(k) || rng.chance(0.4)) out[k] = sample(doc, v, k, ctx, rng, depth + 1)
      return out
    }
    case "array": {
      if (depth > 4) return []
      const items = (schema["items"] ?? {}) as JsonSchema
      return Array.from({ length: rng.int(0, 3) }, () => sample(doc, items, name, ctx, rng, depth + 1))
    }
    case "integer": return known !== undefined && /^-?\d+$/.test(known) ? Number(known) : rng.int(Number(schema["minimum"] ?? 0), Math.min(Number(schema["maximum"] ?? 1000), 1e9))
    case "number": return known !== undefined && Number.isFinite(Number(known)) ? Number(known) : rng.int(0, 1000) / 10
    case "boolean": return rng.chance(0.5)
    default: return known ?? rng.pick(["x", "abc", "fuzz", String(rng.int(0, 99))])
  }
}

const hostileJsonValue = (rng: Rng): unknown => {
  switch (rng.int(0, 9)) {
    case 0: return null
    case 1: return rng.pick(hostileNumbers)
    case 2: return rng.chance(0.5)
    case 3: return [rng.pick(hostileStrings)]
    case 4: return { nested: { deeper: rng.pick(hostileStrings) } }
    case 5: return JSON.parse(`${"[".repeat(60)}${"]".repeat(60)}`) as unknown
    default: return rng.pick(hostileStrings)
  }
}

/** Replaces, drops or adds a field of a JSON body. */
const mutateObject = (value: unknown, rng: Rng): unknown => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return hostileJsonValue(rng)
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  const keys = Object.keys(out)
  const times = rng.int(1, 2)
  for (let i = 0; i < times; i++) {
    const op = rng.int(0, 3)
    if (op === 0 && keys.length > 0) delete out[rng.pick(keys)]
    else if (op === 1) out[rng.pick(["__proto__", "constructor", "extra", "x".repeat(200), ""])] = hostileJsonValue(rng)
    else if (keys.length > 0) out[rng.pick(keys)] = op === 2 ? hostileJsonValue(rng) : mutateObject(out[rng.pick(keys)], rng)
  }
  return out
}

/** JSON text a parser should refuse, or JSON a schema should. */
const hostileBodyText = (rng: Rng): string => rng.pick([
  "", "{", "}", "[", "{\"a\":", "{\"a\":1,}", "{'a':1}", "nul", "NaN", "{\"a\":1}{\"b\":2}", "\u0000", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\u0000\"}",
  `{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}`, `${"{\"a\":".repeat(100)}1${"}".repeat(100)}`, JSON.stringify({ a: "x".repeat(70_000) }),
  JSON.stringify(Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]))), "[1,2,3]", "\"string\"", "123", "true", "\ufeff{}",
  "{\"amount\":1e999999}", "{\"amount\":-0}", "{\"a\":1,\"a\":2}"
])

/** A query or path value in the wire's own encoding, sometimes left raw or broken. */
const encodeValue = (v: string, rng: Rng): string => {
  const r = rng.next()
  if (r < 0.85) return encodeURIComponent(v.replace(/[\ud800-\udfff]/g, "")) + (/[\ud800-\udfff]/.test(v) ? "%ED%A0%80" : "")
  if (r < 0.92) return v.replace(/[\s#?\u0000-\u001f\u007f-\uffff]/g, (c) => encodeURIComponent(c.replace(/[\ud800-\udfff]/g, "x")))
  return rng.pick(["%", "%zz", "%ff%fe", "%00", "%E2%82", "%C0%AF", "+", "%2B", "%252e", "a%20b", "%0d%0aX:1"])
}

const queryValue = (doc: ServiceDocument, p: Param, ctx: FuzzContext, rng: Rng): string => {
  const v = sample(doc, p.schema, p.name, ctx, rng)
  return typeof v === "string" ? v : JSON.stringify(v)
}

/** Query parameters of the operation: plausible, some missing, doubled, extra or hostile. */
const queryPairs = (doc: ServiceDocument, op: Operation, ctx: FuzzContext, rng: Rng, hostile: boolean): Array<[string, string]> => {
  const pairs: Array<[string, string]> = []
  for (const p of op.queryParams) {
    if (p.name === "signature" || p.name === "timestamp") continue
    if (!p.required && !rng.chance(0.5)) continue
    if (hostile && rng.chance(0.15)) continue // a required one missing, now and then
    pairs.push([p.name, hostile && rng.chance(0.35) ? rng.pick(hostileStrings) : queryValue(doc, p, ctx, rng)])
    if (hostile && rng.chance(0.05)) pairs.push([p.name, queryValue(doc, p, ctx, rng)]) // given twice
  }
  if (hostile && rng.chance(0.15)) pairs.push([rng.pick(["x", "a[]", "__proto__", "", "=", "symbol", "id"]), rng.pick(hostileStrings)])
  return pairs
}

const encodePairs = (pairs: ReadonlyArray<readonly [string, string]>, rng: Rng) =>
  pairs.map(([k, v]) => `${encodeValue(k, rng)}=${encodeValue(v, rng)}`).join("&")

const filledPath = (doc: ServiceDocument, op: Operation, ctx: FuzzContext, rng: Rng, hostile: boolean): string =>
  op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = op.pathParams.find((x) => x.name === name)
    if (hostile && rng.chance(0.3)) return encodeValue(rng.pick(hostileStrings), rng) || "%20"
    const v = name === "cid" ? ctx.pools["cid"]?.[0] ?? "x" : p === undefined ? "x" : queryValue(doc, p, ctx, rng)
    return encodeURIComponent(v)
  })

/** Paths no route takes, or a route's path bent. */
const bentPath = (path: string, service: Service, rng: Rng): string => {
  switch (rng.int(0, 7)) {
    case 0: return `${path}/`
    case 1: return path.replace(/^\//, "//")
    case 2: return path.toUpperCase()
    case 3: return `${path}/..%2f..%2fetc`
    case 4: return service === "exchange" ? path.replace("/api/public/v1", "/api/v3") : `${path}%2e`
    case 5: return `/${encodeURIComponent(rng.pick(hostileStrings)).slice(0, 300)}`
    case 6: return `${path}.json`
    default: return `${path}/${"x".repeat(rng.int(1, 3000))}`
  }
}

const otherMethods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "get", "FOO", "PROPFIND", "M-SEARCH", "CONNECT"]

/** Session routes that would end the run's own credentials: called with junk ones only. */
const destructive = (op: Operation) =>
  op.path === "/api/public/auth/sign-out" || (op.method === "DELETE" && (op.path.startsWith("/api/public/v1/sessions/") || op.path.startsWith("/api/app/keys/")))

const credentialHeaders = (auth: Auth, op: Operation, ctx: FuzzContext, rng: Rng): Array<[string, string]> => {
  const valid = !destructive(op) && rng.chance(0.8)
  const junk = rng.pick(["", "junk", "A".repeat(64), "A".repeat(3_000), "é", "Bearer", "null"])
  switch (auth) {
    case "session": {
      const token = op.service === "exchange" ? ctx.exchangeSession : ctx.socialSession
      const cookie = op.service === "exchange" ? "sl_exchange_session" : "sl_session"
      if (rng.chance(0.1)) return [["cookie", `${cookie}=${valid ? token : junk}`], ...(rng.chance(0.5) ? [["origin", rng.pick([`http://${ctx.hosts[op.service]}`, "http://evil.example"])] as [string, string]] : [])]
      return [["authorization", `${rng.pick(["Bearer", "bearer", "Basic", "Token"])} ${valid ? token : junk}`]]
    }
    case "deskKey":
      return rng.chance(0.7) ? [["x-api-key", valid ? ctx.deskKey : junk]] : [["authorization", `Bearer ${valid ? ctx.deskKey : junk}`]]
    case "webhook":
      return [[rng.pick(["x-api-key", "authorization"]), valid ? (rng.chance(0.5) ? ctx.webhookSecret : `Bearer ${ctx.webhookSecret}`) : junk]]
    default:
      // A credential on a public route, now and then.
      return rng.chance(0.1) ? [[rng.pick(["authorization", "x-api-key", "x-mbx-apikey"]), rng.chance(0.5) ? `Bearer ${ctx.socialSession}` : junk]] : []
  }
}

/** Headers a client may send anywhere, now and then. */
const extraHeaders = (op: Operation, ctx: FuzzContext, rng: Rng): Array<[string, string]> => {
  const out: Array<[string, string]> = []
  if (rng.chance(0.04)) out.push(["upgrade", rng.pick(["websocket", "h2c"])], ["connection", "Upgrade"])
  if (rng.chance(0.03)) out.push(["expect", rng.pick(["100-continue", "200-ok", "junk"])])
  if (rng.chance(0.05)) out.push(["accept", rng.pick(["text/html", "application/xml", "*/*", "text/event-stream"])])
  if (rng.chance(0.05)) out.push(["accept-encoding", rng.pick(["gzip", "br", "identity;q=0, *;q=0"])])
  if (rng.chance(0.03)) out.push(["x-forwarded-for", rng.pick(["10.0.0.1", "junk, , 1.1.1.1", "::1"])])
  if (rng.chance(0.02)) out.push(["x-junk", "v".repeat(rng.pick([100, 9_000, 20_000]))])
  if (rng.chance(0.05)) out.push(["idempotency-key", rng.pick(["fz-key-1", "", "k".repeat(300), "é", crypto.randomUUID()])])
  if (rng.chance(0.03)) out.push(["sec-fetch-site", rng.pick(["same-origin", "cross-site", "none"])])
  if (op.service === "social" && op.path.startsWith("/api/stream") && rng.chance(0.5)) {
    out.push(["range", rng.pick(["bytes=0-9", "bytes=-5", "bytes=5-", "bytes=0-0,2-3,9-", "bytes=999999-", "bytes=9-1", "bytes=x", "items=0-1", `bytes=${"0-1,".repeat(40)}0-1`])])
    if (rng.chance(0.2)) out.push([rng.pick(["if-range", "if-none-match"]), rng.pick(["\"x\"", "*", `"${ctx.pools["cid"]?.[0] ?? ""}"`])])
  }
  return out
}

const contentTypes = ["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/octet-stream", "image/png", "", "application/json; charset=utf-16", "*/*"]

/** The exchange's signed call: parameters in the query (or split with a form body), timestamp and signature over what is sent. */
const signedParts = (pairs: Array<[string, string]>, ctx: FuzzContext, rng: Rng, hostile: boolean) => {
  const timestamp = rng.chance(0.92) ? String(Date.now()) : rng.pick(["0", String(Date.now() + 3_600_000), "abc", String(Date.now() * 1000)])
  const all: Array<[string, string]> = [...pairs, ["timestamp", timestamp]]
  const split = rng.chance(0.2) ? rng.int(0, all.length) : all.length
  const query = encodePairs(all.slice(0, split), rng)
  const bodyText = encodePairs(all.slice(split), rng)
  let signature = sign(ctx.exchangeKey.secretKey, query + bodyText)
  if (hostile && rng.chance(0.1)) signature = rng.pick(["", "00", signature.toUpperCase(), signature.slice(1), "z".repeat(64)])
  const withSig = (s: string) => `${s}${s === "" ? "" : "&"}signature=${signature}`
  return split === all.length ? { query: withSig(query), body: "" } : { query, body: withSig(bodyText) }
}

/** The request for one draw: mostly a plausible call, sometimes bent (hostile). */
export const generate = (doc: ServiceDocument, ctx: FuzzContext, rng: Rng): FuzzRequest => {
  const op = rng.pick(doc.operations)
  const hostile = rng.chance(0.7)
  const method = hostile && rng.chance(0.12) ? rng.pick(otherMethods) : op.method
  let path = filledPath(doc, op, ctx, rng, hostile)
  if (hostile && rng.chance(0.08)) path = bentPath(path, op.service, rng)
  const headers: Array<[string, string]> = []
  if (!rng.chance(0.02)) headers.push(["host", rng.chance(0.97) ? ctx.hosts[op.service] : rng.pick(["", "evil.example", "a b", "x".repeat(300)])])
  headers.push(["connection", "close"])
  let query = ""
  let body = Buffer.alloc(0)
  let contentType: string | undefined
  const pairs = queryPairs(doc, op, ctx, rng, hostile)
  if (op.auth === "signed") {
    const signed = signedParts(pairs, ctx, rng, hostile)
    query = signed.query
    if (signed.body !== "") {
      body = Buffer.from(signed.body)
      contentType = "application/x-www-form-urlencoded"
    }
    if (!(hostile && rng.chance(0.1))) headers.push(["x-mbx-apikey", hostile && rng.chance(0.05) ? "junk" : ctx.exchangeKey.apiKey])
  } else {
    query = encodePairs(pairs, rng)
    headers.push(...credentialHeaders(op.auth, op, ctx, rng))
  }
  if (op.body !== undefined && (method === "POST" || rng.chance(0.3))) {
    const valid = sample(doc, op.body, "", ctx, rng)
    const text = !hostile ? JSON.stringify(valid) : rng.chance(0.6) ? JSON.stringify(mutateObject(valid, rng)) : hostileBodyText(rng)
    body = Buffer.from(text)
    contentType = hostile && rng.chance(0.2) ? rng.pick(contentTypes) : "application/json"
  } else if (op.rawBody) {
    body = rng.chance(0.8) ? Buffer.from(`\x89PNG fuzz ${rng.int(0, 1_000_000)}`) : Buffer.alloc(rng.int(0, 70_000), rng.int(0, 255))
    contentType = rng.chance(0.8) ? rng.pick(["image/png", "text/plain", "video/mp4"]) : rng.pick(["text/html", "image/svg+xml", "", "application/json"])
  } else if (hostile && rng.chance(0.1)) {
    body = Buffer.from(rng.chance(0.5) ? hostileBodyText(rng) : "junk=1&x=%zz")
    contentType = rng.pick(contentTypes)
  }
  if (contentType !== undefined && contentType !== "") headers.push(["content-type", contentType])
  headers.push(...extraHeaders(op, ctx, rng))
  const chunked = body.length > 0 && rng.chance(0.08)
  // A body shorter than it says (the server waits out its body time) is rare: it costs seconds.
  const declaredLength = !chunked && hostile && rng.chance(0.005) ? body.length + rng.int(1, 10) : undefined
  return {
    service: op.service, route: `${op.method} ${op.path}`, template: op.path, path,
    method, target: query === "" ? path : `${path}?${query}`, headers, body,
    ...(chunked ? { chunked } : {}), ...(declaredLength === undefined ? {} : { declaredLength })
  }
}
