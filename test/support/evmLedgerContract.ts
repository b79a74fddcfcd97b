// The EvmLedger contract: every implementation (in-process devnet, viem against anvil) must pass
// these tests. A file calls `evmLedgerContract(name, factory)`; the factory builds a ledger for
// a chain whose hot wallet has native coin for gas. The suite deploys MockUSDC itself.
import { Cause, Effect, Exit, Option } from "effect"
import { encodeFunctionData, erc20Abi, keccak256, type Address, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { evmChains, type EvmChain } from "../../src/chain/evm/chains.ts"
import type { EvmLedger, EvmLedgerError } from "../../src/chain/evm/EvmLedger.ts"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"

export interface EvmLedgerHarness {
  readonly ledger: EvmLedger
  /** The node's own door, for what the hot wallet never does: a user's transaction. */
  readonly sendRaw: (raw: Hex) => Promise<string>
  /** Sets the native balance of an address (wei), so a user can pay gas. */
  readonly fund: (address: Address, wei: bigint) => Promise<void>
  readonly nonce: (address: Address) => Promise<number>
  readonly close: () => Promise<void>
}

/** What the factories pass as `scanBlocksMax`, small so the cut is tested without thousands of blocks. */
export const testScanBlocksMax = 64n

/** `auto`: a block per transaction (anvil's default). `manual`: blocks only on `mine`. */
export type ContractMining = "auto" | "manual"

export type EvmLedgerFactory = (chain: EvmChain, mining: ContractMining) => Promise<EvmLedgerHarness>

/** Decimals the tests deploy with: USDC has 6 on Ethereum and Base, Binance-Peg USDC 18 on BSC. */
export const testDecimals: Readonly<Record<EvmChain, number>> = { ethereum: 6, base: 6, bsc: 18 }

/** anvil's second default account (a public test key): the user who received the payout. */
const USER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
const USER: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const DEPOSIT: Address = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
const USER2: Address = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
const ZERO: Address = "0x0000000000000000000000000000000000000000"

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)

