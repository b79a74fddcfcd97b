// The ledger address rule (token-desk spec, "Ledger address rule"): the one validator every
// endpoint, the dashboard, the admin console and the CLI use. Pure: it returns a check and
// never throws, so callers can put `error` straight into a response body.
//
// The version byte is authoritative, not the first letter: 0x42 always encodes to "T…", but
// 0x32 (P2SH) always encodes to "M…" (see notes/chains-brief.md), so a "starts with T" check
// would refuse valid P2SH addresses.
import bs58check from "bs58check"
import { crypto } from "bitcoinjs-lib"
import { Data, Either } from "effect"
import { ledgerParams, type UtxoChainParams } from "./params.ts"

export type AddressType = "p2pkh" | "p2sh"

export type AddressCheck =
  | { readonly valid: true; readonly type: AddressType; readonly hash160: Uint8Array }
  | { readonly valid: false; readonly error: string }

/** An address that cannot be made or converted; `message` is for a person. */
export class AddressInvalid extends Data.TaggedError("AddressInvalid")<{ readonly message: string }> {}

const addressInvalid = (message: string) => Either.left(new AddressInvalid({ message }))

export const ADDRESS_LENGTH_MIN = 26
export const ADDRESS_LENGTH_MAX = 35
/** version byte + 20-byte hash160 */
const PAYLOAD_BYTES = 21
const HASH160_BYTES = 20

const BASE58 = /^[123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]*$/
const NOT_BASE58 = /[^123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]/g
// BIP-173 shape: hrp, the separator "1", at least 6 data characters from the bech32 charset.
// Bech32 is single-case, so a mixed-case string is left to the base58 checks; that keeps a
// legacy address that happens to contain "1" from being mistaken for bech32.
const BECH32_SHAPE = /^([a-z]{1,83})1([qpzry9x8gf2tvdw0s3jn54khce6mua7l]{6,})$/

const invalid = (error: string): AddressCheck => ({ valid: false, error })
const hex = (n: number): string => `0x${n.toString(16).padStart(2, "0")}`

/** The human-readable part when `s` is shaped like a bech32 address (checksum not checked). */
export const bech32ShapeHrp = (s: string): string | undefined => {
  if (s !== s.toLowerCase() && s !== s.toUpperCase()) return undefined
  return BECH32_SHAPE.exec(s.toLowerCase())?.[1]
}

const firstLetter = (version: number): string => bs58check.encode(Uint8Array.of(version, ...new Uint8Array(HASH160_BYTES)))[0]!

const describeVersions = (params: UtxoChainParams): string => {
  const { pubKeyHash, scriptHash } = params.network
  return `${hex(pubKeyHash)} (P2PKH, "${firstLetter(pubKeyHash)}…") or ${hex(scriptHash)} (P2SH, "${firstLetter(scriptHash)}…")`
}

/**
 * Checks a ledger address: length 26–35, base58 alphabet, base58check checksum, version byte
 * 0x42 (P2PKH, "T…") or 0x32 (P2SH, "M…"). Bech32 input gets a message pointing to the legacy
 * T address. `params` selects another chain (e.g. litecoind regtest at an adapter edge).
 */
export const validateLedgerAddress = (input: unknown, params: UtxoChainParams = ledgerParams): AddressCheck => {
  if (typeof input !== "string") return invalid("address must be a string")
  if (input.length === 0) return invalid("address is empty")
  if (input.trim() !== input) return invalid("address has leading or trailing whitespace")
  const hrp = bech32ShapeHrp(input)
  if (hrp !== undefined) {
    return invalid(
      `this looks like a bech32 (SegWit) address (prefix "${hrp}1"), which is not accepted; ` +
        `use the legacy address starting with ${firstLetter(params.network.pubKeyHash)} shown in your wallet (receive → legacy/base58 address)`
    )
  }
  if (input.length < ADDRESS_LENGTH_MIN || input.length > ADDRESS_LENGTH_MAX) {
    return invalid(`address must be ${ADDRESS_LENGTH_MIN} to ${ADDRESS_LENGTH_MAX} characters long, got ${input.length}`)
  }
  if (!BASE58.test(input)) {
    const bad = [...new Set(input.match(NOT_BASE58) ?? [])].map((c) => JSON.stringify(c)).join(", ")
    return invalid(`address contains characters outside the base58 alphabet: ${bad} (base58 has no 0, O, I or l)`)
  }
  const payload = bs58check.decodeUnsafe(input)
  if (payload === undefined) return invalid("address checksum does not match: it is mistyped or truncated")
  if (payload.length !== PAYLOAD_BYTES) {
    return invalid(`address decodes to ${payload.length} bytes, expected ${PAYLOAD_BYTES} (version byte and 20-byte hash)`)
  }
  const version = payload[0]!
  const hash160 = payload.slice(1)
  if (version === params.network.pubKeyHash) return { valid: true, type: "p2pkh", hash160 }
  if (version === params.network.scriptHash) return { valid: true, type: "p2sh", hash160 }
  return invalid(`address version byte ${hex(version)} is not a ${params.name} address; expected ${describeVersions(params)}`)
}

/** Base58check address for a hash160 under the given params. */
export const encodeAddress = (
  hash160: Uint8Array,
  type: AddressType,
  params: UtxoChainParams = ledgerParams
): Either.Either<string, AddressInvalid> => {
  if (hash160.length !== HASH160_BYTES) return addressInvalid(`hash160 must be 20 bytes, got ${hash160.length}`)
  const version = type === "p2pkh" ? params.network.pubKeyHash : params.network.scriptHash
  return Either.right(bs58check.encode(Uint8Array.of(version, ...hash160)))
}

/** P2PKH address of a public key (33-byte compressed or 65-byte uncompressed, as given). */
export const p2pkhAddressOfPubkey = (pubkey: Uint8Array, params: UtxoChainParams = ledgerParams): Either.Either<string, AddressInvalid> => {
  if (!(pubkey.length === 33 && (pubkey[0] === 2 || pubkey[0] === 3)) && !(pubkey.length === 65 && pubkey[0] === 4)) {
    return addressInvalid("public key must be 33 bytes (compressed) or 65 bytes (uncompressed)")
  }
  return encodeAddress(crypto.hash160(pubkey), "p2pkh", params)
}

/**
 * The same hash160 under another param set, e.g. a ledger T address as a litecoind regtest
 * address. Only adapters call this, at their edge; the domain keeps ledger addresses.
 */
export const convertAddress = (address: string, from: UtxoChainParams, to: UtxoChainParams): Either.Either<string, AddressInvalid> => {
  const check = validateLedgerAddress(address, from)
  if (!check.valid) return addressInvalid(check.error)
  return encodeAddress(check.hash160, check.type, to)
}
