// The push channel's messages, pure: what the owner of a market sends with pg_notify and every
// node decodes (a Schema: the channel is a boundary). Compact tuples, because a notification
// carries at most 8000 bytes: a batch whose delta is larger goes out as several messages, each
// with its own sequence number, each applicable on its own.
import { Either, Schema } from "effect"
import type { Delta, Levels, PublicTrade } from "./feed.ts"

/** Where deltas and snapshot announcements go. */
export const dataChannel = "shardline_marketdata"
/** Where a node that found a gap asks the owner for a snapshot (payload: the market id). */
export const refillChannel = "shardline_marketdata_refill"

/** Largest payload we send; Postgres refuses 8000 bytes and more. */
export const PAYLOAD_MAX = 7_900

export const Level = Schema.Tuple(Schema.Number, Schema.Number)
/** [id, price ticks, qty lots, quote satoshis, time ms, buyer is maker (1/0), taker order number] */
export const TradeTuple = Schema.Tuple(Schema.Number, Schema.Number, Schema.Number, Schema.String.pipe(Schema.pattern(/^[0-9]{1,30}$/)), Schema.Number, Schema.Literal(0, 1), Schema.Number)

export const DeltaMessage = Schema.Struct({
  k: Schema.Literal("d"),
  m: Schema.Number,
  s: Schema.Number,
  t: Schema.Number,
  b: Schema.Array(Level),
  a: Schema.Array(Level),
  x: Schema.Array(TradeTuple)
})

/** "s": the owner stored a snapshot of the market at sequence `s` (market_data_snapshots);
 * "h": the owner's heartbeat, its sequence now (a node below it lost a delta). */
export const SnapshotMessage = Schema.Struct({ k: Schema.Literal("s", "h"), m: Schema.Number, s: Schema.Number })

export const Message = Schema.Union(DeltaMessage, SnapshotMessage)
export type Message = typeof Message.Type

const decodeMessage = Schema.decodeUnknownEither(Message)

export type Decoded =
  | { readonly _tag: "Delta"; readonly delta: Delta }
  | { readonly _tag: "Snapshot" | "Heartbeat"; readonly marketId: number; readonly seq: number }

export const tradeTuple = (t: PublicTrade) => [t.id, t.price, t.qty, t.quote.toString(), t.time, t.buyerIsMaker ? 1 : 0, t.takerOrder] as const

export const tradeOfTuple = (x: typeof TradeTuple.Type): PublicTrade =>
  ({ id: x[0], price: x[1], qty: x[2], quote: BigInt(x[3]), time: x[4], buyerIsMaker: x[5] === 1, takerOrder: x[6] })

/** A payload's JSON, or undefined for text that is not JSON (never throws). */
export const parsePayload = (payload: string): unknown => {
  try {
    return JSON.parse(payload)
  } catch {
    return undefined
  }
}

/**
 * The market a parsed payload names, before it is decoded: the owner of a market skips its own
 * messages on this alone (it applied them before sending), without the Schema decode, which was
 * 1.3 % of the node's CPU in the orders bench (session 26). Anything else is decoded in full.
 */
export const marketIdOf = (parsed: unknown): number | undefined => {
  const m = typeof parsed === "object" && parsed !== null ? (parsed as { m?: unknown }).m : undefined
  return typeof m === "number" ? m : undefined
}

/** A payload from the channel, or undefined for one that is not ours (never throws). */
export const decode = (payload: string): Decoded | undefined => decodeParsed(parsePayload(payload))

/** An already parsed payload (parsePayload), or undefined for one that is not ours (never throws). */
export const decodeParsed = (parsed: unknown): Decoded | undefined => {
  if (parsed === undefined) return undefined
  const r = decodeMessage(parsed)
  if (Either.isLeft(r)) return undefined
  const msg = r.right
  if (msg.k !== "d") return { _tag: msg.k === "s" ? "Snapshot" : "Heartbeat", marketId: msg.m, seq: msg.s }
  return {
    _tag: "Delta",
    delta: { marketId: msg.m, seq: msg.s, time: msg.t, bids: msg.b.map((l) => [l[0], l[1]] as const), asks: msg.a.map((l) => [l[0], l[1]] as const), trades: msg.x.map(tradeOfTuple) }
  }
}

export const snapshotMessage = (marketId: number, seq: number): string => JSON.stringify({ k: "s", m: marketId, s: seq })
export const heartbeatMessage = (marketId: number, seq: number): string => JSON.stringify({ k: "h", m: marketId, s: seq })

/**
 * One batch's change as messages of at most PAYLOAD_MAX bytes, numbered from `firstSeq`: trades
 * first (in id order), then bid and ask levels. Each message is a Delta of its own.
 */
export const chunk = (marketId: number, firstSeq: number, time: number, bids: Levels, asks: Levels, trades: ReadonlyArray<PublicTrade>): Array<{ readonly delta: Delta; readonly payload: string }> => {
  const out: Array<{ delta: Delta; payload: string }> = []
  const head = (s: number) => `{"k":"d","m":${marketId},"s":${s},"t":${time},`
  let cur = { b: [] as Levels, a: [] as Levels, x: [] as Array<PublicTrade>, bytes: 0 }
  const flush = () => {
    const seq = firstSeq + out.length
    const body = `"b":${JSON.stringify(cur.b)},"a":${JSON.stringify(cur.a)},"x":${JSON.stringify(cur.x.map(tradeTuple))}}`
    out.push({ delta: { marketId, seq, time, bids: cur.b, asks: cur.a, trades: cur.x }, payload: head(seq) + body })
    cur = { b: [], a: [], x: [], bytes: 0 }
  }
  const room = PAYLOAD_MAX - head(firstSeq + 1_000_000).length - 32
  const add = (bytes: number, put: () => void) => {
    if (cur.bytes + bytes > room) flush()
    put()
    cur.bytes += bytes + 1
  }
  for (const t of trades) add(JSON.stringify(tradeTuple(t)).length, () => cur.x.push(t))
  for (const l of bids) add(JSON.stringify(l).length, () => cur.b.push(l))
  for (const l of asks) add(JSON.stringify(l).length, () => cur.a.push(l))
  if (out.length === 0 || cur.bytes > 0) flush()
  return out
}