/** The typed failure of an effect; fails the test if it succeeded or died (a defect is a bug here). */
const failure = async <A, E>(effect: Effect.Effect<A, E>): Promise<E> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a typed failure, got success: ${String(exit.value)}`)
  const error = Cause.failureOption(exit.cause)
  if (Option.isNone(error)) throw new Error(`expected a typed failure, got a defect: ${Cause.pretty(exit.cause)}`)
  return error.value
}

/** Auto mining is asynchronous on a real node (anvil answers the send before it mines): poll. */
const MINED_WAIT_MS = 5_000
const untilMined = async (ledger: EvmLedger, hash: string): Promise<void> => {
  const deadline = Date.now() + MINED_WAIT_MS
  while ((await run(ledger.txStatus(hash))).kind === "pending") {
    if (Date.now() > deadline) throw new Error(`${hash} not mined within ${MINED_WAIT_MS} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const untilMinedOrFailed = async (ledger: EvmLedger, hash: string): Promise<void> => {
  const deadline = Date.now() + MINED_WAIT_MS
  while (Exit.match(await Effect.runPromiseExit(ledger.txStatus(hash)), { onFailure: () => false, onSuccess: (s) => s.kind === "pending" })) {
    if (Date.now() > deadline) throw new Error(`${hash} not mined within ${MINED_WAIT_MS} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

export const evmLedgerContract = (
  implementation: string,
  factory: EvmLedgerFactory,
  chains: ReadonlyArray<EvmChain> = ["ethereum", "base", "bsc"]
): void => {
  describe.each(chains)(`EvmLedger contract (${implementation}) on %s`, (chain) => {
    const decimals = testDecimals[chain]
    const unit = 10n ** BigInt(decimals)
    /** 123.45 tokens in the smallest unit. */
    const payout = (12_345n * unit) / 100n
    const minted = 1_000n * unit
    let h: EvmLedgerHarness
    let ledger: EvmLedger
    let token: Address

    beforeAll(async () => {
      h = await factory(chain, "auto")
      ledger = h.ledger
      token = await run(deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals }))
      await run(mintMockUsdc(ledger, token, ledger.hotWallet, minted))
    })
    afterAll(async () => {
      await h?.close()
    })

    it("reports the chain's id", async () => {
      expect(await run(ledger.chainId)).toBe(evmChains[chain].chainId)
    })

    it("reads decimals from the contract", async () => {
      expect(await run(ledger.tokenDecimals(token))).toBe(decimals)
      expect(await run(ledger.tokenBalance(token, ledger.hotWallet))).toBe(minted)
    })

    let paidHash: string
    let paidBlock: bigint

    it("pays 123.45 from the hot wallet; the hash is keccak of the signed bytes and confirmations rise with blocks", async () => {
      const before = await run(ledger.blockNumber)
      paidHash = await run(ledger.erc20Transfer(token, USER.toLowerCase(), payout))
      expect(paidHash).toMatch(/^0x[0-9a-f]{64}$/)
      await untilMined(ledger, paidHash)
      expect(await run(ledger.tokenBalance(token, USER))).toBe(payout)
      expect(await run(ledger.tokenBalance(token, ledger.hotWallet))).toBe(minted - payout)
      expect(await run(ledger.confirmations(paidHash))).toBe(1)
      const status = await run(ledger.txStatus(paidHash))
      expect(status.kind).toBe("mined")
      paidBlock = status.kind === "mined" ? status.blockNumber : -1n
      expect(paidBlock).toBe(before + 1n)
      await run(ledger.mine(2))
      expect(await run(ledger.confirmations(paidHash))).toBe(3)
      expect(await run(ledger.blockNumber)).toBe(paidBlock + 2n)
    })

    let cursor: bigint

    it("scans Transfer logs by block range, with filters", async () => {
      const head = await run(ledger.blockNumber)
      const all = await run(ledger.transfers(token, 0n, head))
      expect(all.toBlock).toBe(head)
      expect(all.nextBlock).toBe(head + 1n)
      expect(all.logs.map((l) => [l.from, l.to, l.value])).toEqual([
        [ZERO, ledger.hotWallet, minted],
        [ledger.hotWallet, USER, payout]
      ])
      const paid = all.logs[1]!
      expect(paid.txHash).toBe(paidHash)
      expect(paid.blockNumber).toBe(paidBlock)
      expect(paid.token.toLowerCase()).toBe(token.toLowerCase())

      const toUser = await run(ledger.transfers(token, 0n, head, { to: USER }))
      expect(toUser.logs.map((l) => l.txHash)).toEqual([paidHash])
      const fromZero = await run(ledger.transfers(token, 0n, head, { from: [ZERO, USER2] }))
      expect(fromZero.logs.map((l) => l.value)).toEqual([minted])
      // The payout block alone, and the block before it, split the logs exactly.
      expect((await run(ledger.transfers(token, paidBlock, paidBlock))).logs).toHaveLength(1)
      expect((await run(ledger.transfers(token, 0n, paidBlock - 1n))).logs).toHaveLength(1)
      cursor = all.nextBlock
    })

    it("restarts a scan from a saved cursor and finds only new transfers", async () => {
      const empty = await run(ledger.transfers(token, cursor, cursor + 100n))
      expect(empty.logs).toEqual([])
      expect(empty.nextBlock).toBe(cursor) // nothing mined past the cursor: resume at the same block
      const second = await run(ledger.erc20Transfer(token, USER2, 7n))
      await untilMined(ledger, second)
      const head = await run(ledger.blockNumber)
      const resumed = await run(ledger.transfers(token, cursor, head + 1_000n))
      expect(resumed.toBlock).toBe(head) // never past the head
      expect(resumed.logs.map((l) => [l.txHash, l.to, l.value])).toEqual([[second, USER2, 7n]])
      const again = await run(ledger.transfers(token, resumed.nextBlock, resumed.nextBlock + 10n))
      expect(again.logs).toEqual([])
    })

    it("cuts a range longer than scanBlocksMax and says where to resume", async () => {
      expect(ledger.scanBlocksMax).toBe(testScanBlocksMax)
      await run(ledger.mine(Number(ledger.scanBlocksMax) + 10))
      const head = await run(ledger.blockNumber)
      const first = await run(ledger.transfers(token, 0n, head))
      expect(first.toBlock).toBe(ledger.scanBlocksMax - 1n)
      expect(first.nextBlock).toBe(ledger.scanBlocksMax)
      expect(first.logs.map((l) => l.to)).toEqual([ledger.hotWallet, USER, USER2])
      const rest = await run(ledger.transfers(token, first.nextBlock, head))
      expect(rest.toBlock).toBe(head)
      expect(rest.logs).toEqual([])
    })

    it("refuses a payout above the balance with a typed error, sending nothing", async () => {
      const balance = await run(ledger.tokenBalance(token, ledger.hotWallet))
      const head = await run(ledger.blockNumber)
      const e = await failure(ledger.erc20Transfer(token, USER, balance + 1n))
      expect(e._tag).toBe("EvmInsufficientTokenBalance")
      if (e._tag === "EvmInsufficientTokenBalance") {
        expect(e.balance).toBe(balance)
        expect(e.amount).toBe(balance + 1n)
        expect(e.chain).toBe(chain)
      }
      expect(await run(ledger.blockNumber)).toBe(head)
      expect(await run(ledger.tokenBalance(token, ledger.hotWallet))).toBe(balance)
    })

    it("a send the contract would revert is rejected by the dry run, with the decoded reason", async () => {
      const balance = await run(ledger.tokenBalance(token, ledger.hotWallet))
      const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [USER, balance + 1n] })
      const e = await failure(ledger.sendTransaction({ to: token, data }))
      expect(e._tag).toBe("EvmTxRejected")
      if (e._tag === "EvmTxRejected") expect(e.reason).toContain("InsufficientBalance")
    })

    it("a user's own transfer to a deposit address is found by the scan; a user's reverted one is EvmTxFailed", async () => {
      const user = privateKeyToAccount(USER_KEY)
      await h.fund(user.address, 10n ** 18n)
      const head = await run(ledger.blockNumber)
      const sign = async (amount: bigint) =>
        user.signTransaction({
          chainId: evmChains[chain].chainId,
          type: "eip1559",
          nonce: await h.nonce(user.address),
          to: token,
          data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [DEPOSIT, amount] }),
          // Fixed gas: a wallet that skips the estimate still gets its revert mined.
          gas: 100_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n
        })
      const deposit = await h.sendRaw(await sign(payout / 5n))
      await untilMined(ledger, deposit)
      const scan = await run(ledger.transfers(token, head + 1n, head + 10n, { to: [USER2, DEPOSIT] }))
      expect(scan.logs.map((l) => [l.from, l.to, l.value, l.txHash])).toEqual([[USER, DEPOSIT, payout / 5n, deposit]])

      const tooMuch = await h.sendRaw(await sign(payout))
      await untilMinedOrFailed(ledger, tooMuch)
      const e = await failure(ledger.confirmations(tooMuch))
      expect(e._tag).toBe("EvmTxFailed")
      if (e._tag === "EvmTxFailed") {
        expect(e.reason).toBe("reverted")
        expect(e.blockNumber).toBeGreaterThan(head)
      }
      expect(await run(ledger.tokenBalance(token, DEPOSIT))).toBe(payout / 5n)
    })

    it("bad input is a typed EvmInvalidInput naming the field", async () => {
      const cases: Array<Effect.Effect<unknown, EvmLedgerError>> = [
        ledger.erc20Transfer(token, "0x1234", 1n),
        ledger.erc20Transfer(token, "0x70997970C51812dc3A010C7d01b50e0d17dc79c8", 1n), // one letter's case flipped
        ledger.erc20Transfer(token, ZERO, 1n),
        ledger.erc20Transfer("not an address", USER, 1n),
        ledger.erc20Transfer(token, USER, 0n),
        ledger.erc20Transfer(token, USER, -5n),
        ledger.confirmations("0xdead"),
        ledger.transfers(token, 10n, 9n),
        ledger.transfers(token, -1n, 9n),
        ledger.transfers(token, 0n, 9n, { to: [] }),
        ledger.mine(0)
      ]
      const fields: string[] = []
      for (const c of cases) {
        const e = await failure(c)
        expect(e._tag).toBe("EvmInvalidInput")
        if (e._tag === "EvmInvalidInput") fields.push(e.field)
      }
      expect(fields).toEqual(["to", "to", "to", "token", "amount", "amount", "hash", "toBlock", "fromBlock", "filter.to", "blocks"])
    })

    it("an unknown hash is EvmTxNotFound; decimals of a non-contract is EvmCallFailed", async () => {
      const unknown = keccak256("0x01")
      expect((await failure(ledger.confirmations(unknown)))._tag).toBe("EvmTxNotFound")
      expect((await failure(ledger.tokenDecimals(USER)))._tag).toBe("EvmCallFailed")
    })
  })

  describe(`EvmLedger contract (${implementation}) with manual mining`, () => {
    let h: EvmLedgerHarness
    beforeAll(async () => {
      h = await factory("ethereum", "manual")
    })
    afterAll(async () => {
      await h?.close()
    })

    it("a sent payout is pending (0 confirmations) until a block is mined; pending nonces chain", async () => {
      const ledger = h.ledger
      const token = await run(deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals: 6 }))
      await run(mintMockUsdc(ledger, token, ledger.hotWallet, 1_000_000n))
      const head = await run(ledger.blockNumber)
      const a = await run(ledger.erc20Transfer(token, USER, 100n))
      const b = await run(ledger.erc20Transfer(token, USER2, 200n))
      expect(await run(ledger.confirmations(a))).toBe(0)
      expect((await run(ledger.txStatus(b))).kind).toBe("pending")
      expect(await run(ledger.blockNumber)).toBe(head)
      expect((await run(ledger.transfers(token, head + 1n, head + 10n))).logs).toEqual([])
      await run(ledger.mine(1))
      expect(await run(ledger.confirmations(a))).toBe(1)
      expect(await run(ledger.confirmations(b))).toBe(1)
      const scan = await run(ledger.transfers(token, head + 1n, head + 1n))
      expect(scan.logs.map((l) => [l.txHash, l.value])).toEqual([[a, 100n], [b, 200n]])
    })

    it("the balance check counts pending payouts: two that fit alone but not together, the second is refused", async () => {
      const ledger = h.ledger
      const token = await run(deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals: 6 }))
      await run(mintMockUsdc(ledger, token, ledger.hotWallet, 100n))
      const a = await run(ledger.erc20Transfer(token, USER, 60n))
      const e = await failure(ledger.erc20Transfer(token, USER2, 60n))
      expect(e._tag).toBe("EvmInsufficientTokenBalance")
      if (e._tag === "EvmInsufficientTokenBalance") expect(e.balance).toBe(40n)
      // The latest (mined) view still shows 100 until the block is mined.
      expect(await run(ledger.tokenBalance(token, ledger.hotWallet))).toBe(100n)
      await run(ledger.mine(1))
      expect(await run(ledger.confirmations(a))).toBe(1)
      expect(await run(ledger.tokenBalance(token, ledger.hotWallet))).toBe(40n)
    })
  })
}
