import { Either } from "effect"
import { BIP32Factory } from "bip32"
import bs58check from "bs58check"
import * as ecc from "tiny-secp256k1"
import { describe, expect, it } from "vitest"
import { unwrap } from "../../../harness/either.ts"
import { validateLedgerAddress } from "../../../src/chain/address.ts"
import {
  accountFromSeed,
  CHANGE,
  convertXpub,
  deriveAddress,
  deriveAddresses,
  deriveSigningKey,
  findAddress,
  RECEIVE,
  signingKeyFromSeed,
  signingKeyPath,
  watchOnlyFromXpub,
  type SeedAccount,
  type WatchOnlyAccount
} from "../../../src/chain/keys.ts"
import { ledgerParams, litecoinRegtestParams } from "../../../src/chain/params.ts"

const seed = Uint8Array.from({ length: 32 }, (_, i) => i)
const account: SeedAccount = unwrap(accountFromSeed(seed))
const watch: WatchOnlyAccount = unwrap(watchOnlyFromXpub(account.watch.xpub))

describe("BIP-32 keys", () => {
  it("puts the signing key at m/44'/696969'/0'/0/0 with a T address", () => {
    const key = unwrap(signingKeyFromSeed(seed))
    expect(signingKeyPath()).toBe("m/44'/696969'/0'/0/0")
    expect(key.path).toBe("m/44'/696969'/0'/0/0")
    expect(validateLedgerAddress(key.address)).toMatchObject({ valid: true, type: "p2pkh" })
    // Independent path: derive the full path from the root with bip32 directly.
    const direct = BIP32Factory(ecc).fromSeed(seed, ledgerParams.network).derivePath("m/44'/696969'/0'/0/0")
    expect(Buffer.from(key.publicKey).equals(Buffer.from(direct.publicKey))).toBe(true)
    expect(Buffer.from(key.privateKey).equals(Buffer.from(direct.privateKey!))).toBe(true)
    expect(key.wif).toBe(direct.toWIF())
  })

  it("serialises the account xpub as Tpub… at depth 3", () => {
    expect(account.watch.xpub.startsWith("Tpub")).toBe(true)
    expect(bs58check.decode(account.watch.xpub)[4]).toBe(3)
  })

  it("derives the same addresses watch-only as from the seed, on both branches, and they differ", () => {
    for (const branch of [RECEIVE, CHANGE] as const) {
      for (const index of [0, 1, 19, 20, 1000]) {
        const fromSeed = unwrap(deriveSigningKey(account, branch, index))
        const watched = unwrap(deriveAddress(watch, branch, index))
        expect(watched.address).toBe(fromSeed.address)
        expect(watched.path).toBe(`m/44'/696969'/0'/${branch}/${index}`)
      }
    }
    const receive = unwrap(deriveAddresses(watch, RECEIVE, 0, 20)).map((d) => d.address)
    const change = unwrap(deriveAddresses(watch, CHANGE, 0, 20)).map((d) => d.address)
    expect(new Set([...receive, ...change]).size).toBe(40)
  })

  it("refuses xprv, other networks' xpubs, non-account depths and garbage", () => {
    const root = BIP32Factory(ecc).fromSeed(seed, ledgerParams.network)
    const xprv = unwrap(accountFromSeed(seed)).account.toBase58()
    expect(watchOnlyFromXpub(xprv)).toMatchObject({ left: { message: expect.stringMatching(/extended private key/) } })
    const btcXpub = BIP32Factory(ecc).fromSeed(seed).derivePath("m/44'/0'/0'").neutered().toBase58()
    expect(btcXpub.startsWith("xpub")).toBe(true)
    expect(watchOnlyFromXpub(btcXpub)).toMatchObject({ left: { message: expect.stringMatching(/0x0488b21e is not a ledger xpub/) } })
    expect(watchOnlyFromXpub(root.neutered().toBase58())).toMatchObject({ left: { message: expect.stringMatching(/got depth 0/) } })
    const branchKey = root.derivePath("m/44'/696969'/0'/0").neutered().toBase58()
    expect(watchOnlyFromXpub(branchKey)).toMatchObject({ left: { message: expect.stringMatching(/got depth 4/) } })
    expect(watchOnlyFromXpub("Tpub-not-a-key")).toMatchObject({ left: { message: expect.stringMatching(/base58check/) } })
    expect(Either.isLeft(watchOnlyFromXpub(account.watch.xpub.slice(0, -1) + "x"))).toBe(true)
  })

  it("bounds seeds and indexes", () => {
    expect(Either.isLeft(accountFromSeed(new Uint8Array(15)))).toBe(true)
    expect(Either.isRight(accountFromSeed(new Uint8Array(16).fill(1)))).toBe(true)
    expect(Either.isRight(accountFromSeed(new Uint8Array(64).fill(1)))).toBe(true)
    expect(Either.isLeft(accountFromSeed(new Uint8Array(65)))).toBe(true)
    expect(Either.isLeft(deriveAddress(watch, RECEIVE, -1))).toBe(true)
    expect(Either.isLeft(deriveAddress(watch, RECEIVE, 1.5))).toBe(true)
    expect(Either.isLeft(deriveAddress(watch, RECEIVE, 0x80000000))).toBe(true)
    expect(Either.isRight(deriveAddress(watch, RECEIVE, 0x7fffffff))).toBe(true)
    expect(Either.isLeft(deriveAddresses(watch, RECEIVE, 0x7fffffff, 2))).toBe(true)
  })

  it("converts the xpub to litecoind regtest (tpub) with the same key material", () => {
    const tpub = unwrap(convertXpub(account.watch.xpub, ledgerParams, litecoinRegtestParams))
    expect(tpub.startsWith("tpub")).toBe(true)
    const regtest = unwrap(watchOnlyFromXpub(tpub, litecoinRegtestParams))
    const a = unwrap(deriveAddress(regtest, RECEIVE, 5))
    const b = unwrap(deriveAddress(watch, RECEIVE, 5))
    expect(Buffer.from(a.publicKey).equals(Buffer.from(b.publicKey))).toBe(true)
    expect(a.address).not.toBe(b.address)
  })

  it("finds which branch and index an address sits at (signer ↔ xpub)", () => {
    const target = unwrap(deriveAddress(watch, CHANGE, 7))
    expect(unwrap(findAddress(watch, target.address, 20))).toMatchObject({ branch: CHANGE, index: 7 })
    expect(unwrap(findAddress(watch, target.address, 7))).toBeUndefined()
  })
})
