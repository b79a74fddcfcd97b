// What backs a service's own Omni token when a devnet pays it (`devnet pay --asset SUSD`): the
// devnet then pays the backing (the same amount of USDC, BTC, LTC or ETH) into the issuer's
// reserve address before the issuer grants the token, so the token a newcomer is paid is as
// backed as a minted one and the published reserves stay whole. The platform knows no service:
// the desk provides this (src/desk/tokens/devnetBacking.ts); without it such a token is refused.
import { Context, type Effect } from "effect"
import type { DevnetChainName } from "../../../schemas/devnet.ts"

export interface Backing {
  /** The Omni property's issuer: a system wallet name. */
  readonly issuer: string
  /** Where the backing is paid, in which asset (undefined: the chain's native coin). */
  readonly chain: DevnetChainName
  readonly asset: string | undefined
  readonly address: string
}

export interface DevnetBackingShape {
  /** The backing of token `code` (case-insensitive), or undefined when `code` is not such a token. */
  readonly backingOf: (code: string) => Effect.Effect<Backing | undefined>
}

export class DevnetBacking extends Context.Tag("shardline/DevnetBacking")<DevnetBacking, DevnetBackingShape>() {}
