import { Either } from "effect"
import { payments } from "bitcoinjs-lib"
import { BIP32Factory } from "bip32"
import * as ecc from "tiny-secp256k1"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeAddress } from "../../../src/chain/address.ts"
import { signingKeyFromSeed } from "../../../src/chain/keys.ts"
import { signMessage, verifyMessage, type SignOptions } from "../../../src/chain/message.ts"
import { ledgerParams, type UtxoChainParams } from "../../../src/chain/params.ts"

const keyResult = signingKeyFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i * 3))
if (Either.isLeft(keyResult)) throw new Error(keyResult.left.message)
const key = keyResult.right
const net = ledgerParams.network
const uncompressedPub = ecc.pointFromScalar(key.privateKey, false)!

const addresses = {
  p2pkh: key.address,
  uncompressed: payments.p2pkh({ pubkey: uncompressedPub, network: net }).address!,
  p2shP2wpkh: payments.p2sh({ redeem: payments.p2wpkh({ pubkey: key.publicKey, network: net }), network: net }).address!,
  p2wpkh: payments.p2wpkh({ pubkey: key.publicKey, network: net }).address!
}

const message = '{"member":"alice","nonce":"8c1f"}'
const sign = (options: SignOptions = {}, params: UtxoChainParams = ledgerParams, text = message): string => {
  const s = signMessage(text, key.privateKey, params, options)
  if (Either.isLeft(s)) throw new Error(s.left.message)
  return s.right
}
const header = (sig: string): number => Buffer.from(sig, "base64")[0]!
const verify = (address: string, signature: string | Uint8Array, text: string | Uint8Array = message) =>
  verifyMessage({ address, signature, message: text })

