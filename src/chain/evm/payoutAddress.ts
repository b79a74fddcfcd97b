// What a linked wallet gives as its EVM side (desk spec, wallet-link payload `xpubs.EVM`/`BASE`):
// a plain 0x address, or an EVM extended public key whose m/0/0 child is taken (relative to the
// key given, as the spec says). Pure: an Either, never a throw.
import { BIP32Factory } from "bip32"
import bs58check from "bs58check"
import { Data, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { getAddress, isAddress } from "viem"
import { publicKeyToAddress } from "viem/accounts"

const bip32 = BIP32Factory(ecc)

/** Extended keys are 111-112 base58 characters; anything much longer is not one. */
export const EVM_KEY_TEXT_MAX = 120
/** BIP-32 mainnet xpub version: keys of any public version are read under it. */
const XPUB_VERSION = 0x0488b21e
/** Private versions (xprv, tprv): refused, nobody should paste one. */
const PRIVATE_VERSIONS = new Set([0x0488ade4, 0x04358394])

export class EvmAddressInvalid extends Data.TaggedError("EvmAddressInvalid")<{ readonly message: string }> {}

const invalid = (message: string) => Either.left(new EvmAddressInvalid({ message }))

/** The EIP-55 checksummed payout address for `text` (a 0x address or an extended public key). */
/** Addresses no one holds a key to: a payout or refund sent there is lost (docs/desk-orders.md). */
const burnAddresses = new Set(["0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"])

export const evmPayoutAddress = (text: string): Either.Either<`0x${string}`, EvmAddressInvalid> => {
  const input = text.trim()
  if (input.length > EVM_KEY_TEXT_MAX) return invalid(`EVM address or key is longer than ${EVM_KEY_TEXT_MAX} characters`)
  if (input.startsWith("0x")) {
    // isAddress checks the EIP-55 checksum of a mixed-case address.
    if (burnAddresses.has(input.toLowerCase())) {
      return invalid("this is a burn address (the zero address or 0x…dEaD): nothing paid to it can ever be spent; give an address you control")
    }
    return isAddress(input) ? Either.right(getAddress(input)) : invalid("not a valid EVM address (0x + 40 hex, EIP-55 checksum when mixed case)")
  }
  const raw = bs58check.decodeUnsafe(input)
  if (raw === undefined || raw.length !== 78) return invalid("EVM value is neither a 0x address nor a base58check extended public key")
  const bytes = Uint8Array.from(raw)
  const view = new DataView(bytes.buffer)
  if (PRIVATE_VERSIONS.has(view.getUint32(0))) return invalid("this is an extended private key; share the public key or a plain address")
  view.setUint32(0, XPUB_VERSION)
  try {
    const child = bip32.fromBase58(bs58check.encode(bytes)).derive(0).derive(0)
    const uncompressed = ecc.pointCompress(child.publicKey, false)
    return Either.right(publicKeyToAddress(`0x${Buffer.from(uncompressed).toString("hex")}`))
  } catch (e) {
    return invalid(`invalid EVM extended public key: ${e instanceof Error ? e.message : String(e)}`)
  }
}
