import { Either } from "effect"
import bs58check from "bs58check"
import { payments } from "bitcoinjs-lib"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  convertAddress,
  encodeAddress,
  p2pkhAddressOfPubkey,
  validateLedgerAddress,
  type AddressCheck
} from "../../../src/chain/address.ts"
import { signingKeyFromSeed } from "../../../src/chain/keys.ts"
import { ledgerParams, litecoinRegtestParams } from "../../../src/chain/params.ts"

const hash = Uint8Array.from({ length: 20 }, (_, i) => i * 11 + 3)
const encode = (version: number, body: Uint8Array = hash): string => bs58check.encode(Uint8Array.of(version, ...body))
const T = encode(0x42)
const M = encode(0x32)
const errorOf = (r: AddressCheck): string => (r.valid ? "" : r.error)

describe("ledger address rule", () => {
  it("accepts 0x42 as P2PKH (T…) and 0x32 as P2SH (M…), returning the hash160", () => {
    expect(T[0]).toBe("T")
    expect(M[0]).toBe("M") // the version byte is authoritative, not the first letter
    const t = validateLedgerAddress(T)
    const m = validateLedgerAddress(M)
    expect(t).toEqual({ valid: true, type: "p2pkh", hash160: hash })
    expect(m).toEqual({ valid: true, type: "p2sh", hash160: hash })
  })

  it("every 0x42 payload encodes to T and every 0x32 payload to M, and both round-trip", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (h) => {
        const p2pkh = encodeAddress(h, "p2pkh")
        const p2sh = encodeAddress(h, "p2sh")
        if (Either.isLeft(p2pkh) || Either.isLeft(p2sh)) return false
        const a = validateLedgerAddress(p2pkh.right)
        const b = validateLedgerAddress(p2sh.right)
        return (
          p2pkh.right.startsWith("T") && p2sh.right.startsWith("M") &&
          a.valid && a.type === "p2pkh" && Buffer.from(a.hash160).equals(Buffer.from(h)) &&
          b.valid && b.type === "p2sh"
        )
      }),
      { numRuns: 300, seed: 42 }
    )
  })

  it("rejects a changed last character as a checksum failure", () => {
    const typo = T.slice(0, -1) + (T.endsWith("a") ? "b" : "a")
    expect(errorOf(validateLedgerAddress(typo))).toMatch(/checksum/)
  })

  it("points bech32 input to the legacy T address, valid checksum or not, either case", () => {
    const ours = payments.p2wpkh({ hash, network: ledgerParams.network }).address!
    expect(ours.startsWith("tok1q")).toBe(true)
    for (const input of [
      ours,
      ours.toUpperCase(),
      ours.slice(0, -1) + (ours.endsWith("q") ? "p" : "q"),
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
      "ltc1qg82p0dv6z4r4hzh4n5y2u4vmc0qrr0h5vmd3ey"
    ]) {
      const error = errorOf(validateLedgerAddress(input))
      expect(error).toMatch(/bech32/)
      expect(error).toMatch(/legacy address starting with T/)
    }
  })

  it("does not mistake a mixed-case base58 address containing 1 for bech32", () => {
    // A valid ledger address with a "1" somewhere is still judged by the base58 rules.
    const withOne = Array.from({ length: 200 }, (_, i) => encode(0x42, Uint8Array.from({ length: 20 }, (_, j) => (i * 7 + j * 13) & 255)))
      .find((a) => a.includes("1"))!
    expect(validateLedgerAddress(withOne).valid).toBe(true)
  })

  it("names the version byte of other chains' addresses", () => {
    expect(errorOf(validateLedgerAddress("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"))).toMatch(/version byte 0x00/)
    expect(errorOf(validateLedgerAddress("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"))).toMatch(/version byte 0x05/)
    expect(errorOf(validateLedgerAddress(encode(0x6f)))).toMatch(/0x6f is not a ledger address; expected 0x42 \(P2PKH, "T…"\) or 0x32 \(P2SH, "M…"\)/)
  })

  it("checks length 26..35 on both sides", () => {
    expect(errorOf(validateLedgerAddress("T" + "a".repeat(24)))).toMatch(/26 to 35 characters long, got 25/)
    expect(errorOf(validateLedgerAddress("T" + "a".repeat(35)))).toMatch(/got 36/)
    // 26 and 35 characters pass the length check and fail later (checksum), not on length.
    expect(errorOf(validateLedgerAddress("T" + "a".repeat(25)))).toMatch(/checksum/)
    expect(errorOf(validateLedgerAddress("T" + "a".repeat(34)))).toMatch(/checksum/)
  })

  it("lists characters outside the base58 alphabet", () => {
    const error = errorOf(validateLedgerAddress("T0OIl" + T.slice(5)))
    expect(error).toMatch(/base58 alphabet/)
    expect(error).toContain('"0"')
    expect(error).toContain('"O"')
    expect(error).toContain('"I"')
    expect(error).toContain('"l"')
  })

  it("refuses a checksummed payload of the wrong size", () => {
    const short = bs58check.encode(Uint8Array.of(0x42, ...hash.slice(0, 19)))
    expect(short.length).toBeGreaterThanOrEqual(26)
    expect(errorOf(validateLedgerAddress(short))).toMatch(/decodes to 20 bytes, expected 21/)
  })

  it("refuses empty, padded and non-string input without throwing", () => {
    expect(errorOf(validateLedgerAddress(""))).toMatch(/empty/)
    expect(errorOf(validateLedgerAddress(` ${T}`))).toMatch(/whitespace/)
    expect(errorOf(validateLedgerAddress(`${T}\n`))).toMatch(/whitespace/)
    expect(errorOf(validateLedgerAddress(42))).toMatch(/string/)
    expect(errorOf(validateLedgerAddress(null))).toMatch(/string/)
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (s) => typeof validateLedgerAddress(s).valid === "boolean"), { seed: 1 })
  })

  it("gives each failure its own message", () => {
    const failures = [
      "",
      ` ${T}`,
      "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
      "Tabc",
      "T0OIl" + T.slice(5),
      T.slice(0, -1) + (T.endsWith("a") ? "b" : "a"),
      bs58check.encode(Uint8Array.of(0x42, ...hash.slice(0, 19))),
      "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"
    ].map((a) => errorOf(validateLedgerAddress(a)).split(/[:;,(]/)[0])
    expect(new Set(failures).size).toBe(failures.length)
  })

  it("validates under another param set and converts between sets with the same hash160", () => {
    const regtest = encodeAddress(hash, "p2pkh", litecoinRegtestParams)
    expect(Either.isRight(regtest) && /^[mn]/.test(regtest.right)).toBe(true)
    if (Either.isLeft(regtest)) return
    expect(validateLedgerAddress(regtest.right, litecoinRegtestParams)).toMatchObject({ valid: true, type: "p2pkh" })
    expect(validateLedgerAddress(regtest.right).valid).toBe(false)
    expect(convertAddress(T, ledgerParams, litecoinRegtestParams)).toEqual(Either.right(regtest.right))
    expect(convertAddress(regtest.right, litecoinRegtestParams, ledgerParams)).toEqual(Either.right(T))
    expect(convertAddress(M, ledgerParams, litecoinRegtestParams)).toEqual(Either.right(encode(0x3a)))
    expect(Either.isLeft(convertAddress(T, litecoinRegtestParams, ledgerParams))).toBe(true)
  })

  it("encodes a public key's P2PKH address exactly as bitcoinjs does", () => {
    const key = signingKeyFromSeed(new Uint8Array(32).fill(9))
    expect(Either.isRight(key)).toBe(true)
    if (Either.isLeft(key)) return
    const ours = p2pkhAddressOfPubkey(key.right.publicKey)
    expect(ours).toEqual(Either.right(payments.p2pkh({ pubkey: key.right.publicKey, network: ledgerParams.network }).address))
    expect(Either.isLeft(p2pkhAddressOfPubkey(new Uint8Array(32)))).toBe(true)
    expect(Either.isLeft(encodeAddress(new Uint8Array(19), "p2pkh"))).toBe(true)
  })
})
