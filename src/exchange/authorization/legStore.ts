// Storing signed legs' bytes, several wallets' in one statement (issue 22). A market batch that
// trades asks every paying grant's Authorization entity to sign at once; each wallet then stored
// its legs with its own UPDATE, so a batch of n trades made about n + 1 store statements, and a
// statement costs the node more CPU than signing a leg. Now one statement is out at a time and
// every store that arrives meanwhile goes in the next one. Each wallet still stores only its own
// legs under its own conditions (its grant, its address, the terms it built from, its key row);
// only the round trip is shared, and each caller is told which of its own legs the statement took.
//
// A leg is never in one statement twice: a second store of the same leg (it cannot come from one
// node, whose Authorization entity signs a grant's legs one call at a time, but the rule does not
// rest on that) waits for the next statement, where the first one's bytes already hold the row.
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Deferred, Effect, Exit, Layer, Queue } from "effect"

/** One built leg, with the conditions its row must still meet for the bytes to be stored. */
export interface LegToStore {
  readonly tradeId: string
  readonly leg: string
  readonly txHex: string
  readonly txid: string
  readonly propertyId: string
  readonly amount: string
  readonly toAddress: string
  readonly grantId: string
  readonly fromAddress: string
  /** Store only while the grant's sealed key is stored (a wallet made for a live grant). */
  readonly keyGuard: boolean
}

export type Store = (legs: ReadonlyArray<LegToStore>) => Effect.Effect<ReadonlySet<string>, SqlError.SqlError>

export class LegStore extends Context.Tag("shardline/LegStore")<LegStore, { readonly store: Store }>() {}

export const legKey = (tradeId: string, leg: string) => `${BigInt(tradeId)}:${leg}`

/** The statement: every leg whose row is still unsigned and says what was built; the keys it took. */
export const storeStatement = (sql: SqlClient.SqlClient, legs: ReadonlyArray<LegToStore>) =>
  Effect.map(
    sql<{ trade_id: string; leg: string }>`UPDATE settlement_legs l
      SET tx_hex = v.tx_hex, txid = v.txid, status = 'signed', updated_at = now()
      FROM unnest(${legs.map((b) => b.tradeId)}::bigint[], ${legs.map((b) => b.leg)}::text[],
                  ${legs.map((b) => b.txHex)}::text[], ${legs.map((b) => b.txid)}::text[],
                  ${legs.map((b) => b.propertyId)}::bigint[], ${legs.map((b) => b.amount)}::numeric[],
                  ${legs.map((b) => b.toAddress)}::text[], ${legs.map((b) => b.grantId)}::text[],
                  ${legs.map((b) => b.fromAddress)}::text[], ${legs.map((b) => b.keyGuard)}::bool[])
        AS v(trade_id, leg, tx_hex, txid, property_id, amount, to_address, grant_id, from_address, key_guard)
      WHERE l.trade_id = v.trade_id AND l.leg = v.leg AND l.tx_hex IS NULL AND l.status = 'recorded'
        AND l.grant_id = v.grant_id AND l.from_address = v.from_address
        AND l.property_id = v.property_id AND l.amount = v.amount AND l.to_address = v.to_address
        AND (NOT v.key_guard OR EXISTS (SELECT 1 FROM authorization_keys k WHERE k.grant_id = l.grant_id))
      RETURNING l.trade_id::text AS trade_id, l.leg`,
    (rows): ReadonlySet<string> => new Set(rows.map((r) => legKey(r.trade_id, r.leg)))
  )

/** Without the node's LegStore (a wallet made in a test): each store is its own statement. */
export const storeAlone = (sql: SqlClient.SqlClient): Store => (legs) =>
  legs.length === 0 ? Effect.succeed(new Set<string>()) : storeStatement(sql, legs)

interface Waiting {
  readonly legs: ReadonlyArray<LegToStore>
  readonly done: Deferred.Deferred<ReadonlySet<string>, SqlError.SqlError>
}

/** Requests for the next statement: in arrival order, none with a leg already taken in it. */
export const nextRound = <W extends { readonly legs: ReadonlyArray<{ readonly tradeId: string; readonly leg: string }> }>(waiting: ReadonlyArray<W>) => {
  const taken = new Set<string>()
  const now: Array<W> = []
  const later: Array<W> = []
  for (const w of waiting) {
    const keys = w.legs.map((l) => legKey(l.tradeId, l.leg))
    if (keys.some((k) => taken.has(k))) later.push(w)
    else {
      for (const k of keys) taken.add(k)
      now.push(w)
    }
  }
  return { now, later }
}

export const layer = Layer.scoped(LegStore, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const queue = yield* Queue.unbounded<Waiting>()
  let carried: Array<Waiting> = []
  const round = Effect.gen(function*() {
    const arrived = carried.length > 0 ? yield* Queue.takeAll(queue) : yield* Queue.takeBetween(queue, 1, Number.MAX_SAFE_INTEGER)
    const { now, later } = nextRound([...carried, ...arrived])
    carried = later
    const exit = yield* Effect.exit(storeStatement(sql, now.flatMap((w) => w.legs)))
    for (const w of now) {
      const mine = Exit.map(exit, (took) => {
        const own = new Set<string>()
        for (const l of w.legs) {
          const k = legKey(l.tradeId, l.leg)
          if (took.has(k)) own.add(k)
        }
        return own as ReadonlySet<string>
      })
      yield* Deferred.done(w.done, mine)
    }
  })
  yield* Effect.forkScoped(Effect.forever(round))
  const store: Store = (legs) =>
    legs.length === 0
      ? Effect.succeed(new Set<string>())
      : Effect.flatMap(Deferred.make<ReadonlySet<string>, SqlError.SqlError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { legs, done }), Deferred.await(done)))
  return { store }
}))
