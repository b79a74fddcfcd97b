// The LinkedWallet entity, one per desk member (entity id: the member id). It watches the member's
// linked xpub: derives addresses on both branches with a gap limit of 20 (the window grows as
// addresses are used), samples the Omni balance of every derived address in each reward token
// (the desk's dollar tokens, rewardTokens.ts), per token and in total, each slot (hourly;
// SHARDLINE_REWARDS_SAMPLE_MS) with its own durable Sample timer, and keeps every sample.
// Slots it could not sample in time are recorded as missing (sampling.ts). Everything it knows is
// in its tables, so activation after a move or a restart just carries on.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { LinkedWallet, SampleWallet } from "../../../schemas/desk/identity.ts"
import { type Branch, CHANGE, deriveAddresses, RECEIVE, watchOnlyFromXpub } from "../../chain/keys.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { rewardTokens } from "./rewardTokens.ts"
import { nextSlotAt, planSampling, windowSize } from "./sampling.ts"

const metrics = entityMetrics("LinkedWallet")
/** Rounds of window growth one sample may take (each adds at least one address per used one). */
const growRoundsMax = 50

interface AddressRow {
  readonly branch: Branch
  readonly idx: number
  readonly address: string
  readonly used: boolean
}

export const layer = LinkedWallet.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const omni = yield* OmniView
  const config = yield* DeskConfig
  const self = (yield* LinkedWallet.client)(address.entityId)
  const memberId = address.entityId
  const intervalMs = config.rewardsSampleMs
  yield* metrics.activated

  const validId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(memberId)
  const wallet = validId
    ? sql<{ xpub: string }>`SELECT xpub FROM desk_wallets WHERE member_id = ${memberId}`.pipe(Effect.map((r) => Option.fromNullable(r[0])))
    : Effect.succeed(Option.none<{ xpub: string }>())
  const addresses = sql<AddressRow>`SELECT branch, idx, address, used FROM linked_wallet_addresses WHERE member_id = ${memberId} ORDER BY branch, idx`

  /** Derives each branch up to its last used address plus the gap limit. */
  const extendWindow = (xpub: string) =>
    Effect.gen(function*() {
      const watch = watchOnlyFromXpub(xpub)
      if (Either.isLeft(watch)) return yield* Effect.logError(`member ${memberId}: stored xpub does not read: ${watch.left.message}`)
      const rows = yield* addresses
      for (const branch of [RECEIVE, CHANGE] as const) {
        const mine = rows.filter((r) => r.branch === branch)
        const want = windowSize(mine.filter((r) => r.used).map((r) => r.idx))
        if (mine.length >= want) continue
        const derived = deriveAddresses(watch.right, branch, mine.length, want - mine.length)
        if (Either.isLeft(derived)) return yield* Effect.logError(`member ${memberId}: ${derived.left.message}`)
        for (const d of derived.right) {
          yield* sql`INSERT INTO linked_wallet_addresses (member_id, branch, idx, address) VALUES (${memberId}, ${branch}, ${d.index}, ${d.address})
            ON CONFLICT DO NOTHING`
        }
      }
    })

  /**
   * The window's balance per reward token (property id → base units) and in total; an address
   * holding any of them is used (sticky), which may grow the window.
   */
  const measure = (xpub: string) =>
    Effect.gen(function*() {
      const properties = (yield* rewardTokens(config.deskTokenProperty)).map((t) => t.propertyId)
      let perToken = new Map<number, bigint>()
      let total = 0n
      for (let round = 0; round < growRoundsMax; round++) {
        yield* extendWindow(xpub)
        const rows = yield* addresses
        perToken = new Map(properties.map((p) => [p, 0n]))
        total = 0n
        let newlyUsed = 0
        for (const row of rows) {
          let balance = 0n
          for (const property of properties) {
            const held = yield* omni.balance(row.address, property)
            perToken.set(property, perToken.get(property)! + held)
            balance += held
          }
          total += balance
          if (balance > 0n && !row.used) {
            newlyUsed++
            yield* sql`UPDATE linked_wallet_addresses SET used = true WHERE member_id = ${memberId} AND branch = ${row.branch} AND idx = ${row.idx}`
          }
        }
        if (newlyUsed === 0) break
      }
      return { total, perToken }
    })

  const schedule = (slotMs: number) => self.Sample(new SampleWallet({ slotMs }), { discard: true })

  const sample = (firedSlotMs: number) =>
    Effect.gen(function*() {
      const linked = yield* wallet
      if (Option.isNone(linked)) return
      const [last] = yield* sql<{ slot_at: Date }>`SELECT slot_at FROM linked_wallet_samples WHERE member_id = ${memberId} ORDER BY slot_at DESC LIMIT 1`
      const plan = planSampling({ firedSlotMs, lastRecordedMs: last === undefined ? undefined : new Date(last.slot_at).getTime(), nowMs: Date.now(), intervalMs })
      for (const slot of plan.missing) {
        yield* sql`INSERT INTO linked_wallet_samples (member_id, slot_at) VALUES (${memberId}, ${new Date(slot)}) ON CONFLICT DO NOTHING`
      }
      if (plan.missing.length > 0) yield* Effect.logWarning(`member ${memberId}: ${plan.missing.length} sampling slot(s) missed; recorded as missing`)
      if (plan.sample !== undefined) {
        const slotAt = new Date(plan.sample)
        const { perToken, total } = yield* measure(linked.value.xpub)
        yield* Effect.gen(function*() {
          const inserted = yield* sql`INSERT INTO linked_wallet_samples (member_id, slot_at, balance_base, taken_at)
            VALUES (${memberId}, ${slotAt}, ${total.toString()}, now()) ON CONFLICT DO NOTHING RETURNING slot_at`
          if (inserted.length === 0) return
          for (const [property, balance] of perToken) {
            yield* sql`INSERT INTO desk_wallet_token_samples (member_id, slot_at, property_id, balance_base)
              VALUES (${memberId}, ${slotAt}, ${property}, ${balance.toString()})`
          }
        }).pipe(sql.withTransaction)
      }
      yield* schedule(plan.next)
    }).pipe(Effect.orDie)

  // A wallet whose timer chain was lost (a restore from backup) starts sampling again; the timer key dedups.
  const existing = yield* wallet.pipe(Effect.orDie)
  if (Option.isSome(existing)) yield* schedule(nextSlotAt(Date.now(), intervalMs)).pipe(Effect.orDie)

  return LinkedWallet.of({
    Watch: () =>
      Effect.gen(function*() {
        const linked = yield* wallet
        if (Option.isNone(linked)) return
        yield* extendWindow(linked.value.xpub)
        yield* schedule(nextSlotAt(Date.now(), intervalMs))
      }).pipe(Effect.orDie, metrics.guard),
    Sample: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.slotMs)
        yield* sample(payload.slotMs)
      }).pipe(metrics.guard)
  })
}), { maxIdleTime: "2 minutes", concurrency: 1 })
