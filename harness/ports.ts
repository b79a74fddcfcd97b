import { createServer, type Server } from "node:net"

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

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
