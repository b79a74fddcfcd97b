// The desk's running parts, composed: its listener, entities, the reserves, attestations and
// transparency bodies over its wallets, and what backs its tokens when a devnet pays them. Loaded
// by the front door (Desk.ts) only when a node builds it, so the CLI, which reads the front door's
// settings and migrations, does not load every entity and handler.
import { Layer } from "effect"
import * as AttestationMonitor from "./attestation/AttestationMonitor.ts"
import * as Attestations from "./attestation/Attestations.ts"
import * as AttestorEntity from "./attestation/AttestorEntity.ts"
import { listener } from "./http/DeskListener.ts"
import * as Transparency from "./http/Transparency.ts"
import * as LinkTokenEntity from "./identity/LinkTokenEntity.ts"
import * as LinkedWalletEntity from "./identity/LinkedWalletEntity.ts"
import * as DeskKeys from "./keys/DeskKeys.ts"
import * as DeskOrderEntity from "./orders/DeskOrderEntity.ts"
import * as TickRearm from "./orders/tickRearm.ts"
import * as TimerFirings from "./timerFirings.ts"
import * as ReserveScanner from "./reserves/ReserveScanner.ts"
import * as DevnetBacking from "./tokens/devnetBacking.ts"
import * as DeskWallets from "./wallets/DeskWallets.ts"

export { listener }

// The reserves, attestations and the transparency bodies, over the desk's wallets and the Omni view.
const services = Layer.mergeAll(DeskKeys.layer, Transparency.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(ReserveScanner.layer, Attestations.layer)),
  Layer.provideMerge(DeskWallets.layer)
)

export const layer = Layer.mergeAll(
  listener, DeskOrderEntity.layer, LinkedWalletEntity.layer, LinkTokenEntity.layer, AttestorEntity.layer, AttestorEntity.layerKick,
  AttestationMonitor.layer, TimerFirings.pruneLayer, TickRearm.rearmLayer
).pipe(Layer.provideMerge(services))

export const devnetBacking = DevnetBacking.layer.pipe(Layer.provide(DeskWallets.layer))
