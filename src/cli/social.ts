// social link-token --account ADDR [--json]
// (Other social verbs, `account create`, `post`, …, belong here too.) A refusal is one line on
// stderr and a non-zero exit (2 for usage).
import { parseArgs } from "node:util"
import { issueSocialLinkToken } from "../social/identity/issueLinkToken.ts"
import { runCommand } from "./runtime.ts"

const usage = "usage: social link-token --account ADDR [--json]"

const refuse = (reason: string, code = 2): number => {
  console.error(`${reason.replace(/\n/g, " ")} (${usage})`)
  return code
}

const linkToken = (args: ReadonlyArray<string>): Promise<number> | number => {
  let parsed
  try {
    parsed = parseArgs({ args: args as Array<string>, options: { account: { type: "string" }, json: { type: "boolean", default: false } }, strict: true })
  } catch (e) {
    return refuse((e as Error).message)
  }
  const account = parsed.values.account?.trim()
  if (account === undefined || account === "") return refuse("social link-token needs --account ADDR")
  return runCommand(issueSocialLinkToken(account), (r) =>
    console.log(parsed.values.json === true ? JSON.stringify(r) : `url:       ${r.url}\nexpiresAt: ${r.expiresAt}\n(single use, valid 5 minutes)`))
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [verb, ...rest] = args
  switch (verb) {
    case "link-token":
      return linkToken(rest)
    default:
      return refuse(`unknown social command: ${String(verb ?? "")}`)
  }
}
