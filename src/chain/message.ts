// BIP-137 signed messages with the chain's own magic prefix (wallet linking, sign-in, proofs).
// bitcoinjs-message does the hashing and key recovery; this module adds what it lacks:
// - the address is checked against the params first (the library ignores version bytes, so a
//   signature would otherwise "verify" against the same key's address on any chain);
// - the header byte is matched to the address type, with Electrum-style 31–34 accepted for
//   segwit addresses (the library's checkSegwitAlways);
// - garbage input (bad base64, wrong length, bad header, points off the curve) is a
//   `{ valid: false, reason }`, never a throw.
import { address as btcAddress, payments } from "bitcoinjs-lib"
import * as ecc from "tiny-secp256k1"
import * as bitcoinMessage from "bitcoinjs-message"
import { Data, Either } from "effect"
import { AddressInvalid, bech32ShapeHrp, validateLedgerAddress } from "./address.ts"
import { ledgerParams, type UtxoChainParams } from "./params.ts"

/** Address kinds a single-key BIP-137 signature can speak for. */
export type SignedAddressKind = "p2pkh" | "p2sh-p2wpkh" | "p2wpkh"

export type MessageVerification =
  | { readonly valid: true; readonly header: number; readonly addressKind: SignedAddressKind }
  | { readonly valid: false; readonly reason: string }

export interface VerifyInput {
  readonly address: string
  readonly message: string | Uint8Array
  /** Base64 text (what wallets show) or the raw 65 bytes. */
  readonly signature: string | Uint8Array
}

export interface SignOptions {
  /** Default true. An uncompressed key signs with headers 27–30 and matches its own uncompressed address. */
  readonly compressed?: boolean
  /** Headers 35–38 (p2sh(p2wpkh)) or 39–42 (p2wpkh); omitted: 27–34. */
  readonly segwitType?: "p2sh(p2wpkh)" | "p2wpkh"
}

export const SIGNATURE_BYTES = 65
/** Wallet-link payloads are small JSON; anything near this is not a message we asked for. */
export const MESSAGE_BYTES_MAX = 64 * 1024
const HEADER_MIN = 27
const HEADER_MAX = 42

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** A signature that cannot be decoded or made; `message` is for a person. */
export class SignedMessageError extends Data.TaggedError("SignedMessageError")<{ readonly message: string }> {}

const signatureError = (message: string) => Either.left(new SignedMessageError({ message }))
const addressInvalid = (message: string) => Either.left(new AddressInvalid({ message }))

const refuse = (reason: string): MessageVerification => ({ valid: false, reason })
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

type HeaderClass = "uncompressed" | "compressed" | "p2sh-p2wpkh" | "p2wpkh"

const headerClass = (header: number): HeaderClass =>
  header <= 30 ? "uncompressed" : header <= 34 ? "compressed" : header <= 38 ? "p2sh-p2wpkh" : "p2wpkh"

/** The address as this chain understands it, or why it cannot have signed anything here. */
const classifyAddress = (address: string, params: UtxoChainParams): Either.Either<SignedAddressKind, AddressInvalid> => {
  // Only bech32-shaped text goes to the bech32 decoder: its throw is costly on the hot path.
  if (bech32ShapeHrp(address) !== undefined) {
    const hrp = params.network.bech32
    let decoded: ReturnType<typeof btcAddress.fromBech32>
    try {
      decoded = btcAddress.fromBech32(address)
    } catch {
      return addressInvalid("invalid bech32 address: bad checksum or characters")
    }
    if (decoded.prefix !== hrp) return addressInvalid(`bech32 prefix "${decoded.prefix}" is not ${params.name}'s "${hrp}"`)
    if (decoded.version !== 0 || decoded.data.length !== 20) {
      return addressInvalid("only version-0 20-byte (P2WPKH) bech32 addresses can sign a BIP-137 message")
    }
    return Either.right("p2wpkh")
  }
  const check = validateLedgerAddress(address, params)
  if (!check.valid) return addressInvalid(check.error)
  // A base58 P2SH address can only be a single-key signer as P2SH-P2WPKH.
  return Either.right(check.type === "p2pkh" ? "p2pkh" : "p2sh-p2wpkh")
}

