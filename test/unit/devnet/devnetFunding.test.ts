// What the devnets hold from their first blocks: the ledger faucet with coins and DUSD (property
// 3), and on every EVM chain the four dollar ERC-20s at addresses fixed by the hot wallet.
import { Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { layerDevnet } from "../../../src/chain/evm/devnet.ts"
import { devnetTokenAddress, devnetTokenSymbols, devnetTokenSupplyWhole } from "../../../src/chain/evm/devnetTokens.ts"
import { EvmLedgers } from "../../../src/chain/evm/EvmLedger.ts"
import { devnetDollar, devnetFaucet, fundDevnetFaucet } from "../../../src/chain/ledger/devnetFaucet.ts"
import { makeUtxoDevnet } from "../../../src/chain/ledger/devnet.ts"
import { syncOnce } from "../../../src/chain/ledger/follower.ts"
import { OmniIndexer } from "../../../src/chain/omni/indexer.ts"
import { anvilDevKey } from "../../support/anvil.ts"
import { wallet } from "../chain-tx/fixtures.ts"

describe("ledger devnet faucet", () => {
  it("is funded at start, pays native coin and DUSD, and never spends a coin twice before a block", async () => {
    const devnet = makeUtxoDevnet()
    try {
      const ledger = devnet.ledger
      await Effect.runPromise(fundDevnetFaucet(ledger))
      const faucet = devnetFaucet(ledger)
      const to = wallet(7).address
      // Two payments without a block between them: the second must not reuse the first's coins.
      const a = await Effect.runPromise(faucet.pay(to, 150_000_000n))
      const b = await Effect.runPromise(faucet.pay(to, 250_000_000n))
      const dusd = await Effect.runPromise(faucet.omni({ type: "simpleSend", property: devnetDollar.propertyId, amount: 123_450_000n }, to))
      expect(new Set([a, b, dusd]).size).toBe(3)
      await Effect.runPromise(ledger.mine(1, faucet.address))
      const utxos = await Effect.runPromise(ledger.listUnspent([to]))
      expect(utxos.reduce((n, u) => n + u.value, 0n)).toBe(400_000_000n + ledger.params.dustSats)
      const indexer = new OmniIndexer({ params: ledger.params })
      await Effect.runPromise(syncOnce(ledger, indexer))
      expect(indexer.balance(to, devnetDollar.propertyId)).toBe(123_450_000n)
      // More than the faucet holds is a refusal, not a defect.
      const tooMuch = await Effect.runPromise(Effect.either(faucet.pay(to, 10n ** 15n)))
      expect(tooMuch._tag === "Left" && tooMuch.left._tag).toBe("WalletRefused")
    } finally {
      devnet.close()
    }
  })
})

describe("EVM devnet tokens", () => {
  it("deploys USDC, USDT, PYUSD, DAI at the hot wallet's nonces 0..3 with mainnet decimals (bsc USDC 18)", async () => {
    const found = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const ledgers = yield* Effect.provide(EvmLedgers, layerDevnet({ hotWalletKey: Redacted.make(anvilDevKey), tokens: true, chains: ["ethereum", "bsc"] }))
      const out: Record<string, number> = {}
      for (const chain of ["ethereum", "bsc"] as const) {
        const ledger = yield* ledgers.get(chain)
        for (const symbol of devnetTokenSymbols) {
          const token = devnetTokenAddress(ledger.hotWallet, symbol)
          const decimals = yield* ledger.tokenDecimals(token)
          out[`${chain}:${symbol}`] = decimals
          expect(yield* ledger.tokenBalance(token, ledger.hotWallet)).toBe(devnetTokenSupplyWhole * 10n ** BigInt(decimals))
        }
      }
      return out
    })))
    expect(found).toEqual({
      "ethereum:USDC": 6, "ethereum:USDT": 6, "ethereum:PYUSD": 6, "ethereum:DAI": 18,
      "bsc:USDC": 18, "bsc:USDT": 6, "bsc:PYUSD": 6, "bsc:DAI": 18
    })
  })
})
