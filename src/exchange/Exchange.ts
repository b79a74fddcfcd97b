// The exchange's front door: everything a node needs to run it, and all it may take from here.
// - `layer`: its listener, entities (Market, Authorization, Settlement), the market activator and
//   the services they share (API keys, account read model, market registry, market data), kept in
//   the output so a node run inside a test can reach them.
// - `listener`: the HTTP listener alone; `migrations`: its tables; `ExchangeConfig`: its settings.
// - `frontDoor`: all of it as one record (platform/FrontDoor.ts), the exchange's entry in
//   src/services.ts, with what the platform asks of it through ports: `devnetWorld` (the demo
//   markets' assets, issued when the ledger is a devnet, before any entity runs) and
//   `ledgerProperties` (its market assets, for the platform's LedgerRegistry).
// It needs the platform (cluster, database, chains, secret box, config) beneath it.
import { Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import * as AccountReadModel from "./account/AccountReadModel.ts"
import * as ApiKeys from "./auth/ApiKeys.ts"
import * as AuthorizationEntity from "./authorization/AuthorizationEntity.ts"
import { listener } from "./http/ExchangeListener.ts"
import * as LocalMarkets from "./market/LocalMarkets.ts"
import * as MarketEntity from "./market/MarketEntity.ts"
import * as MarketData from "./marketdata/MarketData.ts"
import * as MarketActivator from "./markets/MarketActivator.ts"
import * as MarketRegistry from "./markets/MarketRegistry.ts"
import * as SettlementEntity from "./settlement/SettlementEntity.ts"
import { config as exchangeConfig, ExchangeConfig, type ExchangeConfigShape } from "./ExchangeConfig.ts"
import { makeDemoWorld } from "./markets/DemoWorld.ts"
import { registeredProperties } from "./markets/marketStore.ts"
import { migrations } from "./migrations/index.ts"

export { ExchangeConfig, listener, migrations }
/** The key-epoch ratchet's file in the data dir: a node's primary starts one worker first on a data dir without it. */
export { stateFileName as keyEpochsFile } from "./authorization/KeyEpochStore.ts"

const services = Layer.mergeAll(LocalMarkets.layer, ApiKeys.layer, AccountReadModel.layer, MarketRegistry.layer, MarketData.layer.pipe(Layer.provide(MarketRegistry.layer)))

export const layer = Layer.mergeAll(
  listener, MarketEntity.layer, AuthorizationEntity.layer, SettlementEntity.layer, MarketActivator.layer
).pipe(Layer.provideMerge(services))

export const frontDoor = {
  layer, listener, migrations, settings: { tag: ExchangeConfig, config: exchangeConfig },
  devnetWorld: makeDemoWorld, ledgerProperties: registeredProperties
} satisfies FrontDoor<ExchangeConfig, ExchangeConfigShape>
