// The DeskOrder entity, one per desk order (entity id: the order's uuid). It reads the order's
// row, asks the chains what the pure state machine (deskOrderState.ts) needs, writes the step
// (guarded by the status it read), posts each milestone as a callback (forked: never blocking
// the order), and does the leg the machine asks for, each leg recorded before it is broadcast
// (legs.ts). Its own durable Tick timer (aligned to ORDER_TICK_MS, so every activation and every
// tick schedule the same message) keeps an open order moving; a poll sends Advance so the answer
// is fresh. Everything it knows is in Postgres: after a kill -9 or a shard move, the next
// activation just carries on from the row and its recorded legs.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either, Metric, Schedule } from "effect"
import { AdvanceOrder, type CreateOrder, DeskOrderEntity, OrderCreated, type PartnerEvent, TickOrder } from "../../../schemas/desk/orders.ts"
import { unavailable } from "../../../schemas/desk/errors.ts"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { tokenContractAddress } from "../../chain/evm/tokenAddress.ts"
import type { TokenSymbol } from "../../chain/evm/tokenContracts.ts"
import type { EvmChain } from "../../chain/evm/chains.ts"
import { UtxoLedger, type UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import type { CoinChain } from "../../chain/params.ts"
import { addressScript } from "../../chain/txBuilder.ts"
import { AppConfig } from "../../platform/Config.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { deskLedgerLegsInvalid } from "../../platform/Metrics.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { deskIssuerWallet, systemWallet } from "../../platform/ledger/SystemWallet.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { sendCallback } from "../callbacks/CallbackSender.ts"
import { findToken } from "../tokens/tokenStore.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import { hotVaultTopUp } from "../wallets/hotVaultTopUp.ts"
import { CoinFaucets } from "../../platform/ledger/CoinFaucets.ts"
import { type DeskOrder, type DeskOrderAction, type DeskOrderEvent, isSettled, type Milestone, nextAction, step } from "./deskOrderState.ts"
import { ensureEvmSent, ensureLedgerSent, evmPayoutLeg, LegDeferred, type LegRow, legStanding, ledgerOmniLeg, readLedgerLegs, readLeg } from "./legs.ts"
import { followRefund, refundLeg } from "./refundLegs.ts"
import { endTicks, machineOf, type OrderRow, readOrder, txidOf, writeStep } from "./orderStore.ts"
import { coinPayoutLeg, ensureCoinSent } from "./coinPayout.ts"
import { createOrder } from "./createOrder.ts"
import { lookForDeposit, newCursor } from "./depositScan.ts"
import { type EvmDepositCursor, sightTokenDeposit } from "./evmDepositScan.ts"
import { recordPartnerEvent } from "./partnerEvents.ts"
import { recordFiring } from "../timerFirings.ts"
import { evmNativePayoutLeg, sightEthDeposit } from "./ethWrap.ts"
import { decimal, milestoneMessage } from "./orderView.ts"
import { orderDecimalsOf } from "./orderDecimals.ts"
import { TokenDecimals } from "../../chain/evm/TokenDecimals.ts"

const metrics = entityMetrics("DeskOrder")

/** How often an open order looks at its chains by itself, ms. */
export const ORDER_TICK_MS = 3_000
/** An expired order keeps watching for a late deposit (to refund it) this long, then only polls look. */
export const LATE_DEPOSIT_WATCH_MS = 24 * 3600_000
/**
 * How often an expired order looks, ms. Every order a customer abandons watches for a day: at the
 * open order's 3 s that is 28,800 ticks each (a stored timer message and a look at the chain), so
 * a desk whose customers leave a thousand orders a day would carry 300 ticks a second for them. A
 * late deposit waits at most this long more for its refund.
 */
export const EXPIRED_TICK_MS = 30_000
/** How long a next tick that could not be scheduled is tried again before the entity restarts. */
const SCHEDULE_RETRY_FOR = "10 minutes"
/**
 * The deposit scan starts this many blocks below the height its order was made at: a reorg that
 * shortens the chain mines the next blocks (and a deposit sent meanwhile) at or below that height.
 * The deposit address is fresh, so nothing before the order pays it; deeper than the reorgs a
 * desk waits out (6 confirmations for LTC, 12 for ETH).
 */
export const DEPOSIT_REORG_MARGIN = 24
/** Where a deposit scan starts: above `fromHeight` less the reorg margin (never below block 1). */
export const depositScanStart = (fromHeight: number): number => Math.max(1, fromHeight - DEPOSIT_REORG_MARGIN + 1)
/**
 * A settled order's ledger legs (its burn, grant or refund) are followed to this depth: the order's
 * status moves at their first confirmation, and a reorg deeper than that drops them from the chain
 * (chaos seed 1: a refund in the two blocks a 2-block reorg took; the order read `refunded` and
 * nothing sent it again). Until then the order keeps ticking and sends a lost leg's stored bytes
 * again (ensureLedgerSent), as an open order does.
 */
export const LEDGER_LEG_FINAL_DEPTH = 6
/** Steps one advance takes at most (deposit → confirmed → burn → pay is four). */
const STEPS_MAX = 8

/** The next tick time after `nowMs` on a grid of `everyMs` (ORDER_TICK_MS, or EXPIRED_TICK_MS for an expired order). */
export const nextTickAt = (nowMs: number, everyMs: number = ORDER_TICK_MS): number => (Math.floor(nowMs / everyMs) + 1) * everyMs

export const layer = DeskOrderEntity.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const services = yield* Effect.context<SqlClient.SqlClient | SecretBox | AppConfig | UtxoLedger | FeeSponsor>()
  const ledger = yield* UtxoLedger
  const omni = yield* OmniView
  const evm = yield* EvmLedgers
  const coins = yield* CoinLedgers
  const wallets = yield* DeskWallets
  const tokenDecimals = yield* TokenDecimals
  const config = yield* AppConfig
  const faucets = yield* CoinFaucets
  // What this activation has cleared of an EVM chain for the deposit: a mint's look or an ETH wrap's (evmDepositScan.ts).
  const evmDepositCursor: EvmDepositCursor = { clearedTo: undefined }
  // Hot-vault top-ups where a chain has a faucet (a devnet), one per coin chain for this activation (each pays at most once a block).
  const topUps = new Map(coins.chains.map((c) => [c, hotVaultTopUp(faucets, c, coins.get(c))] as const))
  const refundChains = { evm, coins, wallets, config }
  const self = (yield* DeskOrderEntity.client)(address.entityId)
  const orderId = address.entityId
  yield* metrics.activated
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(orderId)
  const load = isUuid ? readOrder({ _tag: "Uuid", id: orderId }) : Effect.succeed(undefined)

  const propertyOf = (row: OrderRow) =>
    Effect.flatMap(findToken(row.asset), (t) =>
      t?.propertyId == null ? Effect.fail(new LegDeferred({ message: `token ${row.asset} has no Omni property` })) : Effect.succeed(t.propertyId))

  // What this activation has read of the deposit's chain (depositScan.ts): a look reads only new blocks.
  const depositCursor = newCursor()

  /**
   * The first transaction paying the order's deposit address on `chain` from DEPOSIT_REORG_MARGIN
   * blocks below the order's starting height that `accept` takes, with its confirmations
   * (depositScan.ts). `complete` is false while this activation has yet to read up to the tip.
   */
  const scanDeposit = <E, R>(
    chain: UtxoLedgerShape,
    row: OrderRow,
    accept: (tx: Transaction, paid: bigint) => Effect.Effect<bigint | undefined, E, R>
  ) =>
    lookForDeposit(chain, depositCursor, (tipHeight) => depositScanStart(row.deposit_from_height ?? tipHeight),
      Buffer.from(Either.getOrThrow(addressScript(row.deposit_address, chain.params))), accept)

  /** The first valid Omni send of the order's token to its ledger deposit address (its dust output marks it). */
  const sightDeposit = (row: OrderRow, property: number) =>
    Effect.zipRight(omni.sync, scanDeposit(ledger, row, (tx) =>
      Effect.map(omni.tx(tx.getId()), (rec) =>
        rec !== undefined && rec.valid && rec.reference === row.deposit_address && rec.payload?.type === "simpleSend" && rec.payload.property === property
          ? rec.payload.amount
          : undefined)))

  /** A mint's stablecoin at its deposit address: the first transfer in, and its confirmations (evmDepositScan.ts). */
  const sightEvmDeposit = (row: OrderRow) =>
    Effect.gen(function*() {
      const l = yield* evm.get(row.chain as EvmChain)
      const start = row.deposit_from_height === null ? Number(yield* l.blockNumber) : row.deposit_from_height
      return yield* sightTokenDeposit(l, tokenContractAddress(config.evmTokenContracts, l, (row.deposit_asset ?? "USDC") as TokenSymbol),
        row.deposit_address, BigInt(depositScanStart(start)), evmDepositCursor)
    })

  /** A wrap's coin at its deposit address (BTC, LTC): what the first transaction paying it pays it. */
  const sightCoinDeposit = (row: OrderRow) => scanDeposit(coins.get(row.chain as CoinChain), row, (_tx, paid) => Effect.succeed<bigint | undefined>(paid))

  /** Writes the step and posts its milestones; true when the order moved. */
  const apply = (row: OrderRow, events: ReadonlyArray<DeskOrderEvent>) =>
    Effect.gen(function*() {
      let order: DeskOrder = machineOf(row)
      const milestones: Array<Milestone> = []
      for (const e of events) {
        const s = step(order, e)
        order = s.order
        milestones.push(...s.milestones)
      }
      const before = machineOf(row)
      const changed = order.status !== before.status || order.deposit?.confirmations !== before.deposit?.confirmations ||
        order.deposit?.txid !== before.deposit?.txid || order.burnTxid !== before.burnTxid || order.payoutTxid !== before.payoutTxid ||
        order.refundTxid !== before.refundTxid
      if (!changed) return false
      if (!(yield* writeStep(orderId, row.status, order, milestones))) return false
      const decimals = milestones.length === 0 ? undefined : yield* orderDecimalsOf(row).pipe(Effect.provideService(TokenDecimals, tokenDecimals))
      for (const m of milestones) {
        if (decimals === undefined) break
        yield* Effect.forkDaemon(sendCallback(row.key_id, orderId, {
          type: m,
          message: milestoneMessage[m],
          amount: { exact: decimal(order.deposit?.amount ?? order.amount, decimals.deposit) },
          // Where the milestone happened: a grant's payout on the ledger, a token deposit on the ledger, the rest on the order's chain.
          chain: (m === "payout_sent") === (row.kind === "mint" || row.kind === "wrap") ? "ledger" : row.chain ?? "",
          txid: txidOf(order, m),
          occurredAt: new Date().toISOString(),
          order: { id: orderId, reference: row.short_ref, status: order.status, payoutAmount: { exact: decimal(row.payout, decimals.payout) } }
        }).pipe(Effect.catchAllCause((c) => Effect.logWarning(`order ${orderId}: callback ${m} not sent`, c)), Effect.provide(services)))
      }
      return order.status !== before.status || milestones.length > 0 || order.payoutTxid !== before.payoutTxid
    })

  const depositKey = (row: OrderRow) =>
    Effect.map(wallets.depositAddress({ chain: "ledger", purpose: "order", owner: orderId, memberId: row.member_id }), (d) => wallets.depositKey("ledger", d.index))

  const payoutLedger = (row: OrderRow) =>
    Effect.gen(function*() {
      const chain = row.chain as EvmChain
      const l = yield* evm.get(chain)
      return { ledger: l, token: tokenContractAddress(config.evmTokenContracts, l, "USDC") }
    })

  /** An EVM payout, recorded before it is sent: native ETH for an unwrap, USDC for the others. */
  const evmPay = (row: OrderRow, amount: bigint) =>
    Effect.flatMap(payoutLedger(row), ({ ledger: l, token }) =>
      row.kind === "unwrap" ? evmNativePayoutLeg(orderId, l, row.payout_address ?? "", amount) : evmPayoutLeg(orderId, l, token, row.payout_address ?? "", amount))

  type ActionOf<T extends DeskOrderAction["_tag"]> = Extract<DeskOrderAction, { _tag: T }>

  /**
   * Looks for the deposit on the chain it is paid on, and lets the clock run (expiry). A look that
   * has not read up to the tip yet (a fresh activation far behind) says nothing of the deposit.
   */
  const watch = (row: OrderRow) =>
    Effect.gen(function*() {
      const nowMs = Date.now()
      const look = row.kind === "mint"
        ? yield* sightEvmDeposit(row)
        : row.kind === "wrap" && row.chain === "ethereum"
        ? yield* sightEthDeposit(yield* evm.get("ethereum"), row.deposit_address, row.deposit_from_height ?? 0, evmDepositCursor)
        : row.kind === "wrap"
        ? yield* sightCoinDeposit(row)
        : yield* sightDeposit(row, yield* propertyOf(row))
      const tick: DeskOrderEvent = { _tag: "Tick", nowMs }
      return yield* apply(row, look.complete || look.found !== undefined ? [{ _tag: "DepositSighting", deposit: look.found, nowMs }, tick] : [tick])
    })

  /** The deposit's txid: what the sweep or the refund of a ledger token spends an output of (legs.ts). */
  const depositOf = (row: OrderRow) =>
    row.deposit_txid === null ? Effect.fail(new LegDeferred({ message: `order ${orderId} has no deposit to move` })) : Effect.succeed(row.deposit_txid)

  /**
   * The token goes back to the issuer (sweep, spending the deposit's output), and once our Omni
   * indexer has the sweep valid the issuer revokes it (burn, spending the sweep's output).
   */
  const burn = (row: OrderRow, action: ActionOf<"Burn">) =>
    Effect.gen(function*() {
      const property = yield* propertyOf(row)
      const issuer = yield* systemWallet(deskIssuerWallet)
      const deposit = yield* depositOf(row)
      const sweep = yield* ledgerOmniLeg(orderId, "sweep", yield* depositKey(row), { type: "simpleSend", property, amount: action.amount }, issuer.address, deposit)
      yield* omni.sync
      const swept = yield* omni.tx(sweep)
      if (swept === undefined) return false
      if (!swept.valid) return yield* apply(row, [{ _tag: "LegRefused", reason: `sweep ${sweep} invalid: ${swept.reason ?? "unknown"}` }])
      const txid = yield* ledgerOmniLeg(orderId, "burn", issuer, { type: "revoke", property, amount: action.amount, memo: row.short_ref }, issuer.address, sweep)
      return yield* apply(row, [{ _tag: "BurnRecorded", txid }])
    })

  /** The payout, recorded before it is sent: a grant of the token, a coin from the hot vault, or an EVM payout. */
  const pay = (row: OrderRow, action: ActionOf<"Pay">) =>
    Effect.gen(function*() {
      if (row.kind === "mint" || row.kind === "wrap") {
        const issuer = yield* systemWallet(deskIssuerWallet)
        const property = yield* propertyOf(row)
        const txid = yield* ledgerOmniLeg(orderId, "payout", issuer, { type: "grant", property, amount: action.amount, memo: row.short_ref }, row.payout_address ?? "")
        return yield* apply(row, [{ _tag: "PayoutRecorded", txid }])
      }
      if (row.kind === "unwrap" && row.chain !== "ethereum") {
        // BTC or LTC from the desk's hot vault on that chain.
        const chain = row.chain as CoinChain
        const txid = yield* coinPayoutLeg(orderId, chain, coins.get(chain), wallets.wallet(chain, "hot"), row.payout_address ?? "", action.amount, topUps.get(chain))
        return yield* apply(row, [{ _tag: "PayoutRecorded", txid }])
      }
      const hash = yield* evmPay(row, action.amount)
      return yield* apply(row, [{ _tag: "PayoutRecorded", txid: hash }])
    })

  /**
   * The burn leg in a block (or there is none): until then a burn the ledger lost is sent again,
   * after its sweep (whose output it spends) if the ledger lost that too.
   */
  const burnSettled = Effect.gen(function*() {
    const sweep = yield* readLeg(orderId, "sweep")
    if (sweep !== undefined) yield* ensureLedgerSent(sweep)
    const leg = yield* readLeg(orderId, "burn")
    return leg === undefined ? true : (yield* ensureLedgerSent(leg)) >= 1
  })

  /** An EVM payout followed to its block; bytes that could never be mined (their nonce went elsewhere) are signed again. */
  const followEvmPayout = (row: OrderRow, order: DeskOrder, action: ActionOf<"FollowPayout">) =>
    Effect.gen(function*() {
      const { ledger: l } = yield* payoutLedger(row)
      const leg = yield* readLeg(orderId, "payout")
      if (leg === undefined || leg.txid !== action.txid) {
        const hash = yield* evmPay(row, order.payout)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE desk_orders SET payout_txid = ${hash}, updated_at = now() WHERE id = ${orderId} AND status = 'paying'`
        return true
      }
      const status = yield* ensureEvmSent(orderId, leg, l)
      if (status === "failed") return yield* apply(row, [{ _tag: "LegRefused", reason: `payout ${leg.txid} reverted` }])
      // Released only once the burn is in a block too.
      const burned = yield* burnSettled
      return status === "mined" && burned ? yield* apply(row, [{ _tag: "PayoutConfirmed" }]) : false
    })

  /** The payout followed (sent again while unseen) until it has a confirmation. */
  const followPayout = (row: OrderRow, order: DeskOrder, action: ActionOf<"FollowPayout">) =>
    Effect.gen(function*() {
      if (row.kind === "mint" || row.kind === "wrap") {
        const grant = yield* readLeg(orderId, "payout")
        if (grant === undefined) return false
        return (yield* ensureLedgerSent(grant)) >= 1 ? yield* apply(row, [{ _tag: "PayoutConfirmed" }]) : false
      }
      if (row.kind === "unwrap" && row.chain !== "ethereum") {
        const leg = yield* readLeg(orderId, "payout")
        if (leg === undefined) return false
        const confirmations = yield* ensureCoinSent(coins.get(row.chain as CoinChain), leg)
        const burned = yield* burnSettled
        return confirmations >= 1 && burned ? yield* apply(row, [{ _tag: "PayoutConfirmed" }]) : false
      }
      return yield* followEvmPayout(row, order, action)
    })

  /** A mint's stablecoin or a wrap's coin goes back on its own chain (refunds.ts, refundLegs.ts); a token back on the ledger. */
  const refund = (row: OrderRow, action: ActionOf<"Refund">) =>
    Effect.gen(function*() {
      if (row.kind === "mint" || row.kind === "wrap") {
        const r = yield* refundLeg(row, action.amount, refundChains)
        return r._tag === "Recorded" ? yield* apply(row, [{ _tag: "RefundRecorded", txid: r.txid }])
          : r._tag === "Refused" ? yield* apply(row, [{ _tag: "LegRefused", reason: r.reason }]) : false
      }
      const property = yield* propertyOf(row)
      const txid = yield* ledgerOmniLeg(orderId, "refund", yield* depositKey(row), { type: "simpleSend", property, amount: action.amount }, row.refund_address ?? "", yield* depositOf(row))
      return yield* apply(row, [{ _tag: "RefundRecorded", txid }])
    })

  /** The refund followed until it has a confirmation (or its chain refuses it). */
  const followRefundLeg = (row: OrderRow, order: DeskOrder, action: ActionOf<"FollowRefund">) =>
    Effect.gen(function*() {
      if (row.kind === "mint" || row.kind === "wrap") {
        const r = yield* followRefund(row, action.txid, order.deposit?.amount ?? 0n, refundChains)
        return r === "confirmed" ? yield* apply(row, [{ _tag: "RefundConfirmed" }])
          : r === "pending" ? false : r._tag === "Refused" ? yield* apply(row, [{ _tag: "LegRefused", reason: r.reason }]) : false
      }
      const leg = yield* readLeg(orderId, "refund")
      if (leg === undefined) return false
      return (yield* ensureLedgerSent(leg)) >= 1 ? yield* apply(row, [{ _tag: "RefundConfirmed" }]) : false
    })

  /** One step of the order: the action its state machine asks for; true when the order moved. */
  const advanceOnce = Effect.gen(function*() {
    const row = yield* load
    if (row === undefined || isSettled(row.status)) return false
    const order = machineOf(row)
    const action = nextAction(order)
    switch (action._tag) {
      case "Watch": return yield* watch(row)
      case "Burn": return yield* burn(row, action)
      case "Pay": return yield* pay(row, action)
      case "FollowPayout": return yield* followPayout(row, order, action)
      case "Refund": return yield* refund(row, action)
      case "FollowRefund": return yield* followRefundLeg(row, order, action)
      case "None": return false
    }
  }).pipe(Effect.provide(services))

  const advance = Effect.gen(function*() {
    for (let i = 0; i < STEPS_MAX; i++) if (!(yield* advanceOnce)) break
  }).pipe(
    Effect.catchTag("LegDeferred", (e) => Effect.logWarning(`order ${orderId}: ${e.message}; trying again`)),
    Effect.catchAllCause((c) => Effect.logWarning(`order ${orderId}: advance failed; trying again`, c))
  )

  /**
   * A leg mined Omni-invalid at final depth moved no token. It is not made again by itself: a new
   * revoke would take tokens another order swept and has yet to burn, and a new sweep or refund
   * has nothing to move if the deposit's tokens never came. It is logged, counted
   * (shardline_desk_ledger_legs_invalid_total) and written to the order's trail once
   * (`leg_invalid`), for an operator (docs/desk-orders.md, "Reorgs").
   */
  const legInvalid = (leg: LegRow, status: string, reason: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const first = yield* sql`INSERT INTO desk_order_events (order_id, source, event, body, dedupe_key)
        VALUES (${orderId}, 'desk', 'leg_invalid', ${JSON.stringify({ status, leg: leg.leg, txid: leg.txid, reason })}::jsonb, ${`leg_invalid:${leg.txid}`})
        ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`
      if (first.length > 0) yield* Metric.increment(Metric.tagged(deskLedgerLegsInvalid, "leg", leg.leg))
      yield* Effect.logWarning(`order ${orderId}: its ${leg.leg} ${leg.txid} is ${LEDGER_LEG_FINAL_DEPTH}+ blocks deep and Omni-invalid (${reason}); not made again: an operator looks`)
    })

  /**
   * True once every ledger leg of this (settled) order is LEDGER_LEG_FINAL_DEPTH deep and our Omni
   * indexer has judged it (legStanding); a lost one is sent again, an invalid one reported (legInvalid).
   */
  const ledgerLegsFinal = (status: string) => Effect.gen(function*() {
    let final = true
    for (const leg of yield* readLedgerLegs(orderId)) {
      const confirmations = yield* ensureLedgerSent(leg)
      const judged = confirmations < LEDGER_LEG_FINAL_DEPTH ? undefined : yield* omni.current.pipe(
        Effect.zipRight(Effect.map(omni.tx(leg.txid), (r) => r ?? "forgotten" as const)),
        Effect.catchTag("OmniViewBehind", () => Effect.succeed(undefined)))
      const standing = legStanding(confirmations, judged, LEDGER_LEG_FINAL_DEPTH)
      if (standing._tag === "Pending") final = false
      if (standing._tag === "Invalid") yield* legInvalid(leg, status, standing.reason)
    }
    return final
  }).pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning(`order ${orderId}: its ledger legs not followed now: ${e.message}; trying again`), false)))

  /**
   * Schedules the next tick while the order is open (and an expired one for a day), or its ledger legs
   * are not final yet; otherwise records that the chain ended (the re-arm sweep restarts any other).
   */
  const scheduleNext = Effect.gen(function*() {
    const row = yield* load
    if (row === undefined) return
    // A chain that ended on purpose stays ended: its settled order's legs were final then (and stay
    // so), or its expired order's watch was over. Asking again could only be wrong: a poll's
    // Advance while the ledger refused took "cannot read the legs" for "not final" and started
    // the chain again, and the gap read as a chain quiet for 10–21 minutes (chaos seed 7, 30
    // minutes, sessions 22 and 24: three released orders, each restarted inside a ledger refusal).
    if (row.ticks_done) return
    const ended = (isSettled(row.status) && (yield* ledgerLegsFinal(row.status))) ||
      (row.status === "expired" && Date.now() > new Date(row.expires_at).getTime() + LATE_DEPOSIT_WATCH_MS)
    if (ended) return yield* endTicks(orderId)
    yield* self.Tick(new TickOrder({ dueAtMs: nextTickAt(Date.now(), row.status === "expired" ? EXPIRED_TICK_MS : ORDER_TICK_MS) }), { discard: true })
  }).pipe(
    Effect.provide(services),
    // The chain is the order's only clock: a tick whose next one was not scheduled (the database
    // restarting) left the order where it was for good (chaos seed 8, session 16: a wrap stuck at
    // deposit_seen with its deposit 356 blocks deep). Tried again until the database answers; past
    // SCHEDULE_RETRY_FOR it is a defect, and the entity's restart schedules from its activation.
    Effect.tapErrorCause((c) => Effect.logWarning(`order ${orderId}: next tick not scheduled yet; trying again`, c)),
    Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")), Schedule.upTo(SCHEDULE_RETRY_FOR))),
    Effect.orDie
  )

  // An order whose timer chain was lost (a restore from backup) starts ticking again; the tick's key dedups.
  yield* scheduleNext

  /**
   * Writes this order from its checked draft and starts its timer; a replayed Idempotency-Key
   * answers the order the key made first (that order's own entity watches it). A database
   * failure is a defect: the caller answers 503, and a retry finds whatever was committed.
   */
  const create = (payload: CreateOrder) =>
    createOrder(orderId, payload.draft, payload.idempotency).pipe(
      Effect.provideService(DeskWallets, wallets),
      Effect.provide(services),
      Effect.catchTag("SqlError", "DeskWalletRefused", (e) => Effect.die(e)),
      Effect.tap((c) => c._tag === "Created" ? scheduleNext : Effect.void),
      Effect.map((c) => new OrderCreated({ orderId: c._tag === "Created" ? orderId : c.orderId, replayed: c._tag === "Existing" && c.orderId !== orderId }))
    )

  /** A partner's webhook event in this order's log (none for the entity of events naming no order). */
  const partnerEvent = (payload: PartnerEvent) =>
    recordPartnerEvent(isUuid ? orderId : null, payload).pipe(
      Effect.provide(services),
      Effect.catchTag("SqlError", (e) =>
        Effect.zipRight(Effect.logError("partner webhook not recorded", e), Effect.fail(unavailable("The event could not be recorded; send it again."))))
    )

  return DeskOrderEntity.of({
    Create: ({ payload }) => create(payload).pipe(metrics.guard),
    Watch: () => Effect.zipRight(advance, scheduleNext).pipe(metrics.guard),
    Tick: ({ payload }) =>
      metrics.timerFired(payload.dueAtMs).pipe(
        Effect.zipRight(recordFiring("order_tick", orderId, payload.dueAtMs).pipe(Effect.provide(services))),
        Effect.zipRight(advance),
        Effect.zipRight(scheduleNext),
        metrics.guard
      ),
    // A poll's (or the re-arm sweep's, tickRearm.ts) look also schedules the next tick: a chain that
    // was lost starts again. Bounded, unlike a tick's: the caller waits for this answer.
    Advance: (_: { readonly payload: AdvanceOrder }) =>
      Effect.zipRight(advance, scheduleNext.pipe(Effect.timeout("5 seconds"), Effect.catchAllCause(() => Effect.void))).pipe(metrics.guard),
    PartnerEvent: ({ payload }) => partnerEvent(payload).pipe(metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
