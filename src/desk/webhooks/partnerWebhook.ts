// What an inbound partner webhook means, pure: is the presented secret the partner's (constant
// time), which order does `order_id` name, and what makes two deliveries the same event.
import { Option, Redacted } from "effect"
import type { Partner } from "../../../schemas/desk/webhooks.ts"
import { canonicalJson, type CanonicalValue } from "../../crypto/canonicalJson.ts"
import { constantTimeEqual } from "../../crypto/hmac.ts"
import { sha256Hex } from "../../crypto/token.ts"

export type SecretCheck = "unset" | "wrong" | "ok"

/** The partner's secret against what the request presented; "unset" when the desk has none. */
export const checkSecret = (configured: Option.Option<Redacted.Redacted>, presented: string | undefined): SecretCheck =>
  Option.isNone(configured)
    ? "unset"
    : presented !== undefined && constantTimeEqual(Redacted.value(configured.value), presented)
    ? "ok"
    : "wrong"

const SHORT_REF = /^TX-[0-9A-Z]{8}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export type OrderRef = { readonly _tag: "ShortRef"; readonly ref: string } | { readonly _tag: "Uuid"; readonly id: string }

/** `TX-` + 8 characters (any case in, upper case kept) or a uuid; undefined for anything else. */
export const parseOrderRef = (text: string): OrderRef | undefined => {
  const t = text.trim()
  if (SHORT_REF.test(t.toUpperCase())) return { _tag: "ShortRef", ref: t.toUpperCase() }
  if (UUID.test(t)) return { _tag: "Uuid", id: t.toLowerCase() }
  return undefined
}

/**
 * Two deliveries are the same event when the same partner sent the same body (keys in any order):
 * partners retry, and an event recorded twice would page operations twice.
 */
export const dedupeKey = (partner: Partner, body: CanonicalValue): string => `${partner}:${sha256Hex(canonicalJson(body))}`
