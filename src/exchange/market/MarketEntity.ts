// The Market entity, one per symbol: owns the book in memory (rebuilt from its open orders on
// activation), stays alive, and group-commits. Orders arrive as volatile messages (never one
// persisted cluster message each); each goes into a queue, and one loop takes everything queued,
// applies it to the book (MarketState.ts), writes it in one transaction, and only then answers.
// While a transaction runs, new orders queue up for the next one, so a busy market commits large
// batches and an idle one answers at once. A failed commit kills the entity: its book may be ahead
// of the database, so it is rebuilt from the database, and none of the batch was acknowledged.
//
// After the commit, the batch's settlement legs are signed by the Authorization entity of each
// paying grant (one call per grant per batch; straight to it when it runs on this node) and
// broadcast before the batch's answers go out (the spec settles inline). That happens in a
// second loop, the settle loop, while the commit loop runs the next batch; answers keep the
// batches' order. The market then follows its open legs to their final depth once per block
// (settlement/legSweep.ts), with no message per trade.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, FiberId, Queue, Schedule, type Tracer } from "effect"
import { goneExit, type InboxAnswer, LocalMarkets, type MarketGone, type MarketInbox } from "./LocalMarkets.ts"
import { Authorization, type LegRef, SignLegs, type SignedLeg } from "../../../schemas/exchange/authorization.ts"
import { type BatchAnswer, type BatchCommand, type Cancel, type Fill, type Leg, Market as MarketEntitySchema, OrderRefused, type OrderState, type Placed } from "../../../schemas/exchange/market.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { recordedSpan, withBatchSpan } from "../../platform/telemetry/batchSpan.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { type Ending, pipelinedTransaction } from "../../platform/database/pipelinedTransaction.ts"
import { LocalAuthorizations, signerPathCounts } from "../authorization/LocalAuthorizations.ts"
import { entityIdOf } from "../authorization/policy.ts"
import { makeLegSweep } from "../settlement/legSweep.ts"
import { MarketData } from "../marketdata/MarketData.ts"
import { listMarkets } from "../markets/marketStore.ts"
import type { Market } from "../markets/marketSpec.ts"
import { formatPrice, formatQty, formatSats } from "./amounts.ts"
import * as Q from "./marketSql.ts"
import { type Changes, isRetryOf, MarketState, newChanges, type OrderRec, type PlaceInput, type Refusal, type TradeRec } from "./MarketState.ts"

const metrics = entityMetrics("Market")

/** Most commands one transaction takes; more wait for the next. */
export const batchMax = 2_000
/** How long an answer waits for its legs to be signed and broadcast before it goes out without txids. */
export const signWaitMs = 10_000
/** Committed batches whose settlement and answers may wait while the next batch runs. */
const settleAhead = 4
/** How often the market asks the ledger for a new block, and the longest it leaves open legs unlooked at. */
const sweepPollMs = 1_000
const sweepIdleMs = 5_000
/** Before refusing for funds: attempts at bringing the Omni view to the ledger's tip, and the pause between them. */
const currentAttempts = 3
const currentRetryMs = 200

/**
 * Where a command's answer goes: a callback, called once, in the batch loop (so it must not throw).
 * A fiber waiting on a Deferred behind it (an entity handler, a Batch from another node) or this
 * node's caller itself (the inbox: the signed lane's callback, or a fiber's resume). A refusal is
 * an answer; MarketGone reaches only the inbox's callers, when the market leaves before their
 * command was answered.
 */
type Done<A> = (exit: Exit.Exit<A, OrderRefused | MarketGone>) => void

/** An answer callback with a Deferred behind it, for a fiber to wait on. */
const awaited = <A, E = OrderRefused | MarketGone>() => {
  const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
  const done = (exit: Exit.Exit<A, E>) => Deferred.unsafeDone(deferred, exit)
  return { done, answer: Deferred.await(deferred) }
}

/** Gives a command its answer, as a step of the batch. */
const reply = <A>(done: Done<A>, exit: Exit.Exit<A, OrderRefused>) => Effect.sync(() => done(exit))

