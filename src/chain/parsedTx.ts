// Transactions parsed and hashed once, by their hex (bounded). A settlement leg is built by us,
// then spent from by the next leg of its wallet (its change is the next one's input), taken into
// the wallet's coin pool and broadcast; each of those used to parse its bytes and hash them again
// (issue 22: node CPU per trade). The builder remembers what it signs; the others ask here first.
// The parsed Transaction is shared: callers only read it.
import { Transaction } from "bitcoinjs-lib"

export interface ParsedTx {
  readonly tx: Transaction
  readonly txid: string
}

/** Entries kept (a wallet's recent legs and their previous transactions; ~1 KB each). */
export const parsedTxMax = 1_024
const cache = new Map<string, ParsedTx>()

/** Keeps a transaction we built (so the next parse of its bytes is a lookup). */
export const rememberParsed = (hex: string, tx: Transaction, txid: string): ParsedTx => {
  const p = { tx, txid }
  if (cache.size >= parsedTxMax && !cache.has(hex)) cache.delete(cache.keys().next().value!)
  cache.set(hex, p)
  return p
}

/** The transaction of `hex`, parsed and hashed once; throws on bad bytes (nothing is kept then). */
export const parsedTx = (hex: string): ParsedTx => {
  const known = cache.get(hex)
  if (known !== undefined) return known
  const tx = Transaction.fromHex(hex)
  return rememberParsed(hex, tx, tx.getId())
}

/** Only what is already known: for readers of many transactions not ours (a block's), which must not evict ours. */
export const knownParsed = (hex: string): ParsedTx | undefined => cache.get(hex)
