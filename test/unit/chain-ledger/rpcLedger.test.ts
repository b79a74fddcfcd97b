// The JSON-RPC adapter's pure edges: reject reasons as litecoind words them, coin amounts to
// satoshis, and transport failures as typed errors (a port nobody listens on, a node that never
// answers).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer, type Socket } from "node:net"
import { Block, Transaction } from "bitcoinjs-lib"
import { Effect, Either, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { layerRpc, makeRpcLedger, rejectCodeOf, rpcEndpoint, satsOfCoins } from "../../../src/chain/ledger/rpcLedger.ts"
import { UtxoLedger } from "../../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../../src/chain/params.ts"
import { collectGarbage } from "../../support/gc.ts"
import { blockOf, coinbaseTx, legacyTx, segwitTx } from "../../support/rawBlocks.ts"
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

  interface Call { readonly id: number; readonly method: string; readonly params: ReadonlyArray<string> }
  /** A fake node: records every request's calls; holds answers while `hold` is set. */
  const fakeNode = async (answer: (c: Call) => unknown) => {
    const requests: Array<ReadonlyArray<Call>> = []
    let release: Array<() => void> = []
    let holding = false
    const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Call | Array<Call>
        const calls = Array.isArray(body) ? body : [body]
        requests.push(calls)
        const reply = () => {
          const replies = calls.map((c) => ({ id: c.id, ...(answer(c) as object) }))
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? replies : replies[0]))
        }
        if (holding) release.push(reply)
        else reply()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as { port: number }).port
    return {
      requests,
      ledger: makeRpcLedger({ url: `http://u:p@127.0.0.1:${port}/`, nodeParams: litecoinRegtestParams, timeoutMs: 2_000 }),
      hold: () => { holding = true },
      releaseAll: () => {
        holding = false
        const r = release
        release = []
        for (const f of r) f()
      },
      close: () => new Promise((r) => server.close(r))
    }
  }

  // Broadcasts coalesced (issue 22): one sendrawtransaction request out at a time, and what
  // arrives meanwhile goes in the next one as a JSON-RPC batch, in order, each answered apart.
  describe("broadcasts", () => {
    /** A distinct parseable transaction (not a valid spend: the fake node only hashes it). */
    const txHex = (n: number) => {
      const tx = new Transaction()
      tx.addInput(Buffer.alloc(32, n), 0)
      tx.addOutput(Buffer.from([0x6a]), 0n)
      return tx.toHex()
    }
    const txidOf = (hex: string) => Transaction.fromHex(hex).getId()

    const accept = (c: Call) => ({ result: txidOf(c.params[0]!), error: null })
    const waitFor = async (what: () => boolean) => {
      for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10))
      expect(what()).toBe(true)
    }

    it("sends what arrives while a request is out as one batch, in order, each answered with its own txid", async () => {
      const node = await fakeNode(accept)
      try {
        node.hold()
        const first = Effect.runPromise(node.ledger.broadcast(txHex(1)))
        await waitFor(() => node.requests.length === 1)
        // Five more while the first is out: one wallet's two legs in order, three others alone.
        const many = Effect.runPromise(node.ledger.broadcastMany([txHex(2), txHex(3)]))
        const alone = [4, 5, 6].map((n) => Effect.runPromise(node.ledger.broadcast(txHex(n))))
        await new Promise((r) => setTimeout(r, 50))
        expect(node.requests).toHaveLength(1)
        node.releaseAll()
        expect(await first).toBe(txidOf(txHex(1)))
        expect(await many).toEqual([Either.right(txidOf(txHex(2))), Either.right(txidOf(txHex(3)))])
        expect(await Promise.all(alone)).toEqual([4, 5, 6].map((n) => txidOf(txHex(n))))
        expect(node.requests.map((r) => r.map((c) => c.params[0]))).toEqual([[txHex(1)], [2, 3, 4, 5, 6].map(txHex)])
        expect(node.requests.flat().every((c) => c.method === "sendrawtransaction")).toBe(true)
      } finally {
        await node.close()
      }
    })

    it("maps each call's refusal apart, and a node that is gone fails every waiting call", async () => {
      const node = await fakeNode((c) =>
        c.params[0] === txHex(8)
          ? { result: null, error: { code: -26, message: "txn-mempool-conflict" } }
          : c.params[0] === txHex(9)
            ? { result: null, error: { code: -22, message: "TX decode failed" } }
            : accept(c))
      try {
        const results = await Effect.runPromise(node.ledger.broadcastMany([txHex(7), txHex(8), txHex(9), txHex(10)]))
        expect(results[0]).toEqual(Either.right(txidOf(txHex(7))))
        expect(results[1]).toMatchObject({ left: { _tag: "LedgerTxRejected", code: "double-spend", txid: txidOf(txHex(8)) } })
        expect(results[2]).toMatchObject({ left: { _tag: "LedgerInvalidInput", field: "hex" } })
        expect(results[3]).toEqual(Either.right(txidOf(txHex(10))))
        expect(await failure(node.ledger.broadcast(txHex(8)))).toMatchObject({ _tag: "LedgerTxRejected", code: "double-spend" })
      } finally {
        await node.close()
      }
      const gone = await Effect.runPromise(node.ledger.broadcastMany([txHex(11), txHex(12)]))
      for (const r of gone) expect(r).toMatchObject({ left: { _tag: "LedgerRpcError", method: "sendrawtransaction" } })
    })

    it("does not send a waiting broadcast whose caller stopped waiting", async () => {
      const node = await fakeNode(accept)
      try {
        node.hold()
        const first = Effect.runPromise(node.ledger.broadcast(txHex(20)))
        await waitFor(() => node.requests.length === 1)
        const dropped = Effect.runFork(node.ledger.broadcast(txHex(21)))
        const kept = Effect.runPromise(node.ledger.broadcast(txHex(22)))
        await new Promise((r) => setTimeout(r, 20))
        await Effect.runPromise(Fiber.interrupt(dropped))
        node.releaseAll()
        await first
        expect(await kept).toBe(txidOf(txHex(22)))
        expect(node.requests.map((r) => r.map((c) => c.params[0]))).toEqual([[txHex(20)], [txHex(22)]])
      } finally {
        await node.close()
      }
    })
  })

  // Blocks by hash (issue 22): every follower of the tip reads each new block; the node is asked
  // for a block's bytes once, and a height whose block changed (a reorg) is read again.
  describe("blocks", () => {
    const chainOf = (n: number, salt: number) => {
      const out: Array<Block> = []
      let prev = "00".repeat(32)
      for (let h = 0; h < n; h++) {
        const b = blockOf(prev, 1_700_000_000 + h * 60 + salt, [coinbaseTx(h), legacyTx(h + salt), segwitTx(h)])
        out.push(b)
        prev = b.getId()
      }
      return out
    }

    it("asks the node for a block's bytes once, and again for a height whose block changed", async () => {
      let chain = chainOf(3, 0)
      /** Bytes the fake node sends for a hash instead of its block's (a node answering wrongly). */
      const lies = new Map<string, string>()
      const node = await fakeNode((c) => {
        if (c.method === "getblockchaininfo") return { result: { blocks: chain.length - 1, bestblockhash: chain.at(-1)!.getId() }, error: null }
        if (c.method === "getblockhash") return { result: chain[Number(c.params[0])]!.getId(), error: null }
        const b = chain.find((x) => x.getId() === c.params[0])
        return b === undefined ? { result: null, error: { code: -5, message: "Block not found" } } : { result: lies.get(b.getId()) ?? b.toHex(), error: null }
      })
      const getblocks = () => node.requests.flat().filter((c) => c.method === "getblock").length
      const expected = (b: Block, height: number) => ({
        height, hash: b.getId(), prevHash: Buffer.from(b.prevHash!).reverse().toString("hex"), time: b.timestamp, txs: b.transactions!.map((t) => t.toHex())
      })
      try {
        const page = await Effect.runPromise(node.ledger.blocks(0, 3))
        expect(page.blocks).toEqual(chain.map(expected))
        expect(getblocks()).toBe(3)
        // Two more readers of the same blocks, one of them by height: no bytes asked for again.
        expect((await Effect.runPromise(node.ledger.blocks(1, 2))).blocks).toEqual(chain.slice(1).map((b, i) => expected(b, i + 1)))
        expect(await Effect.runPromise(node.ledger.blockAt(2))).toEqual(expected(chain[2]!, 2))
        expect(getblocks()).toBe(3)
        // A reorg replaces height 2: that block is read, the others are not.
        const replaced = blockOf(chain[1]!.getId(), chain[2]!.timestamp + 1, [coinbaseTx(2), segwitTx(40)])
        chain = [chain[0]!, chain[1]!, replaced]
        expect((await Effect.runPromise(node.ledger.blocks(0, 3))).blocks).toEqual(chain.map(expected))
        expect(getblocks()).toBe(4)
        // Bytes that do not hash to the asked hash are refused, and not kept: the next read asks again.
        const next = blockOf(replaced.getId(), replaced.timestamp + 60, [coinbaseTx(3), legacyTx(41)])
        chain = [...chain, next]
        lies.set(next.getId(), chain[0]!.toHex())
        expect(await failure(node.ledger.blockAt(3))).toMatchObject({ _tag: "LedgerRpcError", method: "getblock", message: expect.stringContaining("mismatch") })
        lies.clear()
        expect(await Effect.runPromise(node.ledger.blockAt(3))).toEqual(expected(next, 3))
        expect(getblocks()).toBe(6)
      } finally {
        await node.close()
      }
    })
  })
})