/** A command's answer as a Batch gives it: a refusal is an answer; MarketGone and a defect stay as they are. */
const batchExitOf = (c: BatchCommand, exit: Exit.Exit<unknown, OrderRefused | MarketGone>): Exit.Exit<BatchAnswer, MarketGone> => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value
    return Exit.succeed(
      c._tag === "Place" ? { _tag: "Placed", placed: value as Placed }
      : c._tag === "Cancel" ? { _tag: "Canceled", order: value as OrderState }
      : { _tag: "CanceledAll", orders: value as ReadonlyArray<OrderState> }
    )
  }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && failure.value._tag === "OrderRefused") return Exit.succeed({ _tag: "Refused", code: failure.value.code, msg: failure.value.msg })
  return exit as Exit.Exit<never, MarketGone>
}

/** A command, with the span of the request it serves when that trace is recorded. */
type Command = Queued & { readonly span?: Tracer.AnySpan | undefined }
type Queued =
  | {
    readonly _tag: "Place"
    readonly input: PlaceInput
    readonly done: Done<Placed>
    /** Placed again after the node's Omni view caught up (see retryAfterSync): refused for funds at once. */
    readonly afterSync?: true
  }
  | {
    readonly _tag: "Cancel"
    readonly userId: number
    readonly orderId?: number | undefined
    readonly clientOrderId?: string | undefined
    readonly onlyIf?: "NEW" | "PARTIALLY_FILLED" | undefined
    readonly done: Done<OrderState>
  }
  | { readonly _tag: "CancelAll"; readonly userId: number; readonly done: Done<ReadonlyArray<OrderState>> }
  | { readonly _tag: "ExpireGrant"; readonly grantId: string; readonly done: Done<number> }
  | { readonly _tag: "Tick"; readonly done: Done<void> }

/** An order as the wire shows it. */
export const orderState = (m: Market, o: OrderRec): OrderState => ({
  symbol: m.symbol,
  orderId: String(o.orderId),
  clientOrderId: o.clientOrderId,
  side: o.side,
  price: formatPrice(m.compiled, o.priceTicks),
  origQty: formatQty(m.compiled, o.qtyLots),
  executedQty: formatQty(m.compiled, o.executedLots),
  cummulativeQuoteQty: formatSats(o.quoteExecuted),
  status: o.status,
  time: o.createdMs,
  updateTime: o.updatedMs
})

const cancelCommand = (c: Cancel, done: Done<OrderState>): Queued =>
  ({ _tag: "Cancel", userId: c.userId, orderId: c.orderId, clientOrderId: c.clientOrderId, onlyIf: c.onlyIf, done })

const legKey = (tradeId: number | string, leg: string) => `${tradeId}:${leg}`

// --- Instrumentation hook (optional; only benchmarks set it) ---

/** Where one batch's time went, in milliseconds of wall time, and what it held. */
export interface BatchFigures {
  readonly commands: number
  readonly places: number
  readonly cancels: number
  readonly trades: number
  /** Pay-to addresses of new users (before the transaction), then in it the duplicate check and the grants read and locked (BEGIN travels with it). */
  readonly readMs: number
  /** In the transaction: the book and bookkeeping (CPU only). */
  readonly matchMs: number
  /** The batch's write and its COMMIT (one round trip: pipelinedTransaction). */
  readonly writeMs: number
  /** BEGIN to COMMIT done (the three above). */
  readonly txMs: number
  /** After the commit: signing and broadcasting the legs. */
  readonly signMs: number
  /** Answers completed and follow-ups forked. */
  readonly answerMs: number
  readonly totalMs: number
}

/** Set `onBatch` to receive every batch's figures (called synchronously; keep it cheap). */
export const marketInstrumentation: { onBatch: ((symbol: string, figures: BatchFigures) => void) | undefined } = { onBatch: undefined }

