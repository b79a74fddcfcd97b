import { describe, expect, it } from "vitest"
import { startLitecoind } from "../support/litecoind.ts"

describe("litecoind harness", () => {
  it("starts a regtest node, mines past MWEB activation height, and stops", async () => {
    const node = await startLitecoind()
    try {
      const addr = "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn" // regtest P2PKH of a throwaway key
      await node.rpc("generatetoaddress", 450, addr)
      expect(await node.rpc<number>("getblockcount")).toBe(450)
    } finally {
      await node.stop()
    }
  })
})
