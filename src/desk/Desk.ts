// The token desk's front door: everything a node needs to run it, and all it may take from here.
// - `layer`: its listener, entities (DeskOrder, LinkedWallet, link tokens, Attestor), the attestor's
//   kick and gauges, and the services they share (keys, wallets, reserves, attestations,
//   transparency), kept in the output so a node run inside a test can reach them.
// - `listener`: the HTTP listener alone; `migrations`: its tables; `DeskConfig`: its settings.
// - `frontDoor`: all of it as one record (platform/FrontDoor.ts), the desk's entry in src/services.ts,
//   with what the platform asks of it through ports: `devnetWorld` (its dollar tokens issued when
//   the ledger is a devnet, before any entity runs), `devnetBacking` (what backs its tokens when a
//   devnet pays them), `ledgerProperties` (its tokens' properties, for the LedgerRegistry) and
//   `inboundWebhooks` (its partner webhooks for the ops view).
// It needs the platform (cluster, database, chains, Omni view, secret box, config) beneath it.
import { Effect, Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import { config as deskConfig, DeskConfig, type DeskConfigShape } from "./DeskConfig.ts"
import { migrations } from "./migrations/index.ts"
import { registeredProperties } from "./tokens/tokenStore.ts"
import * as InboundLog from "./webhooks/inboundLog.ts"

export { DeskConfig, migrations }

// Loaded when a node builds the layer, not when the CLI reads settings (deskLayer.ts).
const parts = Effect.promise(() => import("./deskLayer.ts"))
export const layer = Layer.unwrapEffect(Effect.map(parts, (m) => m.layer))
export const listener = Layer.unwrapEffect(Effect.map(parts, (m) => m.listener))

export const frontDoor = {
  layer, listener, migrations, settings: { tag: DeskConfig, config: deskConfig },
  devnetWorld: Effect.flatMap(Effect.promise(() => import("./tokens/DeskWorld.ts")), (m) => m.makeDeskWorld), ledgerProperties: registeredProperties, inboundWebhooks: InboundLog.layer,
  devnetBacking: Layer.unwrapEffect(Effect.map(parts, (m) => m.devnetBacking))
} satisfies FrontDoor<DeskConfig, DeskConfigShape>
