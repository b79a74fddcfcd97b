// A TCP forwarder a test can switch off and on: the node under test reaches its ledger through it,
// so "the ledger is unreachable" is a real refused connection (every open socket cut, nothing
// listening on the port) and "back" is the same port forwarding again.
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { freePort } from "./ports.ts"

export interface TcpProxy {
  readonly port: number
  /** Forwarding (the default after start). */
  readonly up: () => Promise<void>
  /** Cuts every connection and stops listening: connects are refused until `up`. */
  readonly down: () => Promise<void>
  /** Cuts every connection, then accepts new ones and never forwards a byte (a hung peer) until `up`. */
  readonly hang: () => Promise<void>
  /**
   * What each connection accepted during the last hang has sent so far (latin1 text, its first
   * heldTextMax characters; one entry per connection, oldest first): a test waits until a given
   * call is held before it acts.
   */
  readonly heldRequests: () => ReadonlyArray<string>
}

/** Characters kept of what one held connection sends (a JSON-RPC call's method is near its start). */
export const heldTextMax = 16_384

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }, listenPort?: number): Promise<TcpProxy> => {
  const port = listenPort ?? await freePort()
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let hung = false
  let held: Array<{ text: string }> = []
  const track = (s: Socket) => {
    sockets.add(s)
    s.once("close", () => sockets.delete(s))
  }
  const cutAll = () => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  const up = () =>
    new Promise<void>((resolve, reject) => {
      hung = false
      if (server !== undefined) return resolve()
      const s = createServer((client) => {
        if (hung) {
          track(client)
          const request = { text: "" }
          held.push(request)
          client.on("data", (bytes: Buffer) => {
            if (request.text.length < heldTextMax) request.text = (request.text + bytes.toString("latin1")).slice(0, heldTextMax)
          })
          client.on("error", () => client.destroy())
          return
        }
        const upstream = createConnection(target.port, target.host)
        track(client)
        track(upstream)
        const cut = () => { client.destroy(); upstream.destroy() }
        client.on("error", cut)
        upstream.on("error", cut)
        client.on("close", cut)
        upstream.on("close", cut)
        client.pipe(upstream)
        upstream.pipe(client)
      })
      s.once("error", reject)
      s.listen(port, "127.0.0.1", () => { server = s; resolve() })
    })
  const down = () =>
    new Promise<void>((resolve) => {
      const s = server
      server = undefined
      hung = false
      cutAll()
      if (s === undefined) return resolve()
      s.close(() => resolve())
    })
  const hang = async () => {
    await up()
    hung = true
    held = []
    cutAll()
  }
  await up()
  const heldRequests = () => held.map((r) => r.text)
  return { port, up, down, hang, heldRequests }
}
