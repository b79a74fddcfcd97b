// What every desk order request checks the same way: the refusal shape, and an amount of the
// order's precision within its token's limits.
import { Effect, Either } from "effect"
import { BadRequest } from "../../../schemas/desk/errors.ts"
import { type DeskToken, showAmount, TOKEN_DECIMALS } from "../tokens/registry.ts"
import { amountBase } from "./policy.ts"

/** How long an order waits for its deposit (docs/desk-orders.md, "Expiry"). */
export const ORDER_WINDOW_MS = 60 * 60_000

export const bad = (message: string) => new BadRequest({ error: { code: "invalid_parameter", message } })

/** An amount of `decimals` precision within the token's limits (kept in the token's 8 decimals). */
export const orderAmount = (token: DeskToken, amount: number | string, decimals: number) =>
  Effect.gen(function*() {
    const base = amountBase(amount, Math.min(decimals, TOKEN_DECIMALS))
    if (Either.isLeft(base)) return yield* Effect.fail(bad(base.left))
    const inToken = base.right * 10n ** BigInt(TOKEN_DECIMALS - Math.min(decimals, TOKEN_DECIMALS))
    if (inToken < token.minBase || inToken > token.maxBase) {
      return yield* Effect.fail(bad(`amount must be between ${showAmount(token.minBase)} and ${showAmount(token.maxBase)} ${token.code}`))
    }
    return base.right * 10n ** BigInt(Math.max(0, decimals - TOKEN_DECIMALS))
  })

