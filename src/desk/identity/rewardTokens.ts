// Which Omni tokens rewards sample: the desk's own dollar tokens from its registry (SUSD, XUSD:
// every dollar token with a property), per token and in total; or, when the operator sets
// SHARDLINE_DESK_TOKEN_PROPERTY, that one property instead (an override, e.g. another ledger's
// dollar). Read at each sample, so a token issued later is sampled from its first slot on.
import { Effect, Option } from "effect"
import { listTokens } from "../tokens/tokenStore.ts"

export interface RewardToken {
  /** The registry code, or null for an override property the registry does not know. */
  readonly asset: string | null
  readonly propertyId: number
}

export const rewardTokens = (override: Option.Option<number>) =>
  Effect.map(listTokens, (tokens): ReadonlyArray<RewardToken> =>
    Option.match(override, {
      onNone: () => tokens.filter((t) => t.kind === "dollar" && t.propertyId !== null).map((t) => ({ asset: t.code, propertyId: t.propertyId! })),
      onSome: (propertyId) => [{ asset: tokens.find((t) => t.propertyId === propertyId)?.code ?? null, propertyId }]
    }))
