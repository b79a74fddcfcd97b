// INTERIM (replaced by the node-local + reconciled limiter from the runtime work): request weight
// per bucket per one-minute window, in memory on this node.
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

export const windowMs = 60_000

export interface Usage {
  readonly used: number
  readonly limit: number
  readonly allowed: boolean
  readonly retryAfterSec: number
}

export interface RateLimiterShape {
  readonly consume: (bucket: string, weight: number, limit: number) => Usage
  readonly peek: (bucket: string, limit: number) => Usage
  readonly prune: Effect.Effect<number>
}

export class RateLimiter extends Context.Tag("shardline/RateLimiter")<RateLimiter, RateLimiterShape>() {}

const makeLocal = (): RateLimiterShape => {
  const counts = new Map<string, { window: number; used: number }>()
  const usage = (bucket: string, weight: number, limit: number): Usage => {
    const now = Date.now()
    const window = Math.floor(now / windowMs)
    let c = counts.get(bucket)
    if (c === undefined || c.window !== window) counts.set(bucket, (c = { window, used: 0 }))
    c.used += weight
    return { used: c.used, limit, allowed: c.used <= limit, retryAfterSec: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)) }
  }
  return {
    consume: usage,
    peek: (bucket, limit) => usage(bucket, 0, limit),
    prune: Effect.sync(() => counts.size)
  }
}

export const layerLocal: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, makeLocal)
export const layer: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = layerLocal
