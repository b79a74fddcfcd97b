// Posting one order milestone to the callback URL of the key that created the order: signed
// (callbackSignature.ts), to a checked target (callbackTarget.ts), within 5 s, best effort and not
// retried (spec: Events; the poll endpoint is the source of truth). Beyond the spec, every
// attempt is recorded with an event id and its outcome, which the key reads at GET
// /api/public/v1/callbacks. Never fails and never blocks longer than the timeout: an order's
// progress must not depend on a partner's server.
import { randomUUID } from "node:crypto"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DeskConfig } from "../DeskConfig.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { callbackHeaders } from "./callbackSignature.ts"
import { guardedLookup, targetRefusal } from "./callbackTarget.ts"

export const callbackTimeoutMs = 5_000
/** Bytes of a receiver's answer read at most (only the status matters). */
const answerBytesMax = 4_096

/** A decimal amount written into the JSON as a number token with exactly these digits (never through a float). */
export interface ExactNumber {
  readonly exact: string
}
const isExact = (v: unknown): v is ExactNumber => typeof v === "object" && v !== null && "exact" in v && Object.keys(v).length === 1

/** The spec's callback body; `amount` and `order.payoutAmount` are JSON numbers with their exact digits. */
export interface CallbackEvent {
  readonly type: string
  readonly message: string
  readonly amount: ExactNumber
  readonly chain: string
  readonly txid: string
  readonly occurredAt: string
  readonly order: { readonly id: string; readonly status: string; readonly payoutAmount: ExactNumber; readonly [more: string]: unknown }
}

const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/

/** JSON text in which every ExactNumber is a number token carrying its own digits. */
export const callbackBody = (eventId: string, event: CallbackEvent): string => {
  const marks: Array<string> = []
  // A random tag per body, so no string a partner or a chain put in the event can look like a mark.
  const tag = randomUUID().replace(/-/g, "")
  const text = JSON.stringify({ eventId, ...event }, (_k, v: unknown) => {
    if (!isExact(v)) return v
    if (!DECIMAL.test(v.exact)) throw new Error(`not a decimal: ${v.exact}`)
    marks.push(v.exact)
    return `\u0000${tag}:${marks.length - 1}`
  })
  return text.replace(new RegExp(`"\\\\u0000${tag}:(\\d+)"`, "g"), (_m, i: string) => marks[Number(i)]!)
}

export type DeliveryOutcome = "delivered" | "rejected" | "failed" | "refused_target"

export interface Delivery {
  readonly outcome: DeliveryOutcome
  readonly httpStatus: number | null
  readonly error: string | null
  readonly durationMs: number
}

/** One POST; resolves (never rejects) with what happened. */
export const deliver = (url: string, headers: Record<string, string>, body: string, allowHttp: boolean, timeoutMs = callbackTimeoutMs): Promise<Delivery> => {
  const started = performance.now()
  const took = () => Math.round(performance.now() - started)
  const target = URL.canParse(url) ? new URL(url) : undefined
  const refusal = target === undefined ? "not a URL" : targetRefusal(target, allowHttp)
  if (refusal !== undefined) return Promise.resolve({ outcome: "refused_target", httpStatus: null, error: refusal, durationMs: 0 })
  return new Promise<Delivery>((resolve) => {
    let settled = false
    const done = (d: Omit<Delivery, "durationMs">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...d, durationMs: took() })
    }
    const send = target!.protocol === "https:" ? httpsRequest : httpRequest
    const req = send(target!, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)), "user-agent": "shardline-desk-callbacks" },
      lookup: guardedLookup(allowHttp) as never
    }, (res) => {
      let read = 0
      res.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read > answerBytesMax) res.destroy()
      })
      res.on("close", () => {
        const status = res.statusCode ?? 0
        done({ outcome: status >= 200 && status < 300 ? "delivered" : "rejected", httpStatus: status, error: null })
      })
    })
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
    req.on("error", (e: NodeJS.ErrnoException) =>
      done({ outcome: e.code === "ECALLBACKTARGET" ? "refused_target" : "failed", httpStatus: null, error: e.message.slice(0, 300) }))
    req.end(body)
  })
}

export interface SentCallback extends Delivery {
  readonly eventId: string
}

/**
 * Sends `event` to the callback URL of key `keyId` and records the attempt; undefined when the key
 * has no callback URL. Keys revoked since the order was made still get their order's milestones:
 * the order is still theirs.
 */
export const sendCallback = (keyId: string, orderId: string | null, event: CallbackEvent) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const config = yield* DeskConfig
    const [key] = yield* sql<{ callback_url: string | null; signing_secret_enc: string }>`
      SELECT callback_url, signing_secret_enc FROM desk_api_keys WHERE id = ${keyId}`
    if (key?.callback_url == null) return undefined
    const eventId = randomUUID()
    const body = callbackBody(eventId, event)
    const headers = callbackHeaders(box.open(key.signing_secret_enc), event.type, Math.floor(Date.now() / 1000), body)
    const delivery = yield* Effect.promise(() => deliver(key.callback_url!, headers, body, config.callbackAllowHttp))
    yield* sql`INSERT INTO desk_callback_deliveries (event_id, key_id, order_id, event_type, url, outcome, http_status, error, duration_ms)
      VALUES (${eventId}, ${keyId}, ${orderId}, ${event.type}, ${key.callback_url}, ${delivery.outcome}, ${delivery.httpStatus}, ${delivery.error}, ${delivery.durationMs})`
    yield* Effect.logInfo(`desk callback ${event.type}: ${delivery.outcome}`).pipe(Effect.annotateLogs({ eventId, keyId, orderId, status: delivery.httpStatus }))
    const sent: SentCallback = { eventId, ...delivery }
    return sent
  }).pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("desk callback not sent", cause), undefined)))
