// Requests so malformed that node:http refuses them before any handler runs (a request line or
// headers past the 16 KB limit, bytes that are not HTTP, a header timeout). Node's default answer
// is a bare status with no body; ours keeps the exchange's error shape, so a client always
// gets {code, msg} and the connection is closed, as node would.
import type { Server } from "node:http"
import type { Duplex } from "node:stream"
import { messages } from "../../../schemas/exchange/errors.ts"

interface ParserError extends Error {
  readonly code?: string
  /** What the parser had read when it failed (node sets it for parse errors). */
  readonly rawPacket?: Buffer
}

/** Pure: the status and body for one parser error code. */
export const clientErrorReply = (code: string | undefined): { readonly status: number; readonly reason: string; readonly body: string } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, reason: "Request Header Fields Too Large", body: JSON.stringify({ code: -1102, msg: "Request line or headers too large." }) }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, reason: "Request Timeout", body: JSON.stringify({ code: -1007, msg: "Timeout waiting for the request." }) }
    default:
      return { status: 400, reason: "Bad Request", body: JSON.stringify({ code: -1102, msg: messages.malformed }) }
  }
}

const onClientError = (error: ParserError, socket: Duplex) => {
  // A reset or a socket already answered: nothing can be written any more.
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const reply = clientErrorReply(error.code)
  // A response to HEAD has no body (RFC 9110 9.3.2); a client would read ours as a second response.
  const head = error.rawPacket?.subarray(0, 5).toString("latin1") === "HEAD "
  socket.end(
    `HTTP/1.1 ${reply.status} ${reply.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(reply.body)}\r\nconnection: close\r\n\r\n${head ? "" : reply.body}`
  )
}

/** Installs the JSON answer for transport-level errors on a node:http server. */
export const answerClientErrors = <S extends Server>(server: S): S => {
  server.on("clientError", onClientError)
  return server
}
