// A TCP forwarder a test can switch off and on: the node under test reaches its ledger through it,
// so "the ledger is unreachable" is a real refused connection (every open socket cut, nothing
// listening on the port) and "back" is the same port forwarding again.
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { freePort } from "../../harness/ports.ts"

export interface TcpProxy {
  readonly port: number
  /** Forwarding (the default after start). */
  readonly up: () => Promise<void>
  /** Cuts every connection and stops listening: connects are refused until `up`. */
  readonly down: () => Promise<void>
}

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const port = await freePort()
  const sockets = new Set<Socket>()
  let server: Server | undefined
  const track = (s: Socket) => {
    sockets.add(s)
    s.once("close", () => sockets.delete(s))
  }
  const up = () =>
    new Promise<void>((resolve, reject) => {
      if (server !== undefined) return resolve()
      const s = createServer((client) => {
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
      for (const socket of sockets) socket.destroy()
      sockets.clear()
      if (s === undefined) return resolve()
      s.close(() => resolve())
    })
  await up()
  return { port, up, down }
}
