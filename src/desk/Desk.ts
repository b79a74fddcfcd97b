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
import { Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import * as AttestationMonitor from "./attestation/AttestationMonitor.ts"
import * as Attestations from "./attestation/Attestations.ts"
import * as AttestorEntity from "./attestation/AttestorEntity.ts"
import { listener } from "./http/DeskListener.ts"
import * as Transparency from "./http/Transparency.ts"
import * as LinkTokenEntity from "./identity/LinkTokenEntity.ts"
import * as LinkedWalletEntity from "./identity/LinkedWalletEntity.ts"
import * as DeskKeys from "./keys/DeskKeys.ts"
import * as DeskOrderEntity from "./orders/DeskOrderEntity.ts"
import * as ReserveScanner from "./reserves/ReserveScanner.ts"
import * as DevnetBacking from "./tokens/devnetBacking.ts"
import * as DeskWallets from "./wallets/DeskWallets.ts"
import { config as deskConfig, DeskConfig, type DeskConfigShape } from "./DeskConfig.ts"
import { migrations } from "./migrations/index.ts"
import { makeDeskWorld } from "./tokens/DeskWorld.ts"
import { registeredProperties } from "./tokens/tokenStore.ts"
import * as InboundLog from "./webhooks/inboundLog.ts"

export { DeskConfig, listener, migrations }

// The reserves, attestations and the transparency bodies, over the desk's wallets and the Omni view.
const services = Layer.mergeAll(DeskKeys.layer, Transparency.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(ReserveScanner.layer, Attestations.layer)),
  Layer.provideMerge(DeskWallets.layer)
)

export const layer = Layer.mergeAll(
  listener, DeskOrderEntity.layer, LinkedWalletEntity.layer, LinkTokenEntity.layer, AttestorEntity.layer, AttestorEntity.layerKick,
  AttestationMonitor.layer
).pipe(Layer.provideMerge(services))

export const frontDoor = {
  layer, listener, migrations, settings: { tag: DeskConfig, config: deskConfig },
  devnetWorld: makeDeskWorld, ledgerProperties: registeredProperties, inboundWebhooks: InboundLog.layer,
  devnetBacking: DevnetBacking.layer.pipe(Layer.provide(DeskWallets.layer))
} satisfies FrontDoor<DeskConfig, DeskConfigShape>
