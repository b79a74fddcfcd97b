// desk keys create --scopes cashout,rewards,stables,wrap [--callback-url URL] [--fee-bps N] [--json]
// desk keys revoke <apiKey> [--json]
// desk link-token [--member ID] [--allow-rebind] [--json]
// A refusal is one line on stderr and a non-zero exit (2 for usage).
import { parseArgs } from "node:util"
import { Effect, Either } from "effect"
import { issueDeskLinkToken } from "../desk/identity/issueLinkToken.ts"
import { createMemberWithKey, revokeKey } from "../desk/keys/DeskKeyStore.ts"
import { checkCallbackUrl, parseFeeBps, parseScopes } from "../desk/keys/policy.ts"
import { appConfig } from "../platform/Config.ts"
import { runCommand } from "./runtime.ts"

const usage = "usage: desk keys create --scopes cashout,rewards,stables,wrap [--callback-url URL] [--fee-bps N] [--json] | desk keys revoke <apiKey> [--json] | desk link-token [--member ID] [--allow-rebind] [--json]"

const refuse = (reason: string, code = 2): number => {
  console.error(`${reason.replace(/\n/g, " ")} (${usage})`)
  return code
}

const parse = (args: ReadonlyArray<string>) => {
  try {
    return parseArgs({
      args: args as Array<string>,
      options: { member: { type: "string" }, "allow-rebind": { type: "boolean", default: false }, scopes: { type: "string" }, "callback-url": { type: "string" }, "fee-bps": { type: "string" }, json: { type: "boolean", default: false } },
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
  const allowHttp = Effect.runSync(Effect.either(appConfig)).pipe(Either.map((c) => c.callbackAllowHttp), Either.getOrElse(() => false))
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

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const parsed = parse(args)
  if (typeof parsed === "string") return refuse(parsed)
  const [group, verb, ...rest] = parsed.positionals
  const json = parsed.values.json === true
  if (group === "link-token") {
    if (verb !== undefined) return refuse(`unexpected argument: ${verb}`)
    return runCommand(issueDeskLinkToken({ memberId: parsed.values.member, allowRebind: parsed.values["allow-rebind"] === true }), (r) =>
      console.log(json ? JSON.stringify(r) : `url:       ${r.url}\nmemberId:  ${r.memberId}\nexpiresAt: ${r.expiresAt}\n(single use, valid 5 minutes)`))
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
