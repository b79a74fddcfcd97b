// One Shardline node: HTTP in front, entities behind, Postgres underneath. The embedded default
// and each node of a multi-node cluster are the same composition with a different topology.
// Each service comes through its front door (src/<service>/<Service>.ts): its layer holds its
// listener, entities and services. A fourth service is one more front door in `services`, and its
// migrations and settings in src/migrations.ts and src/config.ts (docs/layout.md).
import { Effect, Layer } from "effect"
import { configLayer, type NodeConfigShape } from "../src/config.ts"
import * as Desk from "../src/desk/Desk.ts"
import * as Exchange from "../src/exchange/Exchange.ts"
import { migrations } from "../src/migrations.ts"
import * as ChainsLive from "../src/platform/ChainsLive.ts"
import type { AppConfigShape } from "../src/platform/Config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import * as Platform from "../src/platform/Platform.ts"
import * as Telemetry from "../src/platform/telemetry/Telemetry.ts"
import * as Social from "../src/social/Social.ts"
import { single, socket } from "./topology.ts"

/** The name a node goes by in ops, logs and Postgres' application_name (max 63 bytes). */
export const nodeName = (config: AppConfigShape) =>
  config.topology === "single" ? "shardline:embedded" : `shardline:${config.runnerHost}:${config.runnerPort}`

/** The services of a node, each its own front door. */
const services = Layer.mergeAll(Exchange.layer, Desk.layer, Social.layer)

/**
 * On a devnet, each service's world (its assets and tokens) is made before any entity runs, one
 * after the other, so the ledger hands out property ids in one order. On a real ledger each one
 * refuses to start unless it is already there.
 */
const devnetWorlds = Layer.effectDiscard(Effect.zipRight(Exchange.devnetWorld, Desk.devnetWorld))

export const nodeLayer = (config: NodeConfigShape) => {
  const name = nodeName(config)
  const cluster = config.topology === "single" ? single(config) : socket(config)
  return Layer.mergeAll(services, Platform.entities).pipe(
    // Kept in the output too, so a node run inside a test process can message its entities.
    Layer.provideMerge(cluster),
    Layer.provide(devnetWorlds),
    // Kept in the output, so a node run inside a test process can reach its chains and services (test/support/node.ts).
    Layer.provideMerge(Platform.services),
    // The desk's partner webhooks in the ops view.
    Layer.provideMerge(Desk.inboundWebhooks),
    // A devnet pays the desk's tokens backed, into the desk's vaults (docs/desk.md, "Token registry"),
    // and knows the properties each service registered on the ledger.
    Layer.provideMerge(Platform.devnet.pipe(Layer.provide(Desk.devnetBacking))),
    Layer.provideMerge(Platform.ledgerRegistry(Exchange.ledgerProperties, Desk.ledgerProperties)),
    Layer.provideMerge(Platform.base(name)),
    Layer.provide(databaseLayer({ applicationName: name, migrations })),
    // Refuse a chain setup that cannot work before anything starts (an embedded Postgres, say).
    Layer.provide(Layer.unwrapEffect(Effect.as(ChainsLive.checkChainSettings(config), configLayer(config)))),
    // Beneath everything: every fiber of the node inherits the tracer (or its absence) and the log format.
    Layer.provide(Telemetry.layer(config.telemetry, name))
  )
}
