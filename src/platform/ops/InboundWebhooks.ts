// Inbound partner webhooks as the ops view shows them (each one pages operations): the last
// day's count and the latest ten. The platform reads no service's table: the service that takes
// partner webhooks (the desk) gives this port from its own order events.
import { Context, Effect, Layer } from "effect"

export interface InboundWebhooksReport {
  readonly lastDay: number
  readonly latest: ReadonlyArray<{ readonly id: string; readonly partner: string; readonly event: string; readonly order: string | null; readonly at: string }>
}

export interface InboundWebhooksShape {
  /** Never fails: a read that does not answer shows as none. */
  readonly recent: Effect.Effect<InboundWebhooksReport>
}

export class InboundWebhooks extends Context.Tag("shardline/ops/InboundWebhooks")<InboundWebhooks, InboundWebhooksShape>() {}

export const noInboundWebhooks: InboundWebhooksReport = { lastDay: 0, latest: [] }

/** A node with no service that takes partner webhooks. */
export const layerNone = Layer.succeed(InboundWebhooks, { recent: Effect.succeed(noInboundWebhooks) })
