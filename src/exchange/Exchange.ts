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
import { Effect, Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import { config as exchangeConfig, ExchangeConfig, type ExchangeConfigShape } from "./ExchangeConfig.ts"
import { registeredProperties } from "./markets/marketStore.ts"
import { migrations } from "./migrations/index.ts"

export { ExchangeConfig, migrations }
/** The key-epoch ratchet's file in the data dir: a node's primary starts one worker first on a data dir without it. */
export { stateFileName as keyEpochsFile } from "./authorization/KeyEpochStore.ts"

// Loaded when a node builds the layer, not when the CLI reads settings (exchangeLayer.ts).
const parts = Effect.promise(() => import("./exchangeLayer.ts"))
export const layer = Layer.unwrapEffect(Effect.map(parts, (m) => m.layer))
export const listener = Layer.unwrapEffect(Effect.map(parts, (m) => m.listener))

export const frontDoor = {
  layer, listener, migrations, settings: { tag: ExchangeConfig, config: exchangeConfig },
  devnetWorld: Effect.flatMap(Effect.promise(() => import("./markets/DemoWorld.ts")), (m) => m.makeDemoWorld), ledgerProperties: registeredProperties
} satisfies FrontDoor<ExchangeConfig, ExchangeConfigShape>
