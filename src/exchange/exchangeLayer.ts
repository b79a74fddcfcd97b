// The exchange's running parts, composed: its listener, entities (Market, Authorization,
// Settlement), the market activator and the services they share. Loaded by the front door
// (Exchange.ts) only when a node builds it, so the CLI, which reads the front door's settings and
// migrations, does not load every entity and handler (about 5 s of CPU per CLI process).
import { Layer } from "effect"
import * as AccountReadModel from "./account/AccountReadModel.ts"
import * as ApiKeys from "./auth/ApiKeys.ts"
import * as AuthorizationEntity from "./authorization/AuthorizationEntity.ts"
import * as LegStore from "./authorization/legStore.ts"
import * as LocalAuthorizations from "./authorization/LocalAuthorizations.ts"
import { listener } from "./http/ExchangeListener.ts"
import * as LocalMarkets from "./market/LocalMarkets.ts"
import * as MarketEntity from "./market/MarketEntity.ts"
import * as MarketData from "./marketdata/MarketData.ts"
import * as MarketActivator from "./markets/MarketActivator.ts"
import * as MarketRegistry from "./markets/MarketRegistry.ts"
import * as SettlementEntity from "./settlement/SettlementEntity.ts"

export { listener }

const services = Layer.mergeAll(LocalMarkets.layer, LocalAuthorizations.layer, LegStore.layer, ApiKeys.layer, AccountReadModel.layer, MarketRegistry.layer, MarketData.layer.pipe(Layer.provide(MarketRegistry.layer)))

export const layer = Layer.mergeAll(
  listener, MarketEntity.layer, AuthorizationEntity.layer, SettlementEntity.layer, MarketActivator.layer
).pipe(Layer.provideMerge(services))
