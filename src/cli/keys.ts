// keys create --scopes read,trade [--ip 127.0.0.1 ...] [--address T... ...] [--user N] [--json]
// keys list [--json]
// keys revoke <apiKey>
import { parseOrUsage } from "./args.ts"
import { Effect } from "effect"
import { ApiKeys, allScopes, type Scope } from "../exchange/auth/ApiKeys.ts"
import { runCommand } from "./runtime.ts"

const usage = "usage: keys create --scopes read,trade [--ip ADDR]... [--address T...]... [--user ID] [--json] | keys list [--json] | keys revoke <apiKey>"

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [sub, ...rest] = args
  const parsed = parseOrUsage(rest, {
    scopes: { type: "string" },
    ip: { type: "string", multiple: true },
    address: { type: "string", multiple: true },
    user: { type: "string" },
    label: { type: "string" },
    json: { type: "boolean", default: false }
  }, usage, true)
  if (!parsed) return 2
  const { values, positionals } = parsed
  const json = values.json === true
  switch (sub) {
    case "create": {
      const scopes = (values.scopes ?? "read").split(",").map((s) => s.trim()).filter((s) => s !== "")
      const bad = scopes.filter((s) => !allScopes.includes(s as Scope))
      if (bad.length > 0 || scopes.length === 0) {
        console.error(`unknown scope(s): ${bad.join(", ")}; scopes are read and trade\n${usage}`)
        return 2
      }
      if (values.user !== undefined && !/^\d+$/.test(values.user)) {
        console.error(`--user must be a numeric user id\n${usage}`)
        return 2
      }
      const addresses = values.address ?? []
      const invalid = addresses.length === 0 ? undefined : (await import("./addressRule.ts")).validateAddresses(addresses)
      if (invalid) {
        console.error(invalid)
        return 2
      }
      return runCommand(
        Effect.flatMap(ApiKeys, (keys) => keys.create({
          scopes: scopes as Array<Scope>,
          ipAllowlist: values.ip ?? [],
          addresses,
          ...(values.user !== undefined ? { userId: Number(values.user) } : {}),
          ...(values.label !== undefined ? { label: values.label } : {})
        })),
        (r) => console.log(json ? JSON.stringify({ ...r, scopes, ipAllowlist: values.ip ?? [] }) : `apiKey:    ${r.apiKey}\nsecretKey: ${r.secretKey}\nuserId:    ${r.userId}\n(the secret is shown once)`)
      )
    }
    case "list":
      return runCommand(Effect.flatMap(ApiKeys, (keys) => keys.list), (rows) =>
        console.log(json ? JSON.stringify(rows) : rows.map((r) =>
          `${r.apiKey}  user ${r.userId}  ${r.scopes.join(",")}  ${r.ipAllowlist.join(",") || "any ip"}  ${r.revokedAt ? `revoked ${r.revokedAt}` : "active"}`).join("\n")))
    case "revoke": {
      const apiKey = positionals[0]
      if (!apiKey) {
        console.error(usage)
        return 2
      }
      // A revoke that revoked nothing (unknown or already revoked key) exits 1: scripts must see it.
      let revoked = false
      const code = await runCommand(Effect.flatMap(ApiKeys, (keys) => keys.revoke(apiKey)), (ok) => {
        revoked = ok
        if (json) console.log(JSON.stringify({ apiKey, revoked: ok }))
        else if (ok) console.log(`revoked ${apiKey}`)
        else console.error(`no active key ${apiKey}`)
      })
      return code === 0 && !revoked ? 1 : code
    }
    default:
      console.error(usage)
      return 2
  }
}
