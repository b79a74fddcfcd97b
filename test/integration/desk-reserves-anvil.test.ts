// The reserves scan against real EVM nodes (anvil for ethereum and bsc) with test ERC-20s
// deployed for the occasion and named in SHARDLINE_EVM_TOKEN_CONTRACTS: balances of the desk's
// vaults are read with the decimals each contract reports (6 on ethereum's USDC, 18 on bsc's
// USDC and on DAI), ETH from the node, and the sum is exact.
import { Effect, Layer, Redacted } from "effect"
import type { Address } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import * as ReserveScanner from "../../src/desk/reserves/ReserveScanner.ts"
import * as DeskWallets from "../../src/desk/wallets/DeskWallets.ts"
import * as ChainsLive from "../../src/platform/ChainsLive.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import * as OmniViewIndexer from "../../src/platform/ledger/OmniViewIndexer.ts"
import * as SecretBox from "../../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { startAll } from "../support/processes.ts"
import { runWithDb } from "../support/services.ts"
import { registerDefaults } from "../../src/desk/tokens/tokenStore.ts"

let ethereum: Anvil
let bsc: Anvil
let db: TestDatabase

beforeAll(async () => {
  ;[ethereum, bsc] = await startAll([startAnvil({ chainId: 1 }), startAnvil({ chainId: 56 })])
  db = await createTestDatabase("deskanvil")
}, 60_000)
afterAll(async () => {
  await Promise.all([ethereum?.stop(), bsc?.stop()])
  await db?.drop()
})

const deploy = (anvil: Anvil, chain: "ethereum" | "bsc", symbol: string, decimals: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const ledger = yield* makeViemLedger({ chain, rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" })
    const address = yield* deployMockUsdc(ledger, { name: symbol, symbol, decimals })
    return { address, mint: (to: string, amount: bigint) => Effect.runPromise(mintMockUsdc(ledger, address, to as Address, amount)) }
  }))

describe("reserves scan over anvil", () => {
  it("reads configured ERC-20s with each contract's decimals and ETH from the node", { timeout: 120_000 }, async () => {
    const usdcEth = await deploy(ethereum, "ethereum", "USDC", 6)
    const daiEth = await deploy(ethereum, "ethereum", "DAI", 18)
    const usdcBsc = await deploy(bsc, "bsc", "USDC", 18)
    const vars = {
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      SHARDLINE_EVM_RPC_URLS: `ethereum=${ethereum.url},bsc=${bsc.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey,
      SHARDLINE_EVM_TOKEN_CONTRACTS: `ethereum:USDC=${usdcEth.address},ethereum:DAI=${daiEth.address},bsc:USDC=${usdcBsc.address}`
    }
    const layer = ReserveScanner.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(DeskWallets.layer, OmniViewIndexer.layer)),
      Layer.provideMerge(ChainsLive.layer),
      Layer.provideMerge(SecretBox.layer),
      Layer.provideMerge(databaseLayer({ applicationName: "test:desk-anvil", migrations })),
      Layer.provideMerge(configLayer(configFrom(vars)))
    )
    const run = <A>(effect: Effect.Effect<A, never, ReserveScanner.ReserveScanner | DeskWallets.DeskWallets>) =>
      Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))
    const vaults = await run(Effect.map(DeskWallets.DeskWallets, (w) => w.vaults))
    const cold = vaults.find((v) => v.chain === "ethereum" && v.group === "cold")!.address
    const hot = vaults.find((v) => v.chain === "bsc" && v.group === "hot")!.address
    await usdcEth.mint(cold, 1_234_567n) // 1.234567 USDC
    await daiEth.mint(cold, 5n * 10n ** 17n) // 0.5 DAI
    await usdcBsc.mint(hot, 2n * 10n ** 18n + 1n) // 2.000000000000000001 USDC
    await fetch(ethereum.url, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [cold, "0xde0b6b3a7640000"] }) // 1 ETH
    })
    // The registry (no properties on a real ledger yet): wETH is then backed by the ETH found.
    await runWithDb(db.url, registerDefaults)
    const { report } = await run(Effect.flatMap(ReserveScanner.ReserveScanner, (s) => s.scan))
    expect(report.breakdown.byChain["ethereum"]).toEqual({ DAI: "0.5", ETH: "1", USDC: "1.234567" })
    expect(report.breakdown.byChain["bsc"]).toEqual({ USDC: "2.000000000000000001" })
    expect(report.totalReserves).toBe("3.734567000000000001")
    expect(report.coldHot).toEqual({ cold: "1.734567", hot: "2.000000000000000001", deposits: "0" })
    expect(report.wrapped.find((w) => w.wrapped === "wETH")).toEqual({ asset: "ETH", wrapped: "wETH", propertyId: null, reserves: "1", wrappedSupply: "0", collateralization: null })
  })
})
