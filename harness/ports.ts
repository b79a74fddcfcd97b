import { createServer, type Server } from "node:net"

const portsLow = 20_000
const portsHigh = 32_000
const given = new Set<number>()

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. Not the OS's pick (port 0): it hands the
 * same ephemeral port out again right after it is closed, and a node given one twice (runner and
 * listener) failed to start with EADDRINUSE in CI. A random port below Linux's ephemeral range
 * (so no outgoing connection takes it meanwhile), never one this process gave out before.
 */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = portsLow + Math.floor(Math.random() * (portsHigh - portsLow))
    if (given.has(port)) continue
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer()
      s.once("error", () => resolve(false))
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)))
    })
    if (free) {
      given.add(port)
      return port
    }
  }
}

/** `count` consecutive ports that were free a moment ago (a node's runner processes: runner port + index). */
export const freePortRange = async (count: number): Promise<number> => {
  for (;;) {
    const first = await freePort()
    if (first + count - 1 >= portsHigh) continue
    let all = true
    for (let p = first + 1; p < first + count && all; p++) {
      all = !given.has(p) && await new Promise<boolean>((resolve) => {
        const s = createServer()
        s.once("error", () => resolve(false))
        s.listen(p, "127.0.0.1", () => s.close(() => resolve(true)))
      })
    }
    if (all) {
      for (let p = first + 1; p < first + count; p++) given.add(p)
      return first
    }
  }
}

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(port, "127.0.0.1", () => resolve(s))
  })

/** Binds `port` on 127.0.0.1 as soon as its holder (a killed server) lets go, retrying every 5 ms. */
export const holdPortWhenFree = async (port: number, attemptsMax = 200): Promise<Server> => {
  for (let i = 0; ; i++) {
    try {
      return await listenOn(port)
    } catch (e) {
      if (i > attemptsMax) throw e
      await new Promise((r) => setTimeout(r, 5))
    }
  }
}
