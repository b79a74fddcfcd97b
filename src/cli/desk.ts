// desk keys create --scopes cashout,rewards,stables,wrap [--callback-url URL] [--fee-bps N] [--json]
// desk keys revoke <apiKey> [--json]
// desk link-token [--member ID] [--allow-rebind] [--json]
// desk attest [--json]                                  → the new attestation row
// desk verify --url DESK_URL [--public-key HEX] [--hmac-key KEY] [--json]
// desk coupons add --code C --fee-bps N [--uses K] [--expires-in D] [--json]
// desk tokens list [--json]
// desk tokens set --code C [--min DEC] [--max DEC] [--mint-fee-bps N] [--redeem-fee-bps N]
//   [--wrap-fee-bps N] [--unwrap-fee-bps N] [--confirmations N] [--property ID] [--live true|false] [--json]
// A refusal is one line on stderr and a non-zero exit (2 for usage).
import { randomUUID } from "node:crypto"
import { parseArgs } from "node:util"
import { Duration, Effect, Either } from "effect"
import { Attest, Attestor, attestorId } from "../../schemas/desk/attestor.ts"
import { verifyDesk } from "../desk/attestation/verifyDesk.ts"
import { issueDeskLinkToken } from "../desk/identity/issueLinkToken.ts"
import { deskUrls } from "../desk/identity/urls.ts"
import { runningBaseUrl } from "../platform/http/NodeListeners.ts"
import { createMemberWithKey, revokeKey } from "../desk/keys/DeskKeyStore.ts"
import { checkCallbackUrl, parseFeeBps, parseScopes } from "../desk/keys/policy.ts"
import { nodeConfig } from "../config.ts"
import { applyChange, registryView } from "../desk/tokens/registry.ts"
import { findToken, listTokens, saveToken } from "../desk/tokens/tokenStore.ts"
import { addCoupon, couponView } from "../desk/cashout/couponStore.ts"
import { normalizeCouponCode, parseCouponFee, parseUses } from "../desk/cashout/policy.ts"
import { parseDuration } from "../exchange/authorization/policy.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = "usage: desk keys create --scopes cashout,rewards,stables,wrap [--callback-url URL] [--fee-bps N] [--json] | desk keys revoke <apiKey> [--json] | " +
  "desk link-token [--member ID] [--allow-rebind] [--json] | desk coupons add --code C --fee-bps N [--uses K] [--expires-in D] [--json] | " +
  "desk tokens list [--json] | desk tokens set --code C [--min DEC] [--max DEC] [--mint-fee-bps N] [--redeem-fee-bps N] [--wrap-fee-bps N] [--unwrap-fee-bps N] " +
  "[--confirmations N] [--property ID] [--live true|false] [--json] | desk attest [--json] | desk verify --url DESK_URL [--public-key HEX] [--hmac-key KEY] [--json]"

const refuse = (reason: string, code = 2): number => {
  console.error(`${reason.replace(/\n/g, " ")} (${usage})`)
  return code
}

const parse = (args: ReadonlyArray<string>) => {
  try {
    return parseArgs({
      args: args as Array<string>,
      options: {
        member: { type: "string" }, "allow-rebind": { type: "boolean", default: false },
        scopes: { type: "string" }, "callback-url": { type: "string" }, "fee-bps": { type: "string" }, json: { type: "boolean", default: false },
        code: { type: "string" }, min: { type: "string" }, max: { type: "string" }, "mint-fee-bps": { type: "string" }, "redeem-fee-bps": { type: "string" },
        "wrap-fee-bps": { type: "string" }, "unwrap-fee-bps": { type: "string" }, confirmations: { type: "string" }, property: { type: "string" },
        live: { type: "string" }, url: { type: "string" }, "public-key": { type: "string" }, "hmac-key": { type: "string" }, uses: { type: "string" }, "expires-in": { type: "string" }
      },
      allowPositionals: true,
      strict: true
    })
  } catch (e) {
    return (e as Error).message
  }
}

