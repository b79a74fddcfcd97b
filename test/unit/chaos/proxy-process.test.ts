// The chaos world's forwarders in their own process (harness/proxyProcess.ts): bytes go through,
// `down` refuses connections, `hang` accepts and forwards nothing, `up` forwards again.
import { createConnection, createServer, type Server } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ProxyProcess, startProxyProcess } from "../../../harness/proxyProcess.ts"

let echo: Server
let echoPort = 0
let proxies: ProxyProcess

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s))
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()))
  echoPort = (echo.address() as { port: number }).port
  proxies = await startProxyProcess([{ host: "127.0.0.1", port: echoPort }])
}, 60_000)
afterAll(async () => {
  await proxies?.stop()
  await new Promise<void>((r) => echo.close(() => r()))
})

/** Sends `text` through the proxy; what came back within `waitMs`, or the connection's error code. */
const roundTrip = (port: number, text: string, waitMs = 1_500) =>
  new Promise<string>((resolve) => {
    const s = createConnection(port, "127.0.0.1")
    let got = ""
    const timer = setTimeout(() => { s.destroy(); resolve(`timeout:${got}`) }, waitMs)
    s.on("data", (b) => {
      got += b.toString()
      if (got === text) { clearTimeout(timer); s.destroy(); resolve(got) }
    })
    s.on("error", (e: NodeJS.ErrnoException) => { clearTimeout(timer); resolve(`error:${e.code}`) })
    s.write(text)
  })

describe("proxy process", () => {
  it("forwards, refuses when down, holds when hung, and forwards again when up", async () => {
    const [p] = proxies.proxies
    expect(await roundTrip(p!.port, "hello")).toBe("hello")
    await p!.down()
    expect(await roundTrip(p!.port, "x")).toBe("error:ECONNREFUSED")
    await p!.hang()
    expect(await roundTrip(p!.port, "y", 500)).toBe("timeout:")
    await p!.up()
    expect(await roundTrip(p!.port, "again")).toBe("again")
  })
})
