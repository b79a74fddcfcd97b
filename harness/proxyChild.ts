// The child side of proxyProcess.ts: TCP forwarders (tcpProxy.ts) in a process of their own,
// switched by the parent over IPC. It exits when the parent goes.
import { startTcpProxy, type TcpProxy } from "./tcpProxy.ts"

export type ProxyRequest =
  | { readonly kind: "start"; readonly targets: ReadonlyArray<{ readonly host: string; readonly port: number }> }
  | { readonly kind: "switch"; readonly id: number; readonly index: number; readonly op: "up" | "down" | "hang" }

export type ProxyReply =
  | { readonly kind: "started"; readonly ports: ReadonlyArray<number> }
  | { readonly kind: "switched"; readonly id: number; readonly error?: string }

const send = (reply: ProxyReply) => process.send?.(reply)
let proxies: ReadonlyArray<TcpProxy> = []

process.on("message", (m: ProxyRequest) => {
  if (m.kind === "start") {
    Promise.all(m.targets.map((t) => startTcpProxy(t))).then((ps) => {
      proxies = ps
      send({ kind: "started", ports: ps.map((p) => p.port) })
    }, (e: unknown) => {
      console.error(`proxy process: ${String(e)}`)
      process.exit(1)
    })
    return
  }
  const proxy = proxies[m.index]
  const done = (error?: string) => send(error === undefined ? { kind: "switched", id: m.id } : { kind: "switched", id: m.id, error })
  if (proxy === undefined) return done(`no proxy ${m.index}`)
  proxy[m.op]().then(() => done(), (e: unknown) => done(String(e)))
})
process.on("disconnect", () => process.exit(0))
