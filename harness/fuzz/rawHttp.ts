// One HTTP/1.1 exchange on a fresh connection, bytes exactly as given (a hostile client's method,
// target, headers and body are not normalised or refused the way fetch and node:http would), and
// the answer parsed back: status, headers, body (Content-Length, chunked, or up to the close). An
// event stream is cut once its head has arrived (it never ends by itself).
import { connect } from "node:net"

export interface RawRequest {
  readonly method: string
  /** Path and query as sent on the request line. */
  readonly target: string
  /** In order, duplicates allowed; Host and Connection are the caller's to give. */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Buffer
  /** Send the body with Transfer-Encoding: chunked (in pieces) instead of Content-Length. */
  readonly chunked?: boolean
  /** Declare this Content-Length whatever the body's length (a short or long body). */
  readonly declaredLength?: number
}

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  /** The server closed before a whole response (none, or a cut one). */
  readonly incomplete: boolean
  readonly ms: number
}

export type RawResult = RawResponse | { readonly error: string; readonly ms: number }

const CRLF = "\r\n"

/** The bytes of the request as written on the socket. */
export const requestBytes = (r: RawRequest): Buffer => {
  const lines = [`${r.method} ${r.target} HTTP/1.1`, ...r.headers.map(([k, v]) => `${k}: ${v}`)]
  if (r.chunked === true) {
    lines.push("transfer-encoding: chunked")
    const parts: Array<Buffer> = []
    for (let i = 0; i < r.body.length; i += 7_000) {
      const piece = r.body.subarray(i, i + 7_000)
      parts.push(Buffer.from(`${piece.length.toString(16)}${CRLF}`), piece, Buffer.from(CRLF))
    }
    parts.push(Buffer.from(`0${CRLF}${CRLF}`))
    return Buffer.concat([Buffer.from(lines.join(CRLF) + CRLF + CRLF, "latin1"), ...parts])
  }
  lines.push(`content-length: ${r.declaredLength ?? r.body.length}`)
  return Buffer.concat([Buffer.from(lines.join(CRLF) + CRLF + CRLF, "latin1"), r.body])
}

const headEnd = (buf: Buffer) => buf.indexOf("\r\n\r\n")

/** The bytes after any interim (1xx) responses: `100 Continue` comes before the real answer. */
const afterInterim = (buf0: Buffer): Buffer => {
  let buf = buf0
  for (;;) {
    const end = headEnd(buf)
    if (end < 0 || !/^HTTP\/1\.[01] 1\d\d/.test(buf.subarray(0, 12).toString("latin1"))) return buf
    buf = buf.subarray(end + 4)
  }
}

/** Status and headers of a response head (lower-case names; a repeated header keeps its last value). */
const parseHead = (head: string) => {
  const [statusLine, ...rest] = head.split(CRLF)
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")
  const headers: Record<string, string> = {}
  for (const line of rest) {
    const i = line.indexOf(":")
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  return { status: m === null ? 0 : Number(m[1]), headers }
}

/** The body of a chunked transfer, or undefined while it is not whole. */
const dechunk = (buf: Buffer): Buffer | undefined => {
  const parts: Array<Buffer> = []
  let at = 0
  for (;;) {
    const eol = buf.indexOf(CRLF, at)
    if (eol < 0) return undefined
    const size = parseInt(buf.subarray(at, eol).toString("latin1").split(";")[0]!, 16)
    if (!Number.isFinite(size)) return undefined
    if (size === 0) return Buffer.concat(parts)
    if (buf.length < eol + 2 + size + 2) return undefined
    parts.push(buf.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
}

/** A response is whole when its body is: by length, by the last chunk, or (neither given) at the close. */
const whole = (all: Buffer, method: string): { status: number; headers: Record<string, string>; body: Buffer } | undefined => {
  const buf = afterInterim(all)
  const end = headEnd(buf)
  if (end < 0) return undefined
  const { status, headers } = parseHead(buf.subarray(0, end).toString("latin1"))
  const rest = buf.subarray(end + 4)
  if (method === "HEAD" || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) }
  if ((headers["content-type"] ?? "").startsWith("text/event-stream")) return { status, headers, body: Buffer.alloc(0) }
  if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
    const body = dechunk(rest)
    return body === undefined ? undefined : { status, headers, body }
  }
  if (headers["content-length"] !== undefined) {
    const n = Number(headers["content-length"])
    return rest.length >= n ? { status, headers, body: rest.subarray(0, n) } : undefined
  }
  return undefined
}

/** Sends one request on its own connection; answers within `timeoutMs` or reports the silence. */
export const send = (host: string, port: number, request: RawRequest, timeoutMs: number): Promise<RawResult> =>
  new Promise((resolve) => {
    const started = performance.now()
    const ms = () => Math.round(performance.now() - started)
    let buf: Buffer = Buffer.alloc(0)
    let settled = false
    const finish = (result: RawResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const socket = connect({ host, port }, () => socket.write(requestBytes(request)))
    const timer = setTimeout(() => finish({ error: `no whole answer within ${timeoutMs} ms (${buf.length} bytes read)`, ms: ms() }), timeoutMs)
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      const done = whole(buf, request.method)
      if (done !== undefined) finish({ ...done, incomplete: false, ms: ms() })
    })
    const closed = () => {
      buf = afterInterim(buf)
      const end = headEnd(buf)
      if (end < 0) return finish(buf.length === 0 ? { error: "closed without an answer", ms: ms() } : { error: `closed inside the response head: ${JSON.stringify(buf.subarray(0, 120).toString("latin1"))}`, ms: ms() })
      const { status, headers } = parseHead(buf.subarray(0, end).toString("latin1"))
      const rest = buf.subarray(end + 4)
      const declared = headers["content-length"]
      // Neither a length nor chunks: the body runs to the close (HTTP/1.1 §6.3).
      const incomplete = declared !== undefined ? rest.length < Number(declared) : headers["transfer-encoding"] !== undefined
      finish({ status, headers, body: declared !== undefined ? rest.subarray(0, Number(declared)) : rest, incomplete, ms: ms() })
    }
    socket.on("end", closed)
    socket.on("close", closed)
    // A reset after the answer arrived changes nothing; before it, `closed` reports what came.
    socket.on("error", () => undefined)
  })
