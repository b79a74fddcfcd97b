// Native-coin payments on the in-process EVM devnet: `nativeTransfer` hands the signed bytes to
// `record` before the node has them and pays exactly the value; `nativeTransfers` finds the
// successful payments to watched addresses by block, and not a payment whose transaction
// reverted (ETH sent to a contract that takes none), nor payments to other addresses.
import { Effect, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { makeDevnet } from "../../../src/chain/evm/devnet.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../../src/chain/evm/devnetTokens.ts"
import { evmChains } from "../../../src/chain/evm/chains.ts"
import type { SignedEvmTx } from "../../../src/chain/evm/EvmLedger.ts"

const key = Redacted.make("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")

describe("native transfers on the EVM devnet", () => {
  it("records a native payment before sending it, and scans blocks for successful payments to watched addresses", async () => {
    const watched = privateKeyToAccount(generatePrivateKey()).address
    const other = privateKeyToAccount(generatePrivateKey()).address
    const customer = privateKeyToAccount(generatePrivateKey())
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { ledger, node } = yield* makeDevnet({ chain: "ethereum", hotWalletKey: key })
      yield* deployDevnetTokens(ledger)
      const usdc = devnetTokenAddress(ledger.hotWallet, "USDC")
      const from = (yield* ledger.blockNumber) + 1n
      let knownAtRecord: string | undefined
      let recorded: SignedEvmTx | undefined
      const paid = yield* ledger.nativeTransfer(watched, 7n * 10n ** 17n, (signed) =>
        Effect.gen(function*() {
          recorded = signed
          knownAtRecord = yield* ledger.txStatus(signed.hash).pipe(Effect.map((s) => s.kind), Effect.catchAll((e) => Effect.succeed(e._tag)))
        }))
      yield* ledger.nativeTransfer(other, 1n)
      // A customer's own transaction sending ETH to the USDC contract (not payable): mined, reverted.
      yield* node.setBalance(customer.address, 10n ** 18n)
      const raw = yield* Effect.promise(() => customer.signTransaction({
        chainId: evmChains.ethereum.chainId, type: "eip1559", to: usdc, value: 5n, gas: 100_000n,
        nonce: 0, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n
      }))
      const reverted = yield* node.sendRawTransaction(raw)
      const revertedStatus = yield* ledger.txStatus(reverted).pipe(Effect.map((s) => s.kind), Effect.catchAll((e) => Effect.succeed(e._tag)))
      const second = yield* ledger.nativeTransfer(watched, 3n)
      const head = yield* ledger.blockNumber
      const scan = yield* ledger.nativeTransfers(from, head + 5n, [watched, usdc])
      const none = yield* ledger.nativeTransfers(head + 1n, head + 1n, [watched])
      const bad = yield* Effect.either(ledger.nativeTransfers(from, head, ["0x1234"]))
      return { paid, second, recorded: recorded!, knownAtRecord, revertedStatus, scan, head, none, bad, balance: yield* ledger.nativeBalance(watched) }
    })))
    expect(out.knownAtRecord).toBe("EvmTxNotFound")
    expect(out.recorded.hash).toBe(out.paid)
    expect(out.balance).toBe(7n * 10n ** 17n + 3n)
    expect(out.revertedStatus).toBe("EvmTxFailed")
    expect(out.scan.transfers.map((t) => [t.txHash, t.value])).toEqual([[out.paid, 7n * 10n ** 17n], [out.second, 3n]])
    expect(out.scan.nextBlock).toBe(out.head + 1n)
    expect(out.none).toEqual({ transfers: [], nextBlock: out.head + 1n })
    expect(out.bad._tag).toBe("Left")
  })
})
