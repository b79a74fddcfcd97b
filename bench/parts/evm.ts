// EVM figures for `npm run bench -- chain` (bench/chain.ts prints and writes them): MockUSDC
// payouts through the devnet ledger end to end (balance check, dry run, viem signing, mempool
// checks, execution, a block each, as anvil's automine does) and through manual mining
// (everything but the block), then blocks of pending payouts mined per second.
import { Effect, Redacted } from "effect"
import { devnetLimits, makeDevnet } from "../../src/chain/evm/devnet.ts"
import type { EvmLedger } from "../../src/chain/evm/EvmLedger.ts"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"

/** Work per measurement; enough for a stable rate, small enough to keep the bench short. */
const PAYOUTS = 300
const WARMUP = 20
/** anvil's first default account: a public test key; the devnet funds it. */
const HOT_WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / Math.max(ms, 1e-3))

const setup = (ledger: EvmLedger) =>
  Effect.gen(function*() {
    const token = yield* deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals: 6 })
    yield* mintMockUsdc(ledger, token, ledger.hotWallet, 10n ** 15n)
    return token
  })

const payouts = (ledger: EvmLedger, token: string, n: number) =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => ledger.erc20Transfer(token, USER, BigInt(1 + i)), { discard: true })

const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    yield* effect
    return performance.now() - t0
  })

export const measureEvm = async (): Promise<Array<{ metric: string; perSecond: number }>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const hotWalletKey = Redacted.make(HOT_WALLET_KEY)
        const auto = yield* makeDevnet({ chain: "base", hotWalletKey, mining: { mode: "auto" } })
        const autoToken = yield* setup(auto.ledger)
        yield* payouts(auto.ledger, autoToken, WARMUP)
        const autoMs = yield* timed(payouts(auto.ledger, autoToken, PAYOUTS))

        const manual = yield* makeDevnet({ chain: "ethereum", hotWalletKey, mining: { mode: "manual" } })
        const manualToken = yield* setup(manual.ledger)
        const sendMs = yield* timed(payouts(manual.ledger, manualToken, PAYOUTS))
        const before = yield* manual.ledger.blockNumber
        const mineMs = yield* timed(
          Effect.whileLoop({
            while: () => Effect.runSync(manual.node.pendingCount) > 0,
            body: () => manual.ledger.mine(1),
            step: () => undefined
          })
        )
        const blocks = Number((yield* manual.ledger.blockNumber) - before)
        if ((yield* manual.ledger.tokenBalance(manualToken, USER)) !== BigInt((PAYOUTS * (PAYOUTS + 1)) / 2)) {
          return yield* Effect.dieMessage("bench payouts did not all land")
        }
        return [
          { metric: "devnet ERC-20 payouts, a block each (sign+check+execute+mine)", perSecond: perSecond(PAYOUTS, autoMs) },
          { metric: "devnet ERC-20 payouts sent (pending, no block)", perSecond: perSecond(PAYOUTS, sendMs) },
          { metric: "devnet ERC-20 transfers mined from the mempool", perSecond: perSecond(PAYOUTS, mineMs) },
          { metric: `devnet blocks mined with payouts (up to ${devnetLimits.blockTxsMax} txs each)`, perSecond: perSecond(blocks, mineMs) }
        ]
      })
    )
  )
