// The demo world a devnet node makes by itself (docs/exchange.md, "Markets and the demo world"):
// the market assets as Omni properties on the ledger devnet, issued by the asset issuer, and on
// the first start (no market listed yet) the default markets. The devnet is in memory and starts
// from genesis with every process while Postgres persists, so at every devnet start the
// registered assets are re-issued in property-id order and must get their ids back; a node whose
// registry does not match refuses to start. On a real ledger node nothing is created.
//
// Several nodes starting together take turns under one advisory lock; each has its own devnet
// (SHARDLINE_DEVNET_PER_NODE) and re-issues on it what the first one registered.
import { SqlClient } from "@effect/sql"
import { type ConfigError, Effect, Layer } from "effect"
import { devnetDollar } from "../../chain/ledger/devnetFaucet.ts"
import { AppConfig } from "../../platform/Config.ts"
import { invalidSetting } from "../../platform/settings.ts"
import { DevnetChains } from "../../platform/devnet/DevnetChains.ts"
import { realNodeSetting } from "../../platform/devnet/realNode.ts"
import { withDevnetWorldLock } from "../../platform/devnet/worldLock.ts"
import type { SecretBox } from "../../platform/SecretBox.ts"
import { checkMasterKey } from "../auth/ApiKeys.ts"
import { ASSET_DECIMALS, type NewMarket } from "./marketSpec.ts"
import { addAsset, addMarket, listAssets, listMarkets } from "./marketStore.ts"

/** The assets the demo world issues (8 decimals each), in this order, beside DUSD (property 3). */
export const demoAssetCodes = ["SHRD", "GOLD"] as const

/**
 * The markets listed on a first start. Binance-like filters: a tick and a lot whose decimals add
 * up to at most 8, so every notional is whole satoshis of DUSD.
 */
export const demoMarkets: ReadonlyArray<NewMarket & { readonly symbol: string }> = [
  { symbol: "SHRDDUSD", base: "SHRD", quote: "DUSD", tickSize: "0.0001", stepSize: "0.01", minNotional: "1" },
  { symbol: "GOLDDUSD", base: "GOLD", quote: "DUSD", tickSize: "0.01", stepSize: "0.0001", minNotional: "10" }
]

/** What `demo trader` gives a new trader of each asset unless told otherwise. */
export const demoFunding: Readonly<Record<string, string>> = { DUSD: "100000", SHRD: "10000", GOLD: "10" }
/** ... of an asset listed later (`markets add`). */
export const demoFundingOther = "1000"
/** Native coin (TOK) a demo wallet gets for its own fees. */
export const demoNativeCoin = "1"

/** The session advisory lock of the demo world, shared with the desk's tokens (worldLock.ts). */
export { DEMO_WORLD_LOCK } from "../../platform/devnet/worldLock.ts"
const withDemoLock = withDevnetWorldLock

/** Re-issues the registered assets on this node's devnet, then makes the demo world if none exists. */
export const makeDemoWorld: Effect.Effect<void, ConfigError.ConfigError, AppConfig | SqlClient.SqlClient | SecretBox | DevnetChains> = Effect.gen(function*() {
  const config = yield* AppConfig
  if (realNodeSetting(config, "ledger") !== undefined) return
  const chains = yield* DevnetChains
  const startedMs = Date.now()
  // The issuer's key is sealed with the master key: refuse a wrong one in one line first.
  yield* checkMasterKey
  yield* withDemoLock(Effect.gen(function*() {
    const reissued = yield* chains.reissueAssets.pipe(
      Effect.catchTag("AssetsMismatch", (e) =>
        Effect.fail(invalidSetting("LEDGER_RPC_URL", `unset, so the ledger is an in-process devnet, but ${e.message}; ` +
          "the devnet re-issues every registered asset at start in property-id order: use the database with the ledger those properties live on, or a fresh database")))
    )
    const known = new Set((yield* listAssets).map((a) => a.code))
    if (!known.has(devnetDollar.code)) yield* addAsset({ code: devnetDollar.code, propertyId: devnetDollar.propertyId, decimals: ASSET_DECIMALS })
    const listed = yield* listMarkets
    if (listed.length > 0) {
      yield* Effect.logInfo(`demo world: re-issued ${reissued} market asset(s) on the ledger devnet; ${listed.length} market(s) listed (${Date.now() - startedMs} ms)`)
      return
    }
    for (const code of demoAssetCodes) {
      if (known.has(code)) continue
      const { propertyId } = yield* chains.issueAsset(code)
      yield* addAsset({ code, propertyId, decimals: ASSET_DECIMALS })
    }
    for (const market of demoMarkets) yield* addMarket(market)
    yield* Effect.logInfo(`demo world: issued ${demoAssetCodes.join(", ")} on the ledger devnet; listed ${demoMarkets.map((m) => m.symbol).join(", ")} (${Date.now() - startedMs} ms)`)
  }))
}).pipe(
  // Anything else here is a bug or a database gone at start: loud.
  Effect.catchTags({ SqlError: Effect.die, DevnetRefused: Effect.die, MarketInvalid: Effect.die })
)

/** Runs `makeDemoWorld` while the node starts, before its entities take messages. */
export const layer = Layer.effectDiscard(makeDemoWorld)
