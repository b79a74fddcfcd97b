// sendRecorded on the in-process devnet: a native top-up from the hot wallet, then a token
// transfer signed by another key (a deposit address's) whose fee is capped to what it holds; each
// signed tx reaches `record` (with its sender and nonce) before the node has it. A guard chooses
// the nonce and wraps the step. feesWithin, the cap, alone.
import { Effect, Redacted } from "effect"
import { encodeFunctionData, erc20Abi, hexToBytes } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { makeDevnetLedger } from "../../../src/chain/evm/devnet.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../../src/chain/evm/devnetTokens.ts"
import type { SignedEvmTx } from "../../../src/chain/evm/EvmLedger.ts"
import { feesWithin } from "../../../src/chain/evm/internal/ledger.ts"
import type { NonceGuard } from "../../../src/chain/evm/nonceGuard.ts"

const key = Redacted.make("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")

describe("sendRecorded", () => {
  it("tops up an address from the hot wallet, then sends its token with its own key, fee within its balance", async () => {
    const depositKey = generatePrivateKey()
    const deposit = privateKeyToAccount(depositKey).address
    const back = privateKeyToAccount(generatePrivateKey()).address
    const seen = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const ledger = yield* makeDevnetLedger({ chain: "base", hotWalletKey: key })
      yield* deployDevnetTokens(ledger)
      const usdc = devnetTokenAddress(ledger.hotWallet, "USDC")
      yield* ledger.erc20Transfer(usdc, deposit, 7_000_000n)
      const recorded: Array<SignedEvmTx & { readonly knownAtRecord: string }> = []
      const record = (signed: SignedEvmTx) =>
        Effect.map(ledger.txStatus(signed.hash).pipe(Effect.map((s) => s.kind), Effect.catchAll((e) => Effect.succeed(e._tag))), (knownAtRecord) => {
          recorded.push({ ...signed, knownAtRecord })
        })
      const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [back, 7_000_000n] })
      const estimate = yield* ledger.estimateSend({ from: deposit, to: usdc, data })
      const topUp = estimate.gas * estimate.maxFeePerGas * 2n
      // A guard that runs the step as is and signs at the node's pending nonce, counting its calls.
      const calls: Array<string> = []
      const guard: NonceGuard<never> = {
        serialize: (sender, self) => Effect.zipRight(Effect.sync(() => calls.push(`serialize ${sender}`)), self),
        nonce: (sender, pending) => Effect.sync(() => (calls.push(`nonce ${sender} ${pending}`), pending))
      }
      yield* ledger.sendRecorded({ to: deposit, value: topUp }, record, guard)
      const budget = yield* ledger.nativeBalance(deposit)
      const hash = yield* ledger.sendRecorded({ to: usdc, data, signerKey: hexToBytes(depositKey), feeBudgetWei: budget }, record, guard)
      yield* ledger.mine(1)
      return {
        recorded, calls, topUp, budget, hash,
        status: (yield* ledger.txStatus(hash)).kind,
        backBalance: yield* ledger.tokenBalance(usdc, back),
        depositBalance: yield* ledger.tokenBalance(usdc, deposit),
        hot: ledger.hotWallet
      }
    })))
    expect(seen.budget).toBe(seen.topUp)
    expect(seen.recorded.map((r) => [r.from, r.nonce, r.knownAtRecord])).toEqual([[seen.hot, expect.any(Number), "EvmTxNotFound"], [deposit, 0, "EvmTxNotFound"]])
    expect(seen.recorded[1]!.hash).toBe(seen.hash)
    expect(seen.calls).toEqual([`serialize ${seen.hot}`, expect.stringMatching(new RegExp(`^nonce ${seen.hot} \\d+$`)), `serialize ${deposit}`, `nonce ${deposit} 0`])
    expect(seen.status).toBe("mined")
    expect([seen.backBalance, seen.depositBalance]).toEqual([7_000_000n, 0n])
  })

  it("caps the max fee so gas × fee fits the budget, the priority fee never above it", () => {
    const fields = { nonce: 0, gas: 50_000n, maxFeePerGas: 10n, maxPriorityFeePerGas: 2n }
    expect(feesWithin(fields, undefined)).toEqual({ maxFeePerGas: 10n, maxPriorityFeePerGas: 2n })
    expect(feesWithin(fields, 500_000n)).toEqual({ maxFeePerGas: 10n, maxPriorityFeePerGas: 2n })
    expect(feesWithin(fields, 300_000n)).toEqual({ maxFeePerGas: 6n, maxPriorityFeePerGas: 2n })
    expect(feesWithin(fields, 50_000n)).toEqual({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n })
  })
})