export const layer = MarketEntitySchema.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const view = yield* OmniView
  const authorizations = yield* Authorization.client
  const localSigners = yield* LocalAuthorizations
  /** The grant's entity straight when it is active on this node (LocalAuthorizations.ts), else through the cluster. */
  const signerOf = (entityId: string, payload: SignLegs) => {
    const local = localSigners.get(entityId)
    if (local !== undefined) {
      signerPathCounts.local++
      return local.signLegs(payload)
    }
    signerPathCounts.cluster++
    return authorizations(entityId).SignLegs(payload)
  }
  yield* metrics.activated

  const symbol = address.entityId
  const market = (yield* listMarkets.pipe(Effect.orDie)).find((m) => m.symbol === symbol)
  if (market === undefined) return yield* Effect.dieMessage(`no market ${symbol}`)
  const loaded = yield* Q.loadOpen(market.id).pipe(Effect.orDie)
  const created = MarketState.create(market, loaded.open, loaded.counters)
  if (typeof created === "string") return yield* Effect.dieMessage(`market ${symbol}: its open orders do not rebuild a book: ${created}`)
  const state = created
  const feed = yield* (yield* MarketData).attach(market, state.book)
  const payTo = new Map<number, string>()
  yield* Entity.keepAlive(true)
  yield* Effect.logInfo("market active").pipe(Effect.annotateLogs({ symbol, open: loaded.open.length }))

  // The market's own fibers (commit loop, expiry tick, settlement sweep) run interruptibly whatever
  // the build's region. After a defect the cluster rebuilds the entity from an uninterruptible
  // fiber (its onDefect restart), and a fork inherits that: CI's run of 2026-11-29 had a rebuilt
  // market whose sweep went on after the node was told to stop, and the stop waited for it forever.
  const background = <A, E, R>(loop: Effect.Effect<A, E, R>) => Effect.forkScoped(Effect.interruptible(loop))

  const queue = yield* Queue.unbounded<Command>()
  const legs = yield* makeLegSweep(market.id, `market ${symbol}`)
  /** Whether the market may have legs not yet final (the last sweep found some, or a batch traded since). */
  let legsOpen = true

  const refuse = (code: number, msg: string) => new OrderRefused({ code, msg })

  /**
   * Legs of the batch signed and broadcast; their txids by trade and leg. One SignLegs per paying
   * grant, not one pass for the whole batch: the grant's Authorization entity is the one holder of
   * its key and of its address's coins (AuthorizationEntity.ts says why that stays). Each carries
   * its legs' terms as this batch recorded them, so the wallet builds without reading the rows,
   * and the batch records which legs the ledger took for all grants in one statement after.
   */
  const signAll = (legs: Changes["legs"]) =>
    Effect.gen(function*() {
      const byGrant = new Map<string, { entityId: string; legs: Array<LegRef> }>()
      for (const l of legs) {
        let g = byGrant.get(l.grantId)
        if (g === undefined) byGrant.set(l.grantId, (g = { entityId: entityIdOf(l.userId, l.asset), legs: [] }))
        g.legs.push({ tradeId: String(l.tradeId), leg: l.leg, terms: { propertyId: l.propertyId, amount: l.amount.toString(), to: l.to } })
      }
      const signed = new Map<string, string>()
      const taken: Array<SignedLeg> = []
      yield* Effect.forEach([...byGrant], ([grantId, g]) =>
        signerOf(g.entityId, new SignLegs({ grantId, legs: g.legs, callerRecordsBroadcasts: true })).pipe(
          Effect.tap((result: ReadonlyArray<SignedLeg>) =>
            Effect.sync(() => {
              for (const s of result) {
                signed.set(legKey(s.tradeId, s.leg), s.txid)
                if (s.broadcast === true) taken.push(s)
              }
            })),
          Effect.catchAllCause((cause) => Effect.logWarning("legs not signed yet; the market's sweep will retry", cause).pipe(Effect.annotateLogs({ grantId })))
        ), { concurrency: 16, discard: true })
      // A leg left 'signed' (this failed, or a crash came first) is looked up by the sweep: never lost, never sent twice.
      if (taken.length > 0) {
        yield* Q.recordBroadcasts(taken).pipe(Effect.catchAll((e) => Effect.logWarning("broadcast legs not recorded; the sweep looks them up", e)))
      }
      return signed
    }).pipe(Effect.timeoutTo({ duration: Duration.millis(signWaitMs), onTimeout: () => new Map<string, string>(), onSuccess: (m) => m }))

  const fillsOf = (o: OrderRec, trades: ReadonlyArray<TradeRec>, legsOf: Map<string, Changes["legs"][number]>, txids: Map<string, string>): Array<Fill> =>
    trades.map((t) => {
      const legs: Array<Leg> = (["base", "quote"] as const).map((name) => {
        const l = legsOf.get(legKey(t.tradeId, name))!
        const txid = txids.get(legKey(t.tradeId, name)) ?? ""
        return { asset: l.asset, amount: formatSats(l.amount), from: l.from, to: l.to, txid, confirmations: 0, status: txid === "" ? "recorded" : "broadcast" }
      })
      return {
        tradeId: String(t.tradeId),
        price: formatPrice(market.compiled, t.priceTicks),
        qty: formatQty(market.compiled, t.qtyLots),
        quoteQty: formatSats(t.quoteSats),
        isMaker: t.makerOrderId === o.orderId,
        legs
      }
    })

  /** One batch: everything the queue held, one transaction, then the answers. */
  type PlaceCmd = Extract<Command, { _tag: "Place" }>
  type Answer = () => Effect.Effect<void, never, SqlClient.SqlClient>
  /** What one batch decides before it commits: its changes, the answers owed, the placed orders. */
  interface BatchWork {
    readonly now: number
    readonly changes: ReturnType<typeof newChanges>
    readonly answers: Array<Answer>
    readonly placedKeys: Set<string>
    readonly placed: Array<{ cmd: PlaceCmd; order: OrderRec; trades: ReadonlyArray<TradeRec> }>
    /** Places refused for funds while the node's Omni view may be behind (placed once more after a sync). */
    readonly unfunded: Array<{ cmd: PlaceCmd; refusal: Refusal }>
    /** The view's height the batch read its balances at. */
    readonly viewHeight: number
    readonly seen: ReadonlySet<string>
    readonly grants: Effect.Effect.Success<ReturnType<typeof Q.lockGrants>>
  }

  /** Before the transaction: the receiving address of each placing user not seen yet (a plain read, on another connection). */
  const learnPayTo = (batch: ReadonlyArray<Command>) =>
    Effect.gen(function*() {
      const unknownUsers = [...new Set(batch.flatMap((c) => (c._tag === "Place" && !payTo.has(c.input.userId) ? [c.input.userId] : [])))]
      if (unknownUsers.length > 0) for (const [u, a] of yield* Q.payToAddresses(unknownUsers)) payTo.set(u, a)
    })

  /** Step 1, in the transaction: expire due grants, then taken client ids and the grants the places spend (locked) in one statement. */
  const readBatch = (batch: ReadonlyArray<Command>, now: number, changes: BatchWork["changes"], query: Q.Query) =>
    Effect.gen(function*() {
      // Orders of grants that are ending stop matching first.
      for (const grantId of state.grantsDue(now)) state.expireGrant(grantId, now, changes)
      const places = batch.filter((c): c is PlaceCmd => c._tag === "Place")
      const keys = new Map<string, Q.GrantKey>()
      for (const p of places) {
        const spent = state.spentAsset(p.input.side)
        keys.set(`${p.input.userId}:${spent.asset}`, { userId: p.input.userId, asset: spent.asset, propertyId: spent.propertyId })
      }
      const viewHeight = yield* view.height
      const pairs = places.map((p) => [p.input.userId, p.input.clientOrderId] as const)
      const { seen, grants } = yield* Q.readForPlaces(market.id, pairs, [...keys.values()], viewHeight, view.balance, query)
      return { seen, grants, viewHeight }
    })

  /** A place: a duplicate client order id answered as a retry, else matched, refused, or held for a sync (unfunded). */
  const applyPlace = (cmd: PlaceCmd, work: BatchWork): void => {
    const { input } = cmd
    const key = `${input.userId}\u0000${input.clientOrderId}`
    const open = state.openByClientId(input.userId, input.clientOrderId)
    if (work.seen.has(key) || open !== undefined || work.placedKeys.has(key)) {
      work.answers.push(() => duplicate(cmd))
      return
    }
    work.placedKeys.add(key)
    const outcome = state.place(input, work.grants.get(`${input.userId}:${state.spentAsset(input.side).asset}`), payTo.get(input.userId), work.now, work.changes)
    if (outcome._tag === "Refused" && outcome.refusal.unfunded === true && cmd.afterSync !== true) work.unfunded.push({ cmd, refusal: outcome.refusal })
    else if (outcome._tag === "Refused") work.answers.push(() => reply(cmd.done, Exit.fail(refuse(outcome.refusal.code, outcome.refusal.msg))))
    else work.placed.push({ cmd, order: outcome.order, trades: outcome.trades })
  }

  /** Step 2, pure on the book: one command matched, cancelled or refused; its answer queued. */
  const applyCommand = (cmd: Command, work: BatchWork): void => {
    const { now, changes, answers } = work
    switch (cmd._tag) {
      case "Place":
        return applyPlace(cmd, work)
      case "Cancel": {
        const outcome = state.cancel(cmd, now, changes)
        answers.push(() => reply(cmd.done, outcome._tag === "Refused"
          ? Exit.fail(refuse(outcome.refusal.code, outcome.refusal.msg))
          : Exit.succeed(orderState(market, outcome.order))))
        return
      }
      case "CancelAll": {
        const ended = state.openOf(cmd.userId).map((o) => state.end(o.orderId, "CANCELED", now, changes)!)
        answers.push(() => reply(cmd.done, ended.length === 0
          ? Exit.fail(refuse(-2011, "Unknown order sent."))
          : Exit.succeed(ended.map((o) => orderState(market, o)))))
        return
      }
      case "ExpireGrant": {
        const n = state.expireGrant(cmd.grantId, now, changes)
        answers.push(() => reply(cmd.done, Exit.succeed(n)))
        return
      }
      case "Tick":
        answers.push(() => reply(cmd.done, Exit.void))
        return
    }
  }

  /**
   * Step 3, after COMMIT: sign and broadcast the legs, answer every command, follow the trades.
   * `placedStates`: each placed order as its batch left it, taken before the next batch ran (a
   * resting order a later batch fills must not answer its place with that later state).
   */
  const settleAndAnswer = (work: BatchWork, placedStates: ReadonlyArray<OrderState>, signing: Fiber.Fiber<Map<string, string>> | undefined) =>
    Effect.gen(function*() {
      const { changes } = work
      const txids = signing === undefined ? new Map<string, string>() : yield* Fiber.join(signing)
      const tSign = performance.now() // instrumentation
      const legsOf = new Map(changes.legs.map((l) => [legKey(l.tradeId, l.leg), l]))
      for (const [i, p] of work.placed.entries()) {
        yield* reply(p.cmd.done, Exit.succeed({ order: placedStates[i]!, fills: fillsOf(p.order, p.trades, legsOf, txids), duplicate: false }))
      }
      for (const answer of work.answers) yield* answer()
      if (changes.trades.length > 0) legsOpen = true
      if (work.unfunded.length > 0) yield* Effect.forkDaemon(retryAfterSync(work.viewHeight, work.unfunded))
      return tSign
    })

  /** Instrumentation: the batch's figures to the bench's hook, if one listens. */
  const reportBatch = (batch: ReadonlyArray<Command>, trades: number, t: { t0: number; tRead: number; tMatch: number; tWrite: number; tCommit: number; tSign: number }) => {
    const hook = marketInstrumentation.onBatch
    if (hook === undefined) return
    const tEnd = performance.now()
    let places = 0, cancels = 0
    for (const c of batch) c._tag === "Place" ? places++ : c._tag === "Cancel" ? cancels++ : undefined
    hook(symbol, {
      commands: batch.length, places, cancels, trades,
      readMs: t.tRead - t.t0, matchMs: t.tMatch - t.tRead, writeMs: t.tWrite - t.tMatch, txMs: t.tCommit - t.t0,
      signMs: t.tSign - t.tCommit, answerMs: tEnd - t.tSign, totalMs: tEnd - t.t0
    })
  }

  /**
   * One batch: read and match and write in one transaction, publish; then its settlement and
   * answers go to the settle loop, and the next batch starts (issue 22: a trading batch waited
   * for its legs' signing, storing and broadcast before the market took its next orders, so the
   * ledger's round trip bounded the market). A batch's legs are signed from its commit on, beside
   * later batches'; its answers wait for them and for the batches before it, so answers still go
   * out in the order the batches committed, at most `settleAhead` batches behind.
   */
  const runBatch = (batch: ReadonlyArray<Command>) =>
    Effect.gen(function*() {
      const t = { t0: performance.now(), tRead: 0, tMatch: 0, tWrite: 0, tCommit: 0, tSign: 0 } // instrumentation
      const now = Date.now()
      const changes = newChanges()
      // One transaction in as many round trips as it has statements: BEGIN goes with the read,
      // COMMIT with the write, and a batch without places (nothing to read) is its write alone.
      yield* Effect.orDie(learnPayTo(batch))
      const work = yield* pipelinedTransaction((tx) =>
        Effect.gen(function*() {
          const { seen, grants, viewHeight } = yield* readBatch(batch, now, changes, tx.query)
          t.tRead = performance.now()
          const work: BatchWork = { now, changes, answers: [], placedKeys: new Set(), placed: [], unfunded: [], viewHeight, seen, grants }
          for (const cmd of batch) applyCommand(cmd, work)
          t.tMatch = performance.now()
          // Market data: this batch's trades, changed levels and candles, written and notified by the batch's own statement.
          const publish = feed.prepare(changes.trades)
          const ending: Ending<{ work: BatchWork; publish: typeof publish }> = { value: { work, publish }, last: Q.writeStatement(sql, market.id, changes, publish) }
          return ending
        })
      ).pipe(Effect.orDie, Effect.map(({ work, publish }) => {
        publish.confirm()
        return work
      }))
      t.tWrite = t.tCommit = performance.now()
      const placedStates = work.placed.map((p) => orderState(market, p.order))
      // Its legs are signed from now on, beside later batches' (each grant's entity signs one call
      // at a time); only the answers wait their turn.
      const signing = changes.legs.length === 0 ? undefined : yield* Effect.fork(signAll(changes.legs))
      yield* Queue.offer(settling, { batch, work, placedStates, signing, t })
    })

  /** A committed batch waiting for its settlement and answers. */
  interface Settle {
    readonly batch: ReadonlyArray<Command>
    readonly work: BatchWork
    readonly placedStates: ReadonlyArray<OrderState>
    readonly signing: Fiber.Fiber<Map<string, string>> | undefined
    readonly t: { t0: number; tRead: number; tMatch: number; tWrite: number; tCommit: number; tSign: number }
  }
  const settling = yield* Queue.bounded<Settle>(settleAhead)

  /**
   * Orders refused for the delegated address's balance while the view may be behind the ledger
   * (a tool funded the address and answered a moment ago): once the view has applied every block
   * the ledger had when they were refused (OmniView.current, not the background follower's
   * timing), placed again if it applied a block the batch had not seen, refused otherwise. One
   * extra pass at most. A view that cannot reach the ledger is asked again a few times; then the
   * refusal stands (the funds cannot be shown to be there).
   */
  const retryAfterSync = (seenHeight: number, refused: ReadonlyArray<{ cmd: Extract<Command, { _tag: "Place" }>; refusal: Refusal }>) =>
    Effect.gen(function*() {
      const reached = yield* view.current.pipe(
        Effect.retry(Schedule.spaced(Duration.millis(currentRetryMs)).pipe(Schedule.intersect(Schedule.recurs(currentAttempts - 1)))),
        Effect.tapError((e) => Effect.logWarning(`market ${symbol}: refusing for funds without a current view`, e)),
        Effect.orElseSucceed(() => seenHeight)
      )
      if (reached > seenHeight) return yield* Queue.offerAll(queue, refused.map(({ cmd }): Command => ({ ...cmd, afterSync: true })))
      for (const { cmd, refusal } of refused) yield* reply(cmd.done, Exit.fail(refuse(refusal.code, refusal.msg)))
    })

  /** A place whose client order id is taken: a retry gets the order as it is now, other parameters -2010. */
  const duplicate = (cmd: Extract<Command, { _tag: "Place" }>) =>
    Effect.gen(function*() {
      const open = state.openByClientId(cmd.input.userId, cmd.input.clientOrderId)
      const rec = open ?? (yield* Q.orderByClientId(market.id, cmd.input.userId, cmd.input.clientOrderId).pipe(Effect.orDie))
      return yield* reply(cmd.done, rec === undefined || !isRetryOf(market, cmd.input, rec)
        ? Exit.fail(refuse(-2010, "Duplicate order sent."))
        : Exit.succeed({ order: orderState(market, rec), fills: [], duplicate: true }))
    })

  /** Into the queue, with the span of the request it serves when that trace is recorded. */
  const push = (command: Queued) => Effect.flatMap(recordedSpan, (span) => Queue.offer(queue, { ...command, span }))

  /** Queues a command; its answer once its batch has committed. */
  const offer = <A>(make: (done: Done<A>) => Queued) =>
    Effect.suspend(() => {
      const { done, answer } = awaited<A>()
      return Effect.as(push(make(done)), answer)
    })
  /** An entity handler's command: only the inbox's are told MarketGone (the cluster resends a handler's request itself). */
  const enqueue = <A>(make: (done: Done<A>) => Queued) =>
    Effect.catchTag(Effect.flatten(offer(make)), "MarketGone", (e) => Effect.die(e))

  /** A Batch's command as the queue takes it, its answer to `answer` as a Batch gives it (a refusal is an answer). */
  const queuedOf = (c: BatchCommand, answer: InboxAnswer): Queued => {
    const done: Done<unknown> = (exit) => answer(batchExitOf(c, exit))
    return c._tag === "Place"
      ? { _tag: "Place", input: c.place, done }
      : c._tag === "Cancel"
      ? cancelCommand(c.cancel, done)
      : { _tag: "CancelAll", userId: c.cancelAll.userId, done }
  }

  /** Queues one command of a Batch from another node; its answer, a refusal included, once its batch has committed. */
  const offerCommand = (c: BatchCommand): Effect.Effect<Effect.Effect<BatchAnswer, MarketGone>> =>
    Effect.suspend(() => {
      const { done, answer } = awaited<BatchAnswer, MarketGone>()
      return Effect.as(push(queuedOf(c, done)), answer)
    })

  /** A Batch from another node: every command queued at once (so they share a transaction), each answered on its own. */
  const batch = (commands: ReadonlyArray<BatchCommand>) =>
    Effect.orDie(Effect.flatMap(Effect.forEach(commands, offerCommand), (answers) => Effect.all(answers)))

  // This node's callers reach the queue directly while the market is active here (LocalMarkets.ts).
  // Registered before the commit loop starts, so it is released after that loop stops: `leave`
  // then tells every caller still waiting (its batch rolled back or never ran) to ask the new
  // owner. A caller's answer is its own callback, called once: by its batch, by the loop's
  // failure, or by `leave` (whichever comes first takes it out of `waiting`). No fiber or Deferred
  // per call here: in the orders bench Effect's runtime was 28 % of the node's CPU (session 21).
  // No span either: a caller whose trace is recorded takes the cluster message (OrderHandlers.ts).
  const waiting = new Set<InboxAnswer>()
  let left = false
  const inbox: MarketInbox = {
    offer: (c, answer) => {
      if (left) return false
      const once: InboxAnswer = (exit) => {
        if (waiting.delete(once)) answer(exit)
      }
      waiting.add(once)
      Queue.unsafeOffer(queue, queuedOf(c, once))
      return true
    }
  }
  const locals = yield* LocalMarkets
  /** This node's callers stop reaching this instance, and those still waiting are told it is gone. */
  const leave = Effect.sync(() => {
    if (locals.get(symbol) === inbox) locals.delete(symbol)
    left = true
    for (const answer of [...waiting]) answer(goneExit)
  })
  yield* Effect.acquireRelease(Effect.sync(() => locals.set(symbol, inbox)), () => leave)

  // A failed commit ends the entity, and the cluster rebuilds it with its book. The commit loop is
  // a forked fiber, whose defect reaches nobody: in the 30-minute chaos run (session 17) a market
  // whose commit failed in a database cut stayed active with no commit loop, taking commands and
  // answering none, for 13 minutes, its settlement sweep still running beside the next instance's.
  // So the loop's failure completes `broken`, every handler dies with it (the cluster's defect path
  // closes this instance's scope and sends the requests in flight to the new one), and this node's
  // callers are told the market is gone.
  const broken = yield* Deferred.make<never>()
  const alive = <A, E, R>(handler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Deferred.isDone(broken), (done) => (done ? Deferred.await(broken) : Effect.raceFirst(handler, Deferred.await(broken))))

  /** A batch or its settlement failed: its callers are told, and the entity ends (rebuilt by the cluster). */
  const batchFailed = (batch: ReadonlyArray<Command>, cause: Cause.Cause<unknown>, what: string) =>
    Effect.gen(function*() {
      const failed = Exit.die(new Error(what))
      for (const c of batch) c.done(failed)
      yield* Effect.logError(`market ${symbol}: batch failed; restarting the entity`, cause)
      yield* leave
      yield* Deferred.failCause(broken, Cause.die(Cause.squash(cause)))
      return yield* Effect.failCause(cause)
    })

  // The commit loop: takes whatever is queued (at least one), runs it as one batch.
  yield* Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    const rest = yield* Queue.takeUpTo(queue, batchMax - 1)
    const batch = [first, ...rest]
    const spans = batch.flatMap((c) => (c.span === undefined ? [] : [c.span]))
    const exit = yield* Effect.exit(runBatch(batch).pipe(withBatchSpan("Market.batch", spans, { "market.symbol": symbol, "batch.commands": batch.length })))
    if (Exit.isFailure(exit)) return yield* batchFailed(batch, exit.cause, "the market's commit failed; nothing of this batch was accepted")
  }).pipe(Effect.forever, Effect.orDie, background)

  // The settle loop: each committed batch's legs signed and broadcast, then its answers, in order.
  // A failure here is after the commit (its orders stand; a caller told otherwise finds them by
  // client order id), and ends the entity as a failed commit does.
  yield* Effect.gen(function*() {
    const job = yield* Queue.take(settling)
    const exit = yield* Effect.exit(settleAndAnswer(job.work, job.placedStates, job.signing))
    if (Exit.isFailure(exit)) return yield* batchFailed(job.batch, exit.cause, "the market failed after its commit; the order's status is unknown")
    job.t.tSign = exit.value
    reportBatch(job.batch, job.work.changes.trades.length, job.t)
  }).pipe(Effect.forever, Effect.orDie, background)

  // Expiry without traffic: when a grant with open orders is due, an empty batch ends them.
  yield* Effect.gen(function*() {
    if (state.grantsDue(Date.now()).length > 0 && (yield* Queue.size(queue)) === 0) {
      yield* Queue.offer(queue, { _tag: "Tick", done: () => {} })
    }
  }).pipe(Effect.repeat(Schedule.spaced(Duration.millis(250))), background)

  // The market's legs, followed once per block: a sweep when the ledger has a new block, and while
  // legs are open at least every sweepIdleMs (an unsigned or lost leg needs a look even with no
  // block). The first sweep, at activation, picks up whatever a crash or a shard move left open.
  let lastSweep = 0
  yield* Effect.gen(function*() {
    const moved = yield* legs.tipMoved
    if (!moved && !(legsOpen && Date.now() - lastSweep >= sweepIdleMs)) return
    lastSweep = Date.now()
    const figures = yield* legs.sweep
    legsOpen = figures.open > 0
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning(`market ${symbol}: settlement sweep failed; the next one tries again`, cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(sweepPollMs))),
    background
  )

  return MarketEntitySchema.of({
    Place: ({ payload }) => alive(enqueue<Placed>((done) => ({ _tag: "Place", input: payload, done }))).pipe(metrics.guard),
    Cancel: ({ payload }) => alive(enqueue<OrderState>((done) => cancelCommand(payload, done))).pipe(metrics.guard),
    Batch: ({ payload }) => alive(batch(payload.commands)).pipe(metrics.guard),
    CancelAll: ({ payload }) => alive(enqueue<ReadonlyArray<OrderState>>((done) => ({ _tag: "CancelAll", userId: payload.userId, done }))).pipe(metrics.guard),
    ExpireGrant: ({ payload }) => alive(enqueue<number>((done) => ({ _tag: "ExpireGrant", grantId: payload.grantId, done }))).pipe(metrics.guard),
    Activate: () => alive(Effect.void)
  })
}), { concurrency: "unbounded", mailboxCapacity: "unbounded" })
