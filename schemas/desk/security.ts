// How a partner call proves itself (spec: Authentication): an API key in `x-api-key` or
// `Authorization: Bearer <API_KEY>`. One middleware per scope requirement (HttpApi middleware
// cannot read the endpoint it guards, so the requirement is the middleware itself): `DeskKey`
// takes any live key, `DeskKeyCashout` etc. a key with that scope. Implemented in
// src/desk/auth/DeskKeyAuth.ts.
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { ServiceUnavailable } from "../common/ErrorBody.ts"
import { Forbidden, Unauthorized } from "./errors.ts"

export const deskScopes = ["cashout", "rewards", "stables", "wrap"] as const
export type DeskScope = (typeof deskScopes)[number]

/** The verified caller: the key's member, scopes and terms. */
export interface DeskCaller {
  readonly memberId: string
  /** The key's row id (never the key itself): for logs and order ownership. */
  readonly keyId: string
  readonly scopes: ReadonlyArray<DeskScope>
  /** Negotiated redemption fee in basis points; null: the desk's default applies. */
  readonly feeBps: number | null
  readonly callbackUrl: string | null
}

export class DeskMember extends Context.Tag("shardline/desk/DeskMember")<DeskMember, DeskCaller>() {}

const keyText = "A partner API key: 64 base62 characters, created on the account page (or `desk keys create`)."
/** Both schemes carry the same key; either header works and both give the same answer. */
const security = {
  apiKey: HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }).pipe(HttpApiSecurity.annotate(OpenApi.Description, keyText)),
  bearer: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, `${keyText} Sent as Authorization: Bearer <API_KEY>.`))
}
const failure = Schema.Union(Unauthorized, Forbidden, ServiceUnavailable)

/** Any live key. */
export class DeskKey extends HttpApiMiddleware.Tag<DeskKey>()("desk/DeskKey", { provides: DeskMember, failure, security }) {}
export class DeskKeyCashout extends HttpApiMiddleware.Tag<DeskKeyCashout>()("desk/DeskKeyCashout", { provides: DeskMember, failure, security }) {}
export class DeskKeyRewards extends HttpApiMiddleware.Tag<DeskKeyRewards>()("desk/DeskKeyRewards", { provides: DeskMember, failure, security }) {}
export class DeskKeyStables extends HttpApiMiddleware.Tag<DeskKeyStables>()("desk/DeskKeyStables", { provides: DeskMember, failure, security }) {}
export class DeskKeyWrap extends HttpApiMiddleware.Tag<DeskKeyWrap>()("desk/DeskKeyWrap", { provides: DeskMember, failure, security }) {}
