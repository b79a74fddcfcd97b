// The token-decimals cache (src/chain/evm/TokenDecimals.ts): a contract's decimals() is read once
// per (chain, contract), whatever the address's case; another chain or contract is its own read;
// a failed read is not kept.
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { type EvmChain, EvmCallFailed, type EvmLedger, type EvmLedgersShape } from "../../../src/chain/evm/EvmLedger.ts"
import { makeTokenDecimals } from "../../../src/chain/evm/TokenDecimals.ts"

const USDC = "0x1111111111111111111111111111111111111111"
const DAI = "0x2222222222222222222222222222222222222222"

/** Ledgers whose tokenDecimals answers `answers[chain][contract]` and counts each read. */
const countingLedgers = (answers: Record<string, Record<string, number>>) => {
  const reads: Array<string> = []
  let failNext = false
  const ledger = (chain: EvmChain) => ({
    chain,
    tokenDecimals: (token: string) =>
      Effect.suspend(() => {
        reads.push(`${chain}:${token}`)
        if (failNext) {
          failNext = false
          return Effect.fail(new EvmCallFailed({ chain, to: token, function: "decimals", reason: "node away" }))
        }
        return Effect.succeed(answers[chain]![token.toLowerCase()]!)
      })
  }) as unknown as EvmLedger
  const ledgers: EvmLedgersShape = { chains: ["ethereum", "bsc"], get: (chain) => Effect.succeed(ledger(chain)) }
  return { ledgers, reads, failOnce: () => (failNext = true) }
}

describe("TokenDecimals", () => {
  it("reads a contract's decimals once per (chain, contract)", async () => {
    const { ledgers, reads } = countingLedgers({ ethereum: { [USDC]: 6, [DAI]: 18 }, bsc: { [USDC]: 18 } })
    const decimals = makeTokenDecimals(ledgers)
    const answers = await Effect.runPromise(Effect.all([
      decimals.of("ethereum", USDC),
      decimals.of("ethereum", USDC.toUpperCase().replace("0X", "0x")),
      decimals.of("ethereum", USDC),
      decimals.of("bsc", USDC),
      decimals.of("bsc", USDC),
      decimals.of("ethereum", DAI)
    ]))
    expect(answers).toEqual([6, 6, 6, 18, 18, 18])
    expect(reads).toEqual([`ethereum:${USDC}`, `bsc:${USDC}`, `ethereum:${DAI}`])
  })

  it("does not keep a failed read", async () => {
    const { ledgers, reads, failOnce } = countingLedgers({ ethereum: { [USDC]: 6 } })
    const decimals = makeTokenDecimals(ledgers)
    failOnce()
    expect(Either.isLeft(await Effect.runPromise(Effect.either(decimals.of("ethereum", USDC))))).toBe(true)
    expect(await Effect.runPromise(decimals.of("ethereum", USDC))).toBe(6)
    expect(await Effect.runPromise(decimals.of("ethereum", USDC))).toBe(6)
    expect(reads.length).toBe(2)
  })
})
