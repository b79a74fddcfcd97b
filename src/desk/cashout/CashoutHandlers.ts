// The cash-out routes (scope cashout): the member's account, coupons, and cash-out orders.
import { randomUUID } from "node:crypto"
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import type { CanonicalValue } from "../../crypto/canonicalJson.ts"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { payoutChains } from "../../../schemas/desk/cashout.ts"
import { BadRequest, Forbidden, IdempotencyKeyReused, NotFound, unavailable } from "../../../schemas/desk/errors.ts"
import { AdvanceOrder, CreateOrder, DeskOrderEntity, type OrderDraft } from "../../../schemas/desk/orders.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { type OrderRow, readOrder } from "../orders/orderStore.ts"
import { cashoutView } from "../orders/orderView.ts"
import { orderDecimalsOf } from "../orders/orderDecimals.ts"
import { TokenDecimals } from "../../chain/evm/TokenDecimals.ts"
import { AppConfig } from "../../platform/Config.ts"
import { findToken } from "../tokens/tokenStore.ts"
import { parseOrderRef } from "../webhooks/partnerWebhook.ts"
import { createLedgerDepositOrder, createMintOrder, createWrapOrder } from "./createCashout.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import { CASHOUT_TOKEN } from "./policy.ts"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { DeskMember } from "../../../schemas/desk/security.ts"
import { isLive } from "../tokens/registry.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import { accountView, cashoutToken, memberAccount, savePayoutAddress } from "./account.ts"
import { findCoupon } from "./couponStore.ts"
import { applyCoupon, evmAddressInput, feePercent, normalizeCouponCode } from "./policy.ts"
import { showAmount } from "../tokens/registry.ts"
import { fingerprintOf, parseIdempotencyKey } from "../../platform/http/idempotencyKey.ts"

const notFound = (id: string) => new NotFound({ error: { code: "not_found", message: `No order ${id.slice(0, 64)}: give its uuid or TX- reference.` } })
const forbidden = () => new Forbidden({ error: { code: "insufficient_scope", message: "This order was created by another API key; only that key reads it." } })

export const badParameter = (message: string) => new BadRequest({ error: { code: "invalid_parameter", message } })
const recordsUnavailable = () => unavailable("The desk's records are unavailable right now; please retry.")

type Refusal = BadRequest | NotFound | Forbidden | IdempotencyKeyReused
const isRefusal = (e: unknown): e is Refusal => e instanceof BadRequest || e instanceof NotFound || e instanceof Forbidden || e instanceof IdempotencyKeyReused

/** Database, chain and wallet failures are 503 (safe to retry); a refusal keeps its 4xx. */
export const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (e): e is Exclude<E, Refusal> => !isRefusal(e), (e) =>
    Effect.zipRight(Effect.logWarning("desk cash-out: unavailable", e), Effect.fail(recordsUnavailable())))

/** An order body as its fingerprint reads it: the amount as written (a number's digits, not 6 rounded decimals). */
const bodyOf = (payload: { readonly amount: number | string }): CanonicalValue => ({ ...payload, amount: String(payload.amount) })

/** What every desk order route needs, taken once per listener. */
export const orderServices = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const wallets = yield* DeskWallets
  const ledger = yield* UtxoLedger
  const evm = yield* EvmLedgers
  const omni = yield* OmniView
  const orders = yield* DeskOrderEntity.client
  const coins = yield* CoinLedgers
  const decimals = yield* TokenDecimals
  const config = yield* AppConfig
  const provide = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient | DeskWallets | UtxoLedger | EvmLedgers | CoinLedgers | TokenDecimals | AppConfig>) =>
    e.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(DeskWallets, wallets), Effect.provideService(UtxoLedger, ledger),
      Effect.provideService(EvmLedgers, evm), Effect.provideService(CoinLedgers, coins), Effect.provideService(TokenDecimals, decimals),
      Effect.provideService(AppConfig, config))
  /** An order row as the wire shows it. */
  const viewOf = (row: OrderRow) =>
    Effect.gen(function*() {
      const token = yield* provide(findToken(row.asset))
      return cashoutView(row, token?.propertyId ?? null, yield* provide(orderDecimalsOf(row)))
    })
  const view = (id: string) =>
    Effect.gen(function*() {
      const row = yield* provide(readOrder({ _tag: "Uuid", id }))
      if (row === undefined) return yield* Effect.dieMessage(`order ${id}: not found after it was read`)
      return yield* viewOf(row)
    })
  /**
   * Sends the checked order to a new DeskOrder entity, which writes it (the entity is the only
   * writer of its row), with the request's Idempotency-Key: the key's claim is the entity's, in
   * the order's transaction, so a retry (or a concurrent one) answers the order the key made
   * first. `route` and `body` are the request's: their fingerprint tells a retry from a reuse.
   */
  const started = (route: string, body: CanonicalValue, draft: OrderDraft) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = parseIdempotencyKey(request.headers["idempotency-key"])
      if (Either.isLeft(key)) return yield* Effect.fail(badParameter(`Idempotency-Key: ${key.left}`))
      const idempotency = key.right === undefined ? null : { key: key.right, fingerprint: fingerprintOf({ route, body }) }
      const created = yield* orders(randomUUID()).Create(new CreateOrder({ draft, idempotency }))
      return yield* view(created.orderId)
    })
  return { provide, view, viewOf, started, orders, omni }
})

