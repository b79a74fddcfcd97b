// Where a social account's keys sit (spec: "Derivation path of social activity:
// m/44'/696969'/1101'/{post index}; the proof shows a path with two further indexes"), and the
// 6-character ids taken from addresses. Pure.
import { createHash } from "node:crypto"
import { ledgerParams, type UtxoChainParams } from "../../chain/params.ts"

/** The account-level key of social activity; its xpub is what a linked wallet shares. */
export const socialAccountPath = (params: UtxoChainParams = ledgerParams): string => `m/44'/${params.coinType}'/1101'`

/** The relative steps below the social account key to post `index`'s own address. */
export const postSteps = (index: number): readonly [number, number, number] => [index, 0, 0]

export const postPath = (index: number, params: UtxoChainParams = ledgerParams): string => `${socialAccountPath(params)}/${postSteps(index).join("/")}`

/** A post's short id: the last 6 characters of its own derived address (base58, case matters). */
export const shortIdOf = (address: string): string => address.slice(-6)
export const SHORT_ID = /^[1-9A-HJ-NP-Za-km-z]{6}$/

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** An account's #asset id: 6 base32 characters of sha256(address, attempt); attempt > 0 after a clash. */
export const assetIdOf = (address: string, attempt = 0): string => {
  const digest = createHash("sha256").update(`${address}#${attempt}`).digest()
  let out = ""
  for (let i = 0; i < 6; i++) out += BASE32[digest[i]! % 32]
  return out
}