const create = async (values: { scopes?: string; "callback-url"?: string; "fee-bps"?: string }, json: boolean): Promise<number> => {
  const scopes = parseScopes(values.scopes ?? "")
  if (Either.isLeft(scopes)) return refuse(scopes.left)
  const feeBps = values["fee-bps"] === undefined ? Either.right(undefined) : parseFeeBps(values["fee-bps"])
  if (Either.isLeft(feeBps)) return refuse(feeBps.left)
  const allowHttp = Effect.runSync(Effect.either(nodeConfig)).pipe(Either.map((c) => c.callbackAllowHttp), Either.getOrElse(() => false))
  const callbackUrl = values["callback-url"] === undefined ? Either.right(undefined) : checkCallbackUrl(values["callback-url"], allowHttp)
  if (Either.isLeft(callbackUrl)) return refuse(callbackUrl.left)
  return runCommand(createMemberWithKey({ scopes: scopes.right, feeBps: feeBps.right, callbackUrl: callbackUrl.right }), (r) =>
    console.log(json
      ? JSON.stringify(r)
      : `apiKey:        ${r.apiKey}\nsigningSecret: ${r.signingSecret}\nmemberId:      ${r.memberId}\n(the key and the signing secret are shown once)`))
}

const revoke = (apiKey: string | undefined, json: boolean): Promise<number> | number => {
  if (apiKey === undefined) return refuse("desk keys revoke needs the API key")
  const revoked = Effect.filterOrFail(revokeKey(apiKey), (ok) => ok, () => new Error("no live desk key matches that value"))
  return runCommand(revoked, () => console.log(json ? JSON.stringify({ revoked: true }) : "revoked"))
}

type TokenFlags = { code?: string; min?: string; max?: string; "mint-fee-bps"?: string; "redeem-fee-bps"?: string; "wrap-fee-bps"?: string; "unwrap-fee-bps"?: string; confirmations?: string; property?: string; live?: string }

const showToken = (t: ReturnType<typeof registryView>) =>
  `${t.code.padEnd(6)} ${t.kind.padEnd(8)} property ${String(t.propertyId ?? "-").padEnd(6)} ${t.minAmount}..${t.maxAmount} ` +
  ("mintFeeBps" in t ? `mint ${t.mintFeeBps} bps, redeem ${t.redeemFeeBps} bps` : `wrap ${t.wrapFeeBps} bps, unwrap ${t.unwrapFeeBps} bps, ${t.requiredConfirmations} conf`) +
  (t.live ? " live" : " paused")

const listTokensCommand = (json: boolean) =>
  runCommand(listTokens, (tokens) => {
    const views = tokens.map(registryView)
    console.log(json ? JSON.stringify({ tokens: views }) : views.map(showToken).join("\n"))
  })

const setToken = (v: TokenFlags, json: boolean): Promise<number> | number => {
  if (v.code === undefined) return refuse("desk tokens set needs --code")
  const change = Effect.gen(function*() {
    const token = yield* findToken(v.code!)
    if (token === undefined) return yield* new UsageError(`no desk token ${v.code}; desk tokens list shows them`)
    const wrongFees = token.kind === "dollar" ? ["wrap-fee-bps", "unwrap-fee-bps", "confirmations"] : ["mint-fee-bps", "redeem-fee-bps"]
    const wrong = wrongFees.find((f) => v[f as keyof TokenFlags] !== undefined)
    if (wrong !== undefined) return yield* new UsageError(`--${wrong} is not a setting of ${token.kind} token ${token.code}`)
    const changed = applyChange(token, {
      minAmount: v.min, maxAmount: v.max, feeInBps: v["mint-fee-bps"] ?? v["wrap-fee-bps"], feeOutBps: v["redeem-fee-bps"] ?? v["unwrap-fee-bps"],
      requiredConfirmations: v.confirmations, propertyId: v.property, live: v.live
    })
    if (Either.isLeft(changed)) return yield* new UsageError(changed.left)
    yield* saveToken(changed.right)
    return registryView(changed.right)
  })
  return runCommand(change, (t) => console.log(json ? JSON.stringify(t) : showToken(t)))
}

/** How long `desk attest` waits for the Attestor (a scan of every vault, then the write). */
const attestTimeout = Duration.seconds(120)

const attest = (json: boolean) =>
  runCommand(
    Effect.flatMap(Attestor.client, (client) => client(attestorId).Attest(new Attest({ requestId: randomUUID() }))).pipe(
      Effect.timeoutFail({ duration: attestTimeout, onTimeout: () => new Error("the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?") })
    ),
    (row) => console.log(json ? JSON.stringify(row) : `attestation ${row.seq} at ${row.attestedAt}: ${row.payload_hash}`)
  )

