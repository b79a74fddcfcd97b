import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { startAnvil } from "../support/anvil.ts"
import { startLitecoind } from "../support/litecoind.ts"
import { startAll } from "../support/processes.ts"

const gone = (pid: number) => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

describe("litecoind harness", () => {
  it("starts a regtest node, mines past MWEB activation height, and stops, removing its datadir", async () => {
    const node = await startLitecoind()
    try {
      const addr = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn" // regtest P2PKH of a throwaway key
      await node.rpc("generatetoaddress", 450, addr)
      expect(await node.rpc<number>("getblockcount")).toBe(450)
    } finally {
      await node.stop()
    }
    expect(gone(node.pid)).toBe(true)
    expect(existsSync(node.datadir)).toBe(false)
  })

  it("a binary that cannot start fails at once, leaving no datadir behind", async () => {
    const started = Date.now()
    const error = await startLitecoind("/nonexistent/litecoind").then(() => undefined, (e: Error & { datadir?: string }) => e)
    expect(error?.message).toMatch(/^litecoind did not start: spawn \/nonexistent\/litecoind ENOENT/)
    expect(Date.now() - started).toBeLessThan(5_000) // not the 20 s start timeout
    expect(error?.datadir).toMatch(/ltc-/)
    expect(existsSync(error!.datadir!)).toBe(false)
  })

  it("when one of several processes fails to start, the ones that started are stopped", async () => {
    const anvil = startAnvil({ chainId: 1 })
    await expect(startAll([anvil, startLitecoind("/nonexistent/litecoind")])).rejects.toThrow(/ENOENT/)
    expect(gone((await anvil).pid)).toBe(true)
  })
})