describe("BIP-137 messages with the ledger prefix", () => {
  it("uses a prefix whose first byte is its own length", () => {
    const prefix = net.messagePrefix!
    expect(prefix.charCodeAt(0)).toBe(prefix.length - 1)
    expect(prefix.slice(1)).toBe("Shardline Signed Message:\n")
  })

  it("addresses have the expected shapes", () => {
    expect(addresses.p2pkh[0]).toBe("T")
    expect(addresses.uncompressed[0]).toBe("T")
    expect(addresses.p2shP2wpkh[0]).toBe("M")
    expect(addresses.p2wpkh.startsWith("tok1q")).toBe(true)
  })

  it("compressed P2PKH: headers 31–34", () => {
    const sig = sign()
    expect(header(sig)).toBeGreaterThanOrEqual(31)
    expect(header(sig)).toBeLessThanOrEqual(34)
    expect(verify(addresses.p2pkh, sig)).toEqual({ valid: true, header: header(sig), addressKind: "p2pkh" })
    expect(verify(addresses.p2pkh, Buffer.from(sig, "base64"))).toMatchObject({ valid: true })
    expect(verify(addresses.uncompressed, sig).valid).toBe(false)
  })

  it("uncompressed P2PKH: headers 27–30, only for the uncompressed-key address", () => {
    const sig = sign({ compressed: false })
    expect(header(sig)).toBeGreaterThanOrEqual(27)
    expect(header(sig)).toBeLessThanOrEqual(30)
    expect(verify(addresses.uncompressed, sig)).toMatchObject({ valid: true, addressKind: "p2pkh" })
    expect(verify(addresses.p2pkh, sig)).toMatchObject({ valid: false, reason: expect.stringMatching(/does not match/) })
  })

  it("P2SH-P2WPKH: headers 35–38 for the M address", () => {
    const sig = sign({ segwitType: "p2sh(p2wpkh)" })
    expect(header(sig)).toBeGreaterThanOrEqual(35)
    expect(header(sig)).toBeLessThanOrEqual(38)
    expect(verify(addresses.p2shP2wpkh, sig)).toMatchObject({ valid: true, addressKind: "p2sh-p2wpkh" })
    expect(verify(addresses.p2pkh, sig)).toMatchObject({ valid: false, reason: expect.stringMatching(/cannot sign for a p2pkh/) })
  })

  it("P2WPKH: headers 39–42 for the tok1 address", () => {
    const sig = sign({ segwitType: "p2wpkh" })
    expect(header(sig)).toBeGreaterThanOrEqual(39)
    expect(header(sig)).toBeLessThanOrEqual(42)
    expect(verify(addresses.p2wpkh, sig)).toMatchObject({ valid: true, addressKind: "p2wpkh" })
    expect(verify(addresses.p2shP2wpkh, sig).valid).toBe(false)
    expect(verify(addresses.p2pkh, sig).valid).toBe(false)
  })

  it("Electrum style: a plain compressed signature (31–34) verifies for the key's segwit addresses", () => {
    const sig = sign()
    expect(verify(addresses.p2shP2wpkh, sig)).toMatchObject({ valid: true, addressKind: "p2sh-p2wpkh" })
    expect(verify(addresses.p2wpkh, sig)).toMatchObject({ valid: true, addressKind: "p2wpkh" })
    // Another key's segwit address does not.
    const other = signingKeyFromSeed(new Uint8Array(32).fill(1))
    if (Either.isLeft(other)) throw new Error(other.left.message)
    const otherP2wpkh = payments.p2wpkh({ pubkey: other.right.publicKey, network: net }).address!
    expect(verify(otherP2wpkh, sig).valid).toBe(false)
    // An uncompressed header never speaks for segwit.
    expect(verify(addresses.p2wpkh, sign({ compressed: false }))).toMatchObject({ valid: false, reason: expect.stringMatching(/cannot sign/) })
  })

  it("checks the address version byte that the library ignores", () => {
    const sig = sign()
    const btcAddress = payments.p2pkh({ pubkey: key.publicKey }).address!
    expect(btcAddress[0]).toBe("1")
    expect(verify(btcAddress, sig)).toMatchObject({ valid: false, reason: expect.stringMatching(/version byte 0x00/) })
    const btcBech32 = payments.p2wpkh({ pubkey: key.publicKey }).address!
    expect(verify(btcBech32, sig)).toMatchObject({ valid: false, reason: expect.stringMatching(/prefix "bc"/) })
  })

  it("binds the message and the prefix", () => {
    const sig = sign()
    expect(verify(addresses.p2pkh, sig, message + " ")).toMatchObject({ valid: false })
    const bitcoinPrefixed: UtxoChainParams = { ...ledgerParams, network: { ...net, messagePrefix: "\x18Bitcoin Signed Message:\n" } }
    expect(verify(addresses.p2pkh, sign({}, bitcoinPrefixed))).toMatchObject({ valid: false })
    expect(verifyMessage({ address: addresses.p2pkh, signature: sign({}, bitcoinPrefixed), message }, bitcoinPrefixed).valid).toBe(true)
    // Bytes and the same text as a string are one message.
    expect(verify(addresses.p2pkh, sig, new TextEncoder().encode(message)).valid).toBe(true)
  })

  it("returns a reason, never throws, on garbage", () => {
    const good = Buffer.from(sign(), "base64")
    const withHeader = (h: number) => Buffer.concat([Buffer.of(h), good.subarray(1)]).toString("base64")
    const cases: Array<[string, string, RegExp]> = [
      [addresses.p2pkh, "not base64!!", /base64/],
      [addresses.p2pkh, "", /65 bytes, got 0/],
      [addresses.p2pkh, good.subarray(0, 64).toString("base64"), /65 bytes, got 64/],
      [addresses.p2pkh, Buffer.concat([good, Buffer.of(0)]).toString("base64"), /65 bytes, got 66/],
      [addresses.p2pkh, withHeader(26), /outside 27–42/],
      [addresses.p2pkh, withHeader(43), /outside 27–42/],
      [addresses.p2pkh, Buffer.concat([Buffer.of(31), Buffer.alloc(64)]).toString("base64"), /cannot be verified|does not match/],
      [addresses.p2pkh, Buffer.concat([Buffer.of(31), Buffer.alloc(64, 0xff)]).toString("base64"), /cannot be verified|does not match/],
      ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", good.toString("base64"), /prefix "bc"/],
      ["tok1qqqqqqqqqqqqq", good.toString("base64"), /invalid bech32/],
      ["not an address", good.toString("base64"), /26 to 35|base58/]
    ]
    for (const [address, signature, reason] of cases) {
      expect(verify(address, signature)).toEqual({ valid: false, reason: expect.stringMatching(reason) })
    }
    const bogus = verifyMessage({ address: 5, signature: null, message: {} } as unknown as Parameters<typeof verifyMessage>[0])
    expect(bogus.valid).toBe(false)
  })

  it("never throws for arbitrary input (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(addresses.p2pkh), fc.constant(addresses.p2wpkh), fc.string()),
        fc.oneof(fc.string(), fc.base64String(), fc.uint8Array({ minLength: 65, maxLength: 65 })),
        fc.string(),
        (address, signature, text) => verify(address, signature, text).valid === false
      ),
      { numRuns: 500, seed: 7 }
    )
  })

  it("sign refuses bad keys and impossible options as results", () => {
    expect(Either.isLeft(signMessage(message, new Uint8Array(31)))).toBe(true)
    expect(Either.isLeft(signMessage(message, new Uint8Array(32)))).toBe(true) // zero is not a valid scalar
    expect(Either.isLeft(signMessage(message, key.privateKey, ledgerParams, { compressed: false, segwitType: "p2wpkh" }))).toBe(true)
  })

  it("signs deterministically (RFC 6979) and matches a key derived independently", () => {
    expect(sign()).toBe(sign())
    const direct = BIP32Factory(ecc).fromSeed(Uint8Array.from({ length: 32 }, (_, i) => i * 3), net).derivePath("m/44'/696969'/0'/0/0")
    const a = encodeAddress(payments.p2pkh({ pubkey: direct.publicKey, network: net }).hash!, "p2pkh")
    expect(a).toEqual(Either.right(addresses.p2pkh))
  })
})
