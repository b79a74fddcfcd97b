// Script and transaction helpers shared by the ledger implementations. Pure.
import { script as bscript, Transaction } from "bitcoinjs-lib"
import type { UtxoChainParams } from "../../params.ts"
import { addressScript as builderAddressScript } from "../../txBuilder.ts"
import type { Result } from "../../../crypto/result.ts"
import { ledgerLimits, type Owner } from "../UtxoLedger.ts"

/** The builder's address check; a ledger reports the refusal as text (LedgerInvalidInput). */
export const addressScript = (address: string, params: UtxoChainParams): Result<Uint8Array> => {
  const s = builderAddressScript(address, params)
  return s.ok ? s : { ok: false, error: s.error.message }
}

const OP_RETURN = 0x6a

export const ownerScript = (owner: Owner, params: UtxoChainParams): Result<Uint8Array> =>
  typeof owner === "string" ? addressScript(owner, params) : { ok: true, value: owner }

export const isP2pkh = (s: Uint8Array): boolean =>
  s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac

export const isP2sh = (s: Uint8Array): boolean => s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87

export const isNullData = (s: Uint8Array): boolean => s.length > 0 && s[0] === OP_RETURN

/** Bytes pushed after OP_RETURN, or undefined when something other than pushes follows. */
export const nullDataBytes = (s: Uint8Array): number | undefined => {
  if (!isNullData(s)) return undefined
  const chunks = bscript.decompile(s)
  if (chunks === null) return undefined
  let n = 0
  for (const c of chunks.slice(1)) {
    if (typeof c === "number") {
      // Small-number opcodes are pushes too (bitcoind's IsPushOnly); they carry no data bytes.
      if (c === 0 || (c >= 0x51 && c <= 0x60) || c === 0x4f) continue
      return undefined
    }
    n += c.length
  }
  return n
}

export const parseTx = (hex: string): Result<Transaction> => {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return { ok: false, error: "transaction is not hex" }
  if (hex.length / 2 > ledgerLimits.txBytesMax) return { ok: false, error: `transaction is larger than ${ledgerLimits.txBytesMax} bytes` }
  try {
    return { ok: true, value: Transaction.fromHex(hex) }
  } catch (e) {
    return { ok: false, error: `transaction does not parse: ${e instanceof Error ? e.message : String(e)}` }
  }
}

/** Display hex (txid, block hash) of a hash bitcoinjs keeps in internal byte order. */
export const displayHex = (hash: Uint8Array): string => Buffer.from(hash).reverse().toString("hex")

export const outpointKey = (txid: string, vout: number): string => `${txid}:${vout}`

export const bytesHex = (b: Uint8Array): string => Buffer.from(b).toString("hex")
