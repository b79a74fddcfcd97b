// The EvmLedger contract through viem against real anvil nodes (chain ids 1, 8453, 56, and one
// with --no-mining), plus what only a real node adapter can get wrong: the chain id check,
// `mine` on a node that is not a devnet, and a node that is down.
import { Effect, Exit, Redacted } from "effect"
import { createTestClient, http, publicActions } from "viem"
import { afterAll, describe, expect, it } from "vitest"
import { evmChains } from "../../src/chain/evm/chains.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { evmLedgerContract, testScanBlocksMax } from "../support/evmLedgerContract.ts"
import { freePort } from "../../harness/ports.ts"

const started: Anvil[] = []
const hotWalletKey = Redacted.make(anvilDevKey)

afterAll(async () => {
  await Promise.all(started.map((a) => a.stop()))
})

const anvil = async (chainId: number, noMining = false): Promise<Anvil> => {
  const a = await startAnvil({ chainId, noMining })
  started.push(a)
  return a
}

evmLedgerContract("viem + anvil", async (chain, mining) => {
  const node = await anvil(evmChains[chain].chainId, mining === "manual")
  const ledger = await Effect.runPromise(
    makeViemLedger({ chain, rpcUrl: node.url, hotWalletKey, devRpc: "anvil", scanBlocksMax: testScanBlocksMax })
  )
  // The user's side talks to anvil directly, as the user's wallet would.
  const client = createTestClient({ mode: "anvil", transport: http(node.url) }).extend(publicActions)
  return {
    ledger,
    sendRaw: (raw) => client.sendRawTransaction({ serializedTransaction: raw }),
    fund: (address, wei) => client.setBalance({ address, value: wei }),
    nonce: (address) => client.getTransactionCount({ address, blockTag: "pending" }),
    close: node.stop
  }
})

describe("viem adapter on real nodes", () => {
  it("refuses a node that serves another chain id", async () => {
    const node = await anvil(8453)
    const exit = await Effect.runPromiseExit(makeViemLedger({ chain: "bsc", rpcUrl: node.url, hotWalletKey }))
    expect(exit).toStrictEqual(Exit.fail(expect.anything()))
    const error = Exit.isFailure(exit) ? exit.cause : undefined
    expect(JSON.stringify(error)).toContain("EvmChainMismatch")
    expect(JSON.stringify(error)).toContain("8453")
  })

  it("mine is EvmUnsupported unless the node is declared a devnet", async () => {
    const node = await anvil(1)
    const ledger = await Effect.runPromise(makeViemLedger({ chain: "ethereum", rpcUrl: node.url, hotWalletKey }))
    const e = await Effect.runPromise(Effect.flip(ledger.mine(1)))
    expect(e._tag).toBe("EvmUnsupported")
  })

  it("a node that is down is a typed EvmRpcError, not a defect", async () => {
    const url = `http://127.0.0.1:${await freePort()}`
    const e = await Effect.runPromise(Effect.flip(makeViemLedger({ chain: "base", rpcUrl: url, hotWalletKey, rpcTimeoutMs: 2_000 })))
    expect(e._tag).toBe("EvmRpcError")
  })

  it("stop leaves no anvil behind", async () => {
    const node = await startAnvil({ chainId: 56 })
    await node.stop()
    expect(() => process.kill(node.pid, 0)).toThrow()
  })
})
