// message verify --address <a> --signature <base64> --message <text> [--network …] [--json]
// BIP-137 verification with the chain's prefix (src/chain/message.ts). Exit 0 valid, 1 invalid,
// 2 usage. With --json stdout is exactly one object: {"valid":true} or {"valid":false,"reason":"…"}.
import { verifyMessage } from "../chain/message.ts"
import { ledgerParams } from "../chain/params.ts"
import { networks } from "./address.ts"
import { parseOrUsage } from "./args.ts"

const usage =
  "usage: message verify --address <address> --signature <base64> --message <text> [--network ledger|litecoin-regtest] [--json]"

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [sub, ...rest] = args
  const parsed = parseOrUsage(rest, {
    address: { type: "string" },
    signature: { type: "string" },
    message: { type: "string" },
    network: { type: "string", default: ledgerParams.name },
    json: { type: "boolean", default: false }
  }, usage)
  if (!parsed) return 2
  const { address, signature, message, network, json } = parsed.values
  const params = networks[network ?? ledgerParams.name]
  if (sub !== "verify" || address === undefined || signature === undefined || message === undefined || params === undefined) {
    console.error(usage)
    return 2
  }
  const result = verifyMessage({ address, signature, message }, params)
  const body = result.valid ? { valid: true } : { valid: false, reason: result.reason }
  if (json === true) console.log(JSON.stringify(body))
  else console.log(result.valid ? "valid signature" : `invalid: ${result.reason}`)
  return result.valid ? 0 : 1
}