const decodeSignature = (signature: string | Uint8Array): Either.Either<Buffer, SignedMessageError> => {
  if (typeof signature === "string") {
    const text = signature.trim()
    if (!BASE64.test(text)) return signatureError("signature is not valid base64")
    const bytes = Buffer.from(text, "base64")
    if (bytes.length !== SIGNATURE_BYTES) {
      return signatureError(`signature must be ${SIGNATURE_BYTES} bytes, got ${bytes.length}`)
    }
    return Either.right(bytes)
  }
  if (signature.length !== SIGNATURE_BYTES) {
    return signatureError(`signature must be ${SIGNATURE_BYTES} bytes, got ${signature.length}`)
  }
  return Either.right(Buffer.from(signature))
}

/**
 * Verifies a BIP-137 signature over `message` for `address` under `params` (prefix and
 * version bytes). Headers: 27–30 uncompressed P2PKH, 31–34 compressed P2PKH (and, Electrum
 * style, P2SH-P2WPKH / P2WPKH), 35–38 P2SH-P2WPKH, 39–42 P2WPKH.
 */
export const verifyMessage = (input: VerifyInput, params: UtxoChainParams = ledgerParams): MessageVerification => {
  if (typeof input.address !== "string") return refuse("address must be a string")
  if (typeof input.message !== "string" && !(input.message instanceof Uint8Array)) return refuse("message must be text")
  const messageBytes = typeof input.message === "string" ? Buffer.from(input.message, "utf8") : Buffer.from(input.message)
  if (messageBytes.length > MESSAGE_BYTES_MAX) return refuse(`message is longer than ${MESSAGE_BYTES_MAX} bytes`)
  if (typeof input.signature !== "string" && !(input.signature instanceof Uint8Array)) {
    return refuse("signature must be base64 text")
  }
  const kind = classifyAddress(input.address, params)
  if (Either.isLeft(kind)) return refuse(kind.left.message)
  const sig = decodeSignature(input.signature)
  if (Either.isLeft(sig)) return refuse(sig.left.message)
  const addressKind = kind.right
  const sigBytes = sig.right
  const header = sigBytes[0]!
  if (header < HEADER_MIN || header > HEADER_MAX) return refuse(`signature header byte ${header} is outside ${HEADER_MIN}–${HEADER_MAX}`)

  const cls = headerClass(header)
  const fits =
    (addressKind === "p2pkh" && (cls === "uncompressed" || cls === "compressed")) ||
    (addressKind === "p2sh-p2wpkh" && (cls === "p2sh-p2wpkh" || cls === "compressed")) ||
    (addressKind === "p2wpkh" && (cls === "p2wpkh" || cls === "compressed"))
  if (!fits) return refuse(`signature header ${header} (${cls}) cannot sign for a ${addressKind} address`)
  // Electrum-style: a plain compressed header over a segwit address.
  const checkSegwitAlways = cls === "compressed" && addressKind !== "p2pkh"
  try {
    const matches = bitcoinMessage.verify(messageBytes, input.address, sigBytes, params.network.messagePrefix, checkSegwitAlways)
    return matches ? { valid: true, header, addressKind } : refuse("signature does not match the address and message")
  } catch (e) {
    // Recovery fails on r/s that are not valid scalars: a forged or corrupted signature.
    return refuse(`signature cannot be verified: ${errorText(e)}`)
  }
}

/** Signs `message` with the params' prefix; returns base64 (65 bytes: header, r, s). */
export const signMessage = (
  message: string | Uint8Array,
  privateKey: Uint8Array,
  params: UtxoChainParams = ledgerParams,
  options: SignOptions = {}
): Either.Either<string, SignedMessageError> => {
  const messageBytes = typeof message === "string" ? Buffer.from(message, "utf8") : Buffer.from(message)
  if (messageBytes.length > MESSAGE_BYTES_MAX) return signatureError(`message is longer than ${MESSAGE_BYTES_MAX} bytes`)
  if (privateKey.length !== 32) return signatureError(`private key must be 32 bytes, got ${privateKey.length}`)
  const compressed = options.compressed ?? true
  if (!compressed && options.segwitType !== undefined) return signatureError("segwit signatures need a compressed key")
  try {
    const sigOptions = options.segwitType === undefined ? {} : { segwitType: options.segwitType }
    const sig = bitcoinMessage.sign(messageBytes, Buffer.from(privateKey), compressed, params.network.messagePrefix, sigOptions)
    return Either.right(sig.toString("base64"))
  } catch (e) {
    return signatureError(`cannot sign: ${errorText(e)}`)
  }
}

