// erc20TransferRecorded on the in-process devnet: the signed bytes (with their hash and nonce) reach
// `record` before the node has the transaction; a failing `record` sends nothing; sendRaw sends
// recorded bytes again and the chain has one transaction, not two.
import { Effect, Redacted } from "effect"
import { keccak256 } from "viem"
import { describe, expect, it } from "vitest"
import { makeDevnetLedger } from "../../../src/chain/evm/devnet.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../../src/chain/evm/devnetTokens.ts"
import type { SignedEvmTx } from "../../../src/chain/evm/EvmLedger.ts"

const key = Redacted.make("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
const to = "0x52908400098527886E0F7030069857D2E4169EE7"

const withLedger = <A, E>(f: (ledger: Effect.Effect.Success<ReturnType<typeof makeDevnetLedger>>) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const ledger = yield* makeDevnetLedger({ chain: "base", hotWalletKey: key })
    yield* deployDevnetTokens(ledger)
    return yield* f(ledger)
  })))

describe("erc20TransferRecorded", () => {
  it("records the signed bytes before they are sent; resending them makes no second transfer", async () => {
    const seen = await withLedger((ledger) => Effect.gen(function*() {
      const usdc = devnetTokenAddress(ledger.hotWallet, "USDC")
      let recorded: SignedEvmTx | undefined
      let knownAtRecord: string | undefined
      const hash = yield* ledger.erc20TransferRecorded(usdc, to, 5_000_000n, (signed) =>
        Effect.gen(function*() {
          recorded = signed
          knownAtRecord = yield* ledger.txStatus(signed.hash).pipe(Effect.map((s) => s.kind), Effect.catchAll((e) => Effect.succeed(e._tag)))
        }))
      const again = yield* ledger.sendRaw(recorded!.raw).pipe(Effect.either)
      return { hash, recorded: recorded!, knownAtRecord, balance: yield* ledger.tokenBalance(usdc, to), again }
    }))
    expect(seen.knownAtRecord).toBe("EvmTxNotFound")
    expect(seen.hash).toBe(seen.recorded.hash)
    expect(keccak256(seen.recorded.raw)).toBe(seen.hash)
    expect(seen.recorded.nonce).toBeGreaterThan(0)
    expect(seen.balance).toBe(5_000_000n)
  })

  it("sends nothing when recording fails", async () => {
    const r = await withLedger((ledger) => Effect.gen(function*() {
      const usdc = devnetTokenAddress(ledger.hotWallet, "USDC")
      const failed = yield* ledger.erc20TransferRecorded(usdc, to, 1n, () => Effect.fail("database down" as const)).pipe(Effect.either)
      return { failed, balance: yield* ledger.tokenBalance(usdc, to) }
    }))
    expect(r.failed._tag).toBe("Left")
    expect(r.balance).toBe(0n)
  })
})
