// TCP forwarders that a fault campaign switches off, on and to hung (tcpProxy.ts), run in a child
// process with an event loop of their own.
//
// Why: the chaos world ran its database, ledger and runner proxies in the harness's own process,
// the one that also drives the workload (signing, HTTP clients, the history). Every query of every
// node waited for that busy event loop twice per round trip; a shard-lock refresh later than its 1 s
// deadline drops every shard of the runner (docs/operations.md), so the harness's own load made
// the nodes give up their shards hundreds of times a run, outside any fault window.
import { fork } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { ProxyReply, ProxyRequest } from "./proxyChild.ts"
import type { TcpProxy } from "./tcpProxy.ts"

/** What the campaign does with a proxy in the child process. */
export type SwitchableProxy = Pick<TcpProxy, "port" | "up" | "down" | "hang">

export interface ProxyProcess {
  readonly proxies: ReadonlyArray<SwitchableProxy>
  /** Stops the child (every forwarder with it). */
  readonly stop: () => Promise<void>
}

const here = dirname(fileURLToPath(import.meta.url))

export const startProxyProcess = async (targets: ReadonlyArray<{ readonly host: string; readonly port: number }>): Promise<ProxyProcess> => {
  const child = fork(join(here, "proxyChild.ts"), [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>()
  let nextId = 0
  let exited = false
  const exitedOnce = new Promise<void>((resolve) => child.once("exit", () => {
    exited = true
    for (const w of waiting.values()) w.reject(new Error("the proxy process exited"))
    waiting.clear()
    resolve()
  }))
  const ports = await new Promise<ReadonlyArray<number>>((resolve, reject) => {
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the proxy process exited (${code}) before it started`)))
    child.on("message", (m: ProxyReply) => {
      if (m.kind === "started") return resolve(m.ports)
      const w = waiting.get(m.id)
      waiting.delete(m.id)
      if (m.error === undefined) w?.resolve()
      else w?.reject(new Error(m.error))
    })
    child.send({ kind: "start", targets } satisfies ProxyRequest)
  })
  const call = (index: number, op: "up" | "down" | "hang") =>
    new Promise<void>((resolve, reject) => {
      if (exited) return reject(new Error("the proxy process exited"))
      const id = nextId++
      waiting.set(id, { resolve, reject })
      child.send({ kind: "switch", id, index, op } satisfies ProxyRequest)
    })
  const proxies = ports.map((port, index): SwitchableProxy => ({
    port,
    up: () => call(index, "up"),
    down: () => call(index, "down"),
    hang: () => call(index, "hang")
  }))
  const stop = async () => {
    if (!exited) child.kill("SIGTERM")
    await exitedOnce
  }
  return { proxies, stop }
}
