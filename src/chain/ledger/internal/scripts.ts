// Script and transaction helpers shared by the ledger implementations. Pure.
import { script as bscript, Transaction } from "bitcoinjs-lib"
import { Data, Either } from "effect"
import type { InvalidAddress } from "../../buildErrors.ts"
import type { UtxoChainParams } from "../../params.ts"
import { addressScript } from "../../txBuilder.ts"
import { ledgerLimits, type Owner } from "../UtxoLedger.ts"

/** Transaction hex that is not hex, too large, or does not parse; `message` is for a person. */
export class TxInvalid extends Data.TaggedError("TxInvalid")<{ readonly message: string }> {}

const txInvalid = (message: string) => Either.left(new TxInvalid({ message }))

const OP_RETURN = 0x6a

/** The builder's address check (a ledger reports its message as LedgerInvalidInput), or the raw script. */
export const ownerScript = (owner: Owner, params: UtxoChainParams): Either.Either<Uint8Array, InvalidAddress> =>
  typeof owner === "string" ? addressScript(owner, params) : Either.right(owner)

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

export const parseTx = (hex: string): Either.Either<Transaction, TxInvalid> => {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) return txInvalid("transaction is not hex")
  if (hex.length / 2 > ledgerLimits.txBytesMax) return txInvalid(`transaction is larger than ${ledgerLimits.txBytesMax} bytes`)
  try {
    return Either.right(Transaction.fromHex(hex))
  } catch (e) {
    return txInvalid(`transaction does not parse: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** Display hex (txid, block hash) of a hash bitcoinjs keeps in internal byte order. */
export const displayHex = (hash: Uint8Array): string => Buffer.from(hash).reverse().toString("hex")

export const outpointKey = (txid: string, vout: number): string => `${txid}:${vout}`

export const bytesHex = (b: Uint8Array): string => Buffer.from(b).toString("hex")
