// The wallet-link QR a web app shows a signed-in person (desk and social, issue 24): what the QR
// holds, its deep link and expiry, and its live state, polled by the page. One definition; each
// service names the route its page polls and adds what only it has (the desk: whether a linked
// wallet may be replaced, and the wallet once linked).
import { Schema } from "effect"

export const LinkStatus = Schema.Literal("waiting", "linked", "expired", "refused")
export type LinkStatus = typeof LinkStatus.Type

/** The QR's fields; `statePath` is the route its state is polled at, `extra` comes before pollIntervalMs. */
export const linkQrOf = <F extends Schema.Struct.Fields>(statePath: string, extra: F) =>
  Schema.Struct({
    challengeId: Schema.String.annotations({ description: `Poll GET ${statePath} for the link's state` }),
    url: Schema.String.annotations({ description: "What the QR holds: the single-use wallet-link URL (5 minutes)" }),
    deepLink: Schema.String.annotations({ description: "shardline-wallet://link?url=<the link URL>: for a wallet on the same device" }),
    expiresAt: Schema.String,
    ...extra,
    pollIntervalMs: Schema.Int
  })

/** The QR's live state; `linked` says what a link means on this service, `extra` follows expiresAt. */
export const linkStateOf = <F extends Schema.Struct.Fields>(linked: string, extra: F) =>
  Schema.Struct({
    challengeId: Schema.String,
    status: LinkStatus.annotations({
      description: `waiting: not used yet; linked: ${linked}; expired: 5 minutes passed unused; refused: too many refused attempts spent it`
    }),
    expiresAt: Schema.String,
    ...extra
  })