/** Every address one public key can sign a BIP-137 message for (the key given compressed). */
export interface KeyAddresses {
  readonly p2pkh: string
  readonly p2pkhUncompressed: string
  readonly p2shP2wpkh: string
  readonly p2wpkh: string
}

export const keyAddresses = (publicKey: Uint8Array, params: UtxoChainParams = ledgerParams): Either.Either<KeyAddresses, SignedMessageError> => {
  try {
    const compressed = Buffer.from(ecc.pointCompress(publicKey, true))
    const uncompressed = Buffer.from(ecc.pointCompress(publicKey, false))
    const network = params.network
    const p2wpkh = payments.p2wpkh({ pubkey: compressed, network })
    return Either.right({
      p2pkh: payments.p2pkh({ pubkey: compressed, network }).address!,
      p2pkhUncompressed: payments.p2pkh({ pubkey: uncompressed, network }).address!,
      p2shP2wpkh: payments.p2sh({ redeem: p2wpkh, network }).address!,
      p2wpkh: p2wpkh.address!
    })
  } catch (e) {
    return signatureError(`not a public key: ${errorText(e)}`)
  }
}

/**
 * Whether `signature` over `message` was made by `publicKey`, whichever BIP-137 header kind the
 * wallet chose (27–30 uncompressed, 31–34 compressed, 35–38 P2SH-P2WPKH, 39–42 P2WPKH, or
 * Electrum's 31–34 for a segwit address): the header picks the key's address of that kind and
 * `verifyMessage` (the one verifier) checks it. For a signer known by key rather than by the
 * address text a wallet chose to show (the desk's m/44'/696969'/0'/0/0).
 */
export const verifyMessageByKey = (
  input: { readonly publicKey: Uint8Array; readonly message: string | Uint8Array; readonly signature: string },
  params: UtxoChainParams = ledgerParams
): MessageVerification => {
  const addresses = keyAddresses(input.publicKey, params)
  if (Either.isLeft(addresses)) return refuse(addresses.left.message)
  const sig = decodeSignature(input.signature)
  if (Either.isLeft(sig)) return refuse(sig.left.message)
  const header = sig.right[0]!
  if (header < HEADER_MIN || header > HEADER_MAX) return refuse(`signature header byte ${header} is outside ${HEADER_MIN}–${HEADER_MAX}`)
  const a = addresses.right
  const candidates: ReadonlyArray<string> = {
    uncompressed: [a.p2pkhUncompressed],
    // A plain compressed header: the legacy address, or Electrum-style either segwit address.
    compressed: [a.p2pkh, a.p2shP2wpkh, a.p2wpkh],
    "p2sh-p2wpkh": [a.p2shP2wpkh],
    p2wpkh: [a.p2wpkh]
  }[headerClass(header)]
  let last: MessageVerification = refuse("signature does not match the key and message")
  for (const address of candidates) {
    last = verifyMessage({ address, message: input.message, signature: sig.right }, params)
    if (last.valid) return last
  }
  return last
}

/**
 * Why `signature` cannot be a BIP-137 signature at all (not base64, not 65 bytes, a header
 * outside 27–42), or undefined when it has the shape of one: a malformed request (400) apart
 * from a signature that is well-formed but wrong (401).
 */
export const signatureShapeError = (signature: string): string | undefined => {
  const sig = decodeSignature(signature)
  if (Either.isLeft(sig)) return sig.left.message
  const header = sig.right[0]!
  return header < HEADER_MIN || header > HEADER_MAX ? `signature header byte ${header} is outside ${HEADER_MIN}–${HEADER_MAX}` : undefined
}

/** Why `address` cannot sign a BIP-137 message on this chain (malformed, wrong chain or kind), or undefined. */
export const signerAddressError = (address: string, params: UtxoChainParams = ledgerParams): string | undefined => {
  const kind = classifyAddress(address, params)
  return Either.isLeft(kind) ? kind.left.message : undefined
}
