// address check <address> [--network ledger|litecoin-regtest] [--json]
// Applies the ledger address rule (src/chain/address.ts). Exit 0 valid, 1 invalid, 2 usage.
// With --json stdout is exactly one object: {"valid":true,"type":"p2pkh"} or {"valid":false,"error":"…"}.
import { parseOrUsage } from "./args.ts"
import { validateLedgerAddress } from "../chain/address.ts"
import { ledgerParams, litecoinRegtestParams, type UtxoChainParams } from "../chain/params.ts"

const usage = "usage: address check <address> [--network ledger|litecoin-regtest] [--json]"

export const networks: Readonly<Record<string, UtxoChainParams>> = {
  [ledgerParams.name]: ledgerParams,
  [litecoinRegtestParams.name]: litecoinRegtestParams
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [sub, ...rest] = args
  const parsed = parseOrUsage(rest, {
    network: { type: "string", default: ledgerParams.name },
    json: { type: "boolean", default: false }
  }, usage, true)
  if (!parsed) return 2
  const { values, positionals } = parsed
  const params = networks[values.network ?? ledgerParams.name]
  if (sub !== "check" || positionals.length !== 1 || params === undefined) {
    console.error(usage)
    return 2
  }
  const result = validateLedgerAddress(positionals[0], params)
  const body = result.valid ? { valid: true, type: result.type } : { valid: false, error: result.error }
  if (values.json === true) console.log(JSON.stringify(body))
  else console.log(result.valid ? `valid ${result.type} address` : `invalid: ${result.error}`)
  return result.valid ? 0 : 1
}
