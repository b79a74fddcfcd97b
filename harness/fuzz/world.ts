// What a fuzz run stands on: the node's settings (budgets out of the way, both webhook secrets
// set so no route answers its documented "not configured" 503, short header and body times so a
// body that never comes costs seconds, not a minute), and credentials and things that exist
// (an exchange key and web session, a desk key and a cash-out order, a social account with a
// session, an uploaded item, a post and a comment), made the way the CLI and the apps make them.
import { Effect } from "effect"
import { createMemberWithKey } from "../../src/desk/keys/DeskKeyStore.ts"
import { mintSession } from "../../src/platform/signin/sessionStore.ts"
import { createAccount } from "../../src/social/accounts/Accounts.ts"
import { createKey } from "../keys.ts"
import { runWithDatabase } from "../withDatabase.ts"
import type { FuzzContext } from "./generate.ts"
import type { FuzzTarget } from "./run.ts"

export const fuzzWebhookSecret = "fuzz-webhook-secret-for-both-partners"

/** Settings of the node a fuzz run aims at. */
export const fuzzNodeSettings: Readonly<Record<string, string>> = {
  SHARDLINE_RATE_LIMIT_IP_WEIGHT: "1000000000",
  SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "1000000000",
  SHARDLINE_DESK_RATE_LIMIT_IP_WEIGHT: "1000000000",
  SHARDLINE_DESK_PUBLIC_IP_WEIGHT: "1000000000",
  SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "1000000000",
  SHARDLINE_WEBHOOK_SECRET_PARTNER_A: fuzzWebhookSecret,
  SHARDLINE_WEBHOOK_SECRET_PARTNER_B: fuzzWebhookSecret,
  SHARDLINE_HTTP_HEADERS_TIMEOUT_MS: "2000",
  SHARDLINE_HTTP_BODY_TIMEOUT_MS: "2000",
  SHARDLINE_DEVNET_BLOCK_MS: "0"
}

export interface NodeUrls {
  readonly baseUrl: string
  readonly deskUrl: string
  readonly socialUrl: string
}

export const fuzzTargets = (urls: NodeUrls): ReadonlyArray<FuzzTarget> => [
  { service: "exchange", baseUrl: urls.baseUrl },
  { service: "desk", baseUrl: urls.deskUrl },
  { service: "social", baseUrl: urls.socialUrl }
]

const jsonOf = async (r: Response, what: string): Promise<Record<string, unknown>> => {
  const body = (await r.json()) as Record<string, unknown>
  if (r.status >= 300) throw new Error(`fuzz setup: ${what} answered ${r.status} ${JSON.stringify(body)}`)
  return body
}

/** Credentials and ids for the run, against the node's database and listeners. */
export const prepareFuzz = async (databaseUrl: string, urls: NodeUrls): Promise<FuzzContext> => {
  const exchangeKey = await createKey(databaseUrl, { scopes: ["read", "trade"] })
  const made = await runWithDatabase(databaseUrl, Effect.gen(function*() {
    const desk = yield* createMemberWithKey({ scopes: ["cashout", "rewards", "stables", "wrap"] })
    const account = yield* createAccount("fuzzer")
    const socialSession = yield* mintSession("social", account.address)
    const exchangeSession = yield* mintSession("exchange", account.address)
    return { deskKey: desk.apiKey, account, socialSession: socialSession.token, exchangeSession: exchangeSession.token }
  }))
  const bearer = { authorization: `Bearer ${made.socialSession}` }
  const info = await jsonOf(await fetch(`${urls.baseUrl}/api/public/v1/exchangeInfo`), "exchangeInfo")
  const symbols = ((info["symbols"] ?? []) as Array<{ symbol: string }>).map((s) => s.symbol)
  const uploaded = await jsonOf(await fetch(`${urls.socialUrl}/api/social/upload`, { method: "POST", headers: { ...bearer, "content-type": "image/png" }, body: Buffer.from("\x89PNG fuzz media") }), "upload")
  const post = await jsonOf(await fetch(`${urls.socialUrl}/api/social/posts`, {
    method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ body: "fuzz target", media: [uploaded["cid"]] })
  }), "publish")
  const comment = await jsonOf(await fetch(`${urls.socialUrl}/api/social/posts/${String(post["postId"])}/comments`, {
    method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ body: "fuzz comment" })
  }), "comment")
  const order = await jsonOf(await fetch(`${urls.deskUrl}/api/public/v1/cashout/orders`, {
    method: "POST", headers: { "x-api-key": made.deskKey, "content-type": "application/json" }, body: JSON.stringify({ amount: "25", chain: "base", payoutAddress: "0x1111111111111111111111111111111111111111" })
  }), "cash-out order")
  const host = (url: string) => new URL(url).host
  return {
    exchangeKey: { apiKey: exchangeKey.apiKey, secretKey: exchangeKey.secretKey },
    exchangeSession: made.exchangeSession,
    deskKey: made.deskKey,
    socialSession: made.socialSession,
    webhookSecret: fuzzWebhookSecret,
    hosts: { exchange: host(urls.baseUrl), desk: host(urls.deskUrl), social: host(urls.socialUrl) },
    pools: {
      symbol: symbols,
      address: [made.account.address],
      cid: [String(uploaded["cid"]), String(post["metadataCid"])],
      postId: [String(post["postId"])],
      shortId: [String(post["shortId"])],
      commentId: [String(comment["commentId"] ?? comment["id"] ?? "")].filter((x) => x !== ""),
      deskOrderId: [String(order["id"])],
      reference: typeof order["reference"] === "string" ? [order["reference"]] : []
    }
  }
}
