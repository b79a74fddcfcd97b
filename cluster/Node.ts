// One Shardline node: HTTP in front, entities behind, Postgres underneath. The embedded default
// and each node of a multi-node cluster are the same composition with a different topology.
// Each service comes through its front door (src/<service>/<Service>.ts), all of them from one
// list (src/services.ts): its layer holds its listener, entities and services, and what it gives
// the platform's ports (devnet worlds, ledger properties, devnet backing, partner webhooks) is
// read from the same record. A fourth service is one more entry in that list (docs/layout.md).
import { Effect, Layer } from "effect"
import { configLayer, type NodeConfigShape } from "../src/config.ts"
import { migrations } from "../src/migrations.ts"
import * as ChainsLive from "../src/platform/ChainsLive.ts"
import type { AppConfigShape } from "../src/platform/Config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import * as Platform from "../src/platform/Platform.ts"
import * as Telemetry from "../src/platform/telemetry/Telemetry.ts"
import { services, type Services } from "../src/services.ts"
import { single, socket } from "./topology.ts"

/** The name a node goes by in ops, logs and Postgres' application_name (max 63 bytes). */
export const nodeName = (config: AppConfigShape) =>
  config.topology === "single" ? "shardline:embedded" : `shardline:${config.runnerHost}:${config.runnerPort}`

type Port = "devnetWorld" | "ledgerProperties" | "devnetBacking" | "inboundWebhooks"
type Giving<K extends Port> = Extract<Services[number], Readonly<Record<K, unknown>>>[K]

/** What the front doors that fill port `key` give it, in the list's order. */
const given = <K extends Port>(key: K): Array<Giving<K>> =>
  services.flatMap((door) => (key in door ? [(door as unknown as Record<K, Giving<K>>)[key]] : []))

type Merged<L extends Layer.Layer.Any> = Layer.Layer<Layer.Layer.Success<L>, Layer.Layer.Error<L>, Layer.Layer.Context<L>>

/** Layers merged into one (none: the empty layer). */
const mergeEach = <L extends Layer.Layer.Any>(layers: ReadonlyArray<L>): Merged<L> =>
  layers.reduce((all: Merged<L>, layer) => Layer.merge(all, layer as unknown as Merged<L>), Layer.empty as unknown as Merged<L>)

type LayersOf<T extends ReadonlyArray<unknown>> = { -readonly [K in keyof T]: T[K] extends { readonly layer: infer L } ? L : never }

/** The services of a node, each its own front door. */
const serviceLayers = Layer.mergeAll(...(services.map((door) => door.layer) as LayersOf<Services>))

/**
 * On a devnet, each service's world (its assets and tokens) is made before any entity runs, one
 * after the other, so the ledger hands out property ids in one order. On a real ledger each one
 * refuses to start unless it is already there.
 */
const devnetWorlds = Layer.effectDiscard(Effect.all(given("devnetWorld"), { discard: true }))

export const nodeLayer = (config: NodeConfigShape) => {
  const name = nodeName(config)
  const cluster = config.topology === "single" ? single(config) : socket(config)
  return Layer.mergeAll(serviceLayers, Platform.entities).pipe(
    // Kept in the output too, so a node run inside a test process can message its entities.
    Layer.provideMerge(cluster),
    Layer.provide(devnetWorlds),
    // Kept in the output, so a node run inside a test process can reach its chains and services (test/support/node.ts).
    Layer.provideMerge(Platform.services),
    // The partner webhooks in the ops view (the desk's).
    Layer.provideMerge(mergeEach(given("inboundWebhooks"))),
    // A devnet pays a service's tokens backed, into its vaults (the desk's: docs/desk.md, "Token
    // registry"), and knows the properties each service registered on the ledger.
    Layer.provideMerge(Platform.devnet.pipe(Layer.provide(mergeEach(given("devnetBacking"))))),
    Layer.provideMerge(Platform.ledgerRegistry(...given("ledgerProperties"))),
    Layer.provideMerge(Platform.base(name)),
    Layer.provide(databaseLayer({ applicationName: name, migrations })),
    // Refuse a chain setup that cannot work before anything starts (an embedded Postgres, say).
    Layer.provide(Layer.unwrapEffect(Effect.as(ChainsLive.checkChainSettings(config), configLayer(config)))),
    // Beneath everything: every fiber of the node inherits the tracer (or its absence) and the log format.
    Layer.provide(Telemetry.layer(config.telemetry, name))
  )
}
