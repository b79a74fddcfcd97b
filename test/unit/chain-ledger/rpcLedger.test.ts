// The JSON-RPC adapter's pure edges: reject reasons as litecoind words them, coin amounts to
// satoshis, and transport failures as typed errors (a port nobody listens on, a node that never
// answers).
import { createServer, type Socket } from "node:net"
import { Effect, Either, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { layerRpc, makeRpcLedger, rejectCodeOf, rpcEndpoint, satsOfCoins } from "../../../src/chain/ledger/rpcLedger.ts"
import { UtxoLedger } from "../../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../../src/chain/params.ts"
import { collectGarbage } from "../../support/gc.ts"
import { failure } from "../../support/utxoLedgerContract.ts"

describe("rpc ledger edges", () => {
  it.each([
    ["dust", "dust"],
    ["scriptpubkey", "nonstandard-script"],
    ["multi-op-return", "multi-op-return"],
    ["min relay fee not met, 0 < 226", "fee-too-low"],
    ["txn-mempool-conflict", "double-spend"],
    ["missing-inputs", "missing-inputs"],
    ["Missing inputs", "missing-inputs"],
    ["bad-txns-inputs-missingorspent", "missing-inputs"],
    ["bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth 99", "immature-coinbase"],
    ["mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)", "bad-signature"],
    ["Transaction already in block chain", "already-known"],
    ["txn-already-in-mempool", "already-known"],
    ["bad-txns-in-belowout", "invalid"]
  ])("maps %j to %s", (reason, code) => {
    expect(rejectCodeOf(reason)).toBe(code)
  })

  it("converts 8-decimal coin amounts exactly", () => {
    expect(satsOfCoins(0.00000226)).toBe(226n)
    expect(satsOfCoins(49.99999774)).toBe(4_999_999_774n)
    expect(satsOfCoins(21_000_000)).toBe(2_100_000_000_000_000n)
    expect(satsOfCoins(0.1 + 0.2)).toBe(30_000_000n)
    expect(satsOfCoins(-0.5)).toBe(-50_000_000n)
  })

  it("reports an unreachable node as LedgerRpcError, and bad input before any call", async () => {
    const ledger = makeRpcLedger({ url: "http://127.0.0.1:9/", username: "u", password: "p", nodeParams: litecoinRegtestParams, timeoutMs: 2_000 })
    expect(await failure(ledger.tip)).toMatchObject({ _tag: "LedgerRpcError", method: "getblockchaininfo" })
    expect(await failure(ledger.broadcast("nothex"))).toMatchObject({ _tag: "LedgerInvalidInput", field: "hex" })
    expect(await failure(ledger.mine(1, "Tnotanaddress"))).toMatchObject({ _tag: "LedgerInvalidInput", field: "toAddress" })
    expect(await failure(ledger.getTx("abc"))).toMatchObject({ _tag: "LedgerInvalidInput", field: "txid" })
  })

  it("takes Basic auth from the URL and strips it, since fetch refuses URLs with credentials", () => {
    const basic = (user: string) => "Basic " + Buffer.from(user).toString("base64")
    expect(rpcEndpoint("http://u:p@127.0.0.1:19443/")).toEqual(Either.right({ url: "http://127.0.0.1:19443/", authorization: basic("u:p") }))
    // Percent-encoded characters in the password are the node's literal ones.
    expect(rpcEndpoint("http://rpc:p%40ss%3A1@node:8332")).toEqual(Either.right({ url: "http://node:8332/", authorization: basic("rpc:p@ss:1") }))
    // Explicit credentials win over the URL's.
    expect(rpcEndpoint("http://u:p@node:1/", "x", "y")).toMatchObject({ right: { url: "http://node:1/", authorization: basic("x:y") } })
    expect(rpcEndpoint("http://node:1/")).toEqual(Either.right({ url: "http://node:1/", authorization: undefined }))
    expect(Either.isLeft(rpcEndpoint("ftp://node/"))).toBe(true)
    expect(rpcEndpoint("http://u:%zz@node/")).toMatchObject({ left: { message: expect.stringContaining("malformed") } })
    const bad = rpcEndpoint("http//u:secret@node")
    expect(Either.isLeft(bad)).toBe(true)
    // The password never reaches an error message.
    if (Either.isLeft(bad)) expect(bad.left.message).not.toContain("secret")
  })

  it("layerRpc refuses a malformed URL when it is built; a call on a bad URL is a typed error", async () => {
    const built = Effect.provide(UtxoLedger, layerRpc({ url: "not a url", params: ledgerParams, nodeParams: litecoinRegtestParams }))
    expect(await failure(built)).toMatchObject({ _tag: "LedgerInvalidInput", field: "url" })
    const ledger = makeRpcLedger({ url: "not a url", nodeParams: litecoinRegtestParams })
    expect(await failure(ledger.tip)).toMatchObject({ _tag: "LedgerRpcError", message: expect.stringContaining("not a URL") })
    expect(await failure(ledger.blockAt(-1))).toMatchObject({ _tag: "LedgerInvalidInput", field: "height" })
  })

  // A node that accepts the connection and never answers (a hung peer: the social outage tests'
  // forwarder in hang(), a wedged litecoind). The per-call timeout must end the call even when the
  // heap is collected meanwhile: a timeout signal held only by AbortSignal.any is collected on
  // Node 20 and never fires (nodejs/node#57736), and the call then waited for ever (a Post entity's
  // Change stuck in the fee sponsor's listUnspent, its retry never answered).
  it("ends a call the node never answers after its timeout, even across a garbage collection", async () => {
    const held = new Set<Socket>()
    const hung = createServer((s) => { held.add(s) })
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve))
    const port = (hung.address() as { port: number }).port
    try {
      const ledger = makeRpcLedger({ url: `http://u:p@127.0.0.1:${port}/`, nodeParams: litecoinRegtestParams, timeoutMs: 500 })
      const call = Effect.runFork(Effect.either(ledger.tip))
      // The request is on the wire (the peer holds it) before the heap is collected.
      for (let i = 0; i < 100 && held.size === 0; i++) await new Promise((r) => setTimeout(r, 20))
      expect(held.size).toBe(1)
      collectGarbage()
      await new Promise((r) => setTimeout(r, 50))
      collectGarbage()
      // Bounded here so that a call that never ends fails this test, named, not its timeout.
      const ended = await Effect.runPromise(Fiber.join(call).pipe(Effect.timeout("5 seconds"), Effect.option))
      expect(ended._tag, "the call ended within 5 s").toBe("Some")
      if (ended._tag === "Some") expect(ended.value).toMatchObject({ _tag: "Left", left: { _tag: "LedgerRpcError", method: "getblockchaininfo" } })
    } finally {
      for (const s of held) s.destroy()
      await new Promise((r) => hung.close(r))
    }
  })
})
