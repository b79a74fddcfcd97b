// What only the in-process devnet promises: it checks raw transactions as a node's mempool does,
// it is deterministic, its block clock runs and stops with its scope, and one layer gives the
// app its three chains.
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { encodeFunctionData, erc20Abi, keccak256, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { evmChains, type EvmChain } from "../../../src/chain/evm/chains.ts"
import { layerDevnet, makeDevnet, type DevnetMining } from "../../../src/chain/evm/devnet.ts"
import { EvmLedgers } from "../../../src/chain/evm/EvmLedger.ts"
import { deployMockUsdc, mintMockUsdc } from "../../../src/chain/evm/MockUsdc.ts"
import { anvilDevKey } from "../../support/anvil.ts"

const hotWalletKey = Redacted.make(anvilDevKey)
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

/** Runs `f` with a fresh devnet and closes it after, also on failure. */
const withDevnet = <A>(
  chain: EvmChain,
  mining: DevnetMining,
  f: (d: Effect.Effect.Success<ReturnType<typeof makeDevnet>>) => Effect.Effect<A, unknown>
) => Effect.runPromise(Effect.scoped(Effect.flatMap(makeDevnet({ chain, hotWalletKey, mining }), f)))

const hot = privateKeyToAccount(anvilDevKey)
const signTransfer = (chainId: number, nonce: number, maxFeePerGas = 10_000_000_000n, amount = 1n) =>
  hot.signTransaction({
    chainId,
    type: "eip1559",
    nonce,
    gas: 100_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: 1n,
    to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [USER, amount] })
  })

describe("devnet mempool rules", () => {
  it("accepts a viem-signed raw tx under the hash keccak(bytes) and refuses what a node would", async () => {
    await withDevnet("base", { mode: "manual" }, ({ node }) =>
      Effect.gen(function*() {
        const raw = yield* Effect.promise(() => signTransfer(8453, 0))
        expect(yield* node.sendRawTransaction(raw)).toBe(keccak256(raw))
        expect(yield* node.pendingCount).toBe(1)
        const reasons: string[] = []
        const refuse = (r: Hex) => Effect.flip(node.sendRawTransaction(r)).pipe(Effect.map((e) => reasons.push(e.reason)))
        yield* refuse(raw) // the same bytes again
        yield* refuse(yield* Effect.promise(() => signTransfer(1, 1))) // signed for ethereum
        yield* refuse(yield* Effect.promise(() => signTransfer(8453, 0, 10_000_000_000n, 2n))) // nonce already used by the pending tx
        yield* refuse(yield* Effect.promise(() => signTransfer(8453, 5))) // a gap
        yield* refuse(yield* Effect.promise(() => signTransfer(8453, 1, 1n))) // below the base fee
        yield* refuse("0x02deadbeef")
        expect(reasons[0]).toBe("already known")
        expect(reasons[1]).toMatch(/chain id/i)
        expect(reasons[2]).toMatch(/nonce too low/)
        expect(reasons[3]).toMatch(/nonce too high/)
        expect(reasons[4]).toMatch(/below base fee/)
        expect(reasons[5]).toMatch(/invalid transaction/)
        expect(yield* node.pendingCount).toBe(1)
      })
    )
  })

  it("a sender with no coin for gas is refused", async () => {
    await withDevnet("bsc", { mode: "auto" }, ({ node }) =>
      Effect.gen(function*() {
        yield* node.setBalance(hot.address, 0n)
        const e = yield* Effect.flip(node.sendRawTransaction(yield* Effect.promise(() => signTransfer(56, 0))))
        expect(e.reason).toMatch(/insufficient funds/)
      })
    )
  })
})

describe("devnet determinism and clock", () => {
  const script = (chain: EvmChain) =>
    withDevnet(chain, { mode: "auto" }, ({ ledger }) =>
      Effect.gen(function*() {
        const token = yield* deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals: 6 })
        yield* mintMockUsdc(ledger, token, ledger.hotWallet, 10n ** 9n)
        const hash = yield* ledger.erc20Transfer(token, USER, 123_450_000n)
        const status = yield* ledger.txStatus(hash)
        return { token, hash, status }
      })
    )

  it("the same script gives the same token address, tx hash and block hash on every run; chains differ", async () => {
    const [a, b, c] = await Promise.all([script("ethereum"), script("ethereum"), script("base")])
    expect(a).toEqual(b)
    expect(a.status.kind).toBe("mined")
    expect(c.hash).not.toBe(a.hash) // the chain id is signed into the transaction
  })

  it("interval mining produces blocks on its own and stops when the scope closes", async () => {
    const scope = Effect.runSync(Scope.make())
    const { ledger } = await Effect.runPromise(Scope.extend(makeDevnet({ chain: "bsc", hotWalletKey, mining: { mode: "interval", intervalMs: 20 } }), scope))
    // Blocks appear without any transaction; a loaded machine may take longer than 3 intervals.
    const deadline = Date.now() + 10_000
    let running = await Effect.runPromise(ledger.blockNumber)
    while (running < 3n && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      running = await Effect.runPromise(ledger.blockNumber)
    }
    expect(running).toBeGreaterThanOrEqual(3n)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const stopped = await Effect.runPromise(ledger.blockNumber)
    await new Promise((r) => setTimeout(r, 100))
    expect(await Effect.runPromise(ledger.blockNumber)).toBe(stopped)
  })
})

describe("layerDevnet", () => {
  it("gives the app ethereum, base and bsc in one process, each with its chain id and its own token decimals", async () => {
    const program = Effect.gen(function*() {
      const ledgers = yield* EvmLedgers
      expect(ledgers.chains).toEqual(["ethereum", "base", "bsc"])
      const out: Array<[string, number, number]> = []
      for (const [chain, decimals] of [["ethereum", 6], ["base", 6], ["bsc", 18]] as const) {
        const ledger = yield* ledgers.get(chain)
        const token = yield* deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals })
        out.push([chain, yield* ledger.chainId, yield* ledger.tokenDecimals(token)])
      }
      return out
    })
    const out = await Effect.runPromise(Effect.provide(program, layerDevnet({ hotWalletKey })))
    expect(out).toEqual([["ethereum", evmChains.ethereum.chainId, 6], ["base", 8453, 6], ["bsc", 56, 18]])
  })

  it("a chain the layer was not built with is EvmUnsupported; a bad hot-wallet key fails the layer without echoing it", async () => {
    const one = layerDevnet({ hotWalletKey, chains: ["base"] })
    const e = await Effect.runPromise(Effect.provide(Effect.flip(Effect.flatMap(EvmLedgers, (l) => l.get("bsc"))), one))
    expect(e._tag).toBe("EvmUnsupported")
    const secret = "0x" + "zz".repeat(32)
    const bad = await Effect.runPromiseExit(Effect.provide(EvmLedgers, layerDevnet({ hotWalletKey: Redacted.make(secret) })))
    expect(Exit.isFailure(bad)).toBe(true)
    expect(JSON.stringify(bad)).toContain("EvmInvalidInput")
    expect(JSON.stringify(bad)).not.toContain("zzzz")
    expect(Layer.isLayer(one)).toBe(true)
  })
})