const verifyCommand = async (v: { url?: string; "public-key"?: string; "hmac-key"?: string }, json: boolean): Promise<number> => {
  if (v.url === undefined) return refuse("desk verify needs --url")
  const result = await verifyDesk({ url: v.url, ...(v["public-key"] === undefined ? {} : { publicKey: v["public-key"] }), ...(v["hmac-key"] === undefined ? {} : { hmacKey: v["hmac-key"] }) })
  if (typeof result === "string") {
    console.error(result)
    return 1
  }
  console.log(json ? JSON.stringify(result) : [
    `${result.ok ? "OK" : "NOT OK"}: ${result.rows} attestation(s) from ${result.first ?? "-"} to ${result.last ?? "-"}; Ed25519 key ${result.publicKey}; HMAC ${result.hmacChecked ? "checked" : "not checked (no --hmac-key)"}`,
    ...result.problems,
    ...(result.missingHours.length > 0 ? [`missing hours (${result.missingHours.length}): ${result.missingHours.join(", ")}`] : [])
  ].join("\n"))
  return result.ok ? 0 : 1
}

const addCouponCommand = (v: { code?: string; "fee-bps"?: string; uses?: string; "expires-in"?: string }, json: boolean): Promise<number> | number => {
  if (v.code === undefined || v["fee-bps"] === undefined) return refuse("desk coupons add needs --code and --fee-bps")
  const code = normalizeCouponCode(v.code)
  if (Either.isLeft(code)) return refuse(`--code: ${code.left}`)
  const feeBps = parseCouponFee(v["fee-bps"])
  if (Either.isLeft(feeBps)) return refuse(feeBps.left)
  const usesMax = v.uses === undefined ? Either.right(null) : parseUses(v.uses)
  if (Either.isLeft(usesMax)) return refuse(usesMax.left)
  const lifetime = v["expires-in"] === undefined ? Either.right(null) : Either.mapLeft(parseDuration(v["expires-in"]), (e) => `--expires-in: ${e.message}`)
  if (Either.isLeft(lifetime)) return refuse(lifetime.left)
  const added = Effect.flatMap(addCoupon({ code: code.right, feeBps: feeBps.right, usesMax: usesMax.right, lifetimeMs: lifetime.right }), (c) =>
    c === undefined ? Effect.fail(new UsageError(`coupon ${code.right} exists already`)) : Effect.succeed(couponView(c)))
  return runCommand(added, (c) =>
    console.log(json ? JSON.stringify(c) : `${c.code}: ${c.feeBps} bps, ${c.usesMax ?? "unlimited"} use(s), expires ${c.expiresAt ?? "never"}`))
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const parsed = parse(args)
  if (typeof parsed === "string") return refuse(parsed)
  const [group, verb, ...rest] = parsed.positionals
  const json = parsed.values.json === true
  if (group === "link-token") {
    if (verb !== undefined) return refuse(`unexpected argument: ${verb}`)
    // The URL a running node serves the desk at, not one built from this process's settings.
    const issued = Effect.flatMap(runningBaseUrl("desk", Effect.map(deskUrls, (u) => u.base)), (base) =>
      issueDeskLinkToken({ memberId: parsed.values.member, allowRebind: parsed.values["allow-rebind"] === true, base }))
    return runCommand(issued, (r) =>
      console.log(json ? JSON.stringify(r) : `url:       ${r.url}\nmemberId:  ${r.memberId}\nexpiresAt: ${r.expiresAt}\n(single use, valid 5 minutes)`))
  }
  if (group === "attest") return rest.length > 0 || verb !== undefined ? refuse(`unexpected argument: ${verb}`) : attest(json)
  if (group === "verify") return verb !== undefined ? refuse(`unexpected argument: ${verb}`) : verifyCommand(parsed.values, json)
  if (group === "tokens") {
    if (verb === "list" && rest.length === 0) return listTokensCommand(json)
    if (verb === "set" && rest.length === 0) return setToken(parsed.values, json)
    return refuse(`unknown desk tokens command: ${[verb, ...rest].join(" ")}`)
  }
  if (group === "coupons") {
    if (verb === "add" && rest.length === 0) return addCouponCommand(parsed.values, json)
    return refuse(`unknown desk coupons command: ${[verb, ...rest].join(" ")}`)
  }
  if (group !== "keys") return refuse(`unknown desk command: ${String(group ?? "")}`)
  switch (verb) {
    case "create":
      return rest.length > 0 ? refuse(`unexpected argument: ${rest[0]}`) : create(parsed.values, json)
    case "revoke":
      return revoke(rest[0], json)
    default:
      return refuse(`unknown desk keys command: ${String(verb ?? "")}`)
  }
}