export const CashoutHandlers = HttpApiBuilder.group(DeskApi, "cashout", (handlers) =>
  Effect.gen(function*() {
    const { provide, started } = yield* orderServices
    const account = Effect.flatMap(DeskMember, (m) => provide(memberAccount(m)))
    return handlers
      .handle("settings", () =>
        Effect.gen(function*() {
          const token = yield* provide(cashoutToken)
          return {
            live: isLive(token),
            asset: token.code,
            propertyId: token.propertyId,
            minAmount: showAmount(token.minBase),
            maxAmount: showAmount(token.maxBase),
            redeemFeeBps: token.feeOutBps,
            chains: [...payoutChains],
            account: accountView(yield* account)
          }
        }).pipe(orUnavailable))
      .handle("depositAddress", () => Effect.map(account, accountView).pipe(orUnavailable))
      .handle("payoutAddress", () => Effect.map(account, accountView).pipe(orUnavailable))
      .handle("savePayoutAddress", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* DeskMember
          const address = evmAddressInput("payoutAddress", payload.payoutAddress)
          if (Either.isLeft(address)) return yield* Effect.fail(badParameter(address.left))
          yield* provide(savePayoutAddress(member.memberId, address.right))
          return accountView(yield* account)
        }).pipe(orUnavailable))
      .handle("coupon", ({ payload }) =>
        Effect.gen(function*() {
          const code = normalizeCouponCode(payload.code)
          if (Either.isLeft(code)) return yield* Effect.fail(badParameter(`code: ${code.left}`))
          const { defaultRedeemFeeBps, redeemFeeBps } = yield* account
          const check = applyCoupon(yield* provide(findCoupon(code.right)), redeemFeeBps, new Date())
          const fee = check.valid ? check.feeBps : redeemFeeBps
          return {
            code: code.right,
            valid: check.valid,
            redeemFeeBps: fee,
            feePercent: feePercent(fee),
            defaultRedeemFeeBps,
            ...(check.valid ? {} : { reason: check.reason })
          }
        }).pipe(orUnavailable))
      .handle("createOrder", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* DeskMember
          const draft = yield* provide(createLedgerDepositOrder(member, { kind: "cashout", tokenCode: CASHOUT_TOKEN, ...payload }))
          return yield* started("cashout", bodyOf(payload), draft)
        }).pipe(orUnavailable))
  }))

/** The poll: only the creating key reads an order (403 for another key); it advances the order first. */
const pollOrder = (kinds: ReadonlyArray<string>) =>
  Effect.map(orderServices, ({ orders, provide, view }) => (id: string) =>
    Effect.gen(function*() {
      const member = yield* DeskMember
      const ref = parseOrderRef(id)
      const row = ref === undefined ? undefined : yield* provide(readOrder(ref))
      if (row === undefined || !kinds.includes(row.kind)) return yield* Effect.fail(notFound(id))
      if (row.key_id !== member.keyId) return yield* Effect.fail(forbidden())
      // Polling advances the order (spec), so the answer is fresh.
      yield* orders(row.id).Advance(new AdvanceOrder(), {}).pipe(
        Effect.timeout("10 seconds"),
        Effect.catchAllCause((c) => Effect.logWarning(`order ${row.id}: poll could not advance it`, c)))
      return yield* view(row.id)
    }).pipe(orUnavailable))

export const OrderPollHandlers = HttpApiBuilder.group(DeskApi, "orderPoll", (handlers) =>
  Effect.map(pollOrder(["cashout", "mint", "redeem"]), (poll) => handlers.handle("order", ({ path }) => poll(path.id))))

export const WrapHandlers = HttpApiBuilder.group(DeskApi, "wrap", (handlers) =>
  Effect.gen(function*() {
    const { provide, started } = yield* orderServices
    const poll = yield* pollOrder(["wrap", "unwrap"])
    return handlers
      .handle("order", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* DeskMember
          return yield* started("wrap", bodyOf(payload), yield* provide(createWrapOrder(member, payload)))
        }).pipe(orUnavailable))
      .handle("poll", ({ path }) => poll(path.id))
  }))

export const StablesHandlers = HttpApiBuilder.group(DeskApi, "stables", (handlers) =>
  Effect.gen(function*() {
    const { provide, started } = yield* orderServices
    return handlers.handle("order", ({ payload }) =>
      Effect.gen(function*() {
        const member = yield* DeskMember
        const draft = payload.direction === "mint"
          ? yield* provide(createMintOrder(member, { tokenCode: payload.asset, amount: payload.amount, chain: payload.chain, stablecoin: payload.token, recipient: payload.recipient, refundAddress: payload.refundAddress }))
          : payload.direction === "redeem"
          ? yield* provide(createLedgerDepositOrder(member, {
            kind: "redeem", tokenCode: payload.asset, amount: payload.amount, chain: payload.chain, payoutAddress: payload.payoutAddress, refundAddress: payload.refundAddress
          }))
          : yield* Effect.fail(badParameter(`direction must be mint or redeem, got "${payload.direction.slice(0, 10)}"`))
        return yield* started("stables", bodyOf(payload), draft)
      }).pipe(orUnavailable))
  }))

