// Our key and message code against vectors published by others, on Bitcoin mainnet parameters
// (the module takes params, so the same code that serves the ledger is checked bit for bit):
// - BIP-32 test vectors 1 and 2 (github.com/bitcoin/bips, bip-0032.mediawiki), every chain;
// - BIP-137 / Electrum message signatures from bitcoinjs-message's README (version 2.2.0).
import { Either } from "effect"
import { payments } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { describe, expect, it } from "vitest"
import { unwrap } from "../../../harness/either.ts"
import { extendedKeysAt, watchOnlyFromXpub } from "../../../src/chain/keys.ts"
import { verifyMessage } from "../../../src/chain/message.ts"
import type { UtxoChainParams } from "../../../src/chain/params.ts"

/** Bitcoin mainnet, as our params record (only the network matters to these checks). */
const bitcoinParams: UtxoChainParams = {
  name: "bitcoin",
  network: {
    messagePrefix: "\x18Bitcoin Signed Message:\n",
    bech32: "bc",
    bip32: { public: 0x0488b21e, private: 0x0488ade4 },
    pubKeyHash: 0x00,
    scriptHash: 0x05,
    wif: 0x80
  },
  coinType: 0,
  dustSats: 546n,
  minFeeRateSatPerVb: 1n,
  opReturnMaxBytes: 80,
  coinbaseMaturity: 100
}

interface Chain {
  readonly path: string
  readonly xpub: string
  readonly xprv: string
}

const vector1: ReadonlyArray<Chain> = [
  { path: "m", xpub: "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8", xprv: "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi" },
  { path: "m/0'", xpub: "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw", xprv: "xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7" },
  { path: "m/0'/1", xpub: "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ", xprv: "xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs" },
  { path: "m/0'/1/2'", xpub: "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5", xprv: "xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM" },
  { path: "m/0'/1/2'/2", xpub: "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV", xprv: "xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334" },
  { path: "m/0'/1/2'/2/1000000000", xpub: "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy", xprv: "xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76" }
]

const vector2: ReadonlyArray<Chain> = [
  { path: "m", xpub: "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB", xprv: "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U" },
  { path: "m/0", xpub: "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH", xprv: "xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt" },
  { path: "m/0/2147483647'", xpub: "xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a", xprv: "xprv9wSp6B7kry3Vj9m1zSnLvN3xH8RdsPP1Mh7fAaR7aRLcQMKTR2vidYEeEg2mUCTAwCd6vnxVrcjfy2kRgVsFawNzmjuHc2YmYRmagcEPdU9" },
  { path: "m/0/2147483647'/1", xpub: "xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon", xprv: "xprv9zFnWC6h2cLgpmSA46vutJzBcfJ8yaJGg8cX1e5StJh45BBciYTRXSd25UEPVuesF9yog62tGAQtHjXajPPdbRCHuWS6T8XA2ECKADdw4Ef" },
  { path: "m/0/2147483647'/1/2147483646'", xpub: "xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL", xprv: "xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc" },
  { path: "m/0/2147483647'/1/2147483646'/2", xpub: "xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt", xprv: "xprvA2nrNbFZABcdryreWet9Ea4LvTJcGsqrMzxHx98MMrotbir7yrKCEXw7nadnHM8Dq38EGfSh6dqA9QWTyefMLEcBYJUuekgW4BYPJcr9E7j" }
]

const hex = (h: string) => Uint8Array.from(Buffer.from(h, "hex"))

describe("BIP-32 published test vectors (Bitcoin mainnet version bytes)", () => {
  const cases = [
    { name: "vector 1", seed: hex("000102030405060708090a0b0c0d0e0f"), chains: vector1 },
    {
      name: "vector 2",
      seed: hex("fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542"),
      chains: vector2
    }
  ]
  for (const { name, seed, chains } of cases) {
    it(`${name}: every chain's xpub and xprv`, () => {
      const got = chains.map((c) => ({ path: c.path, ...unwrap(extendedKeysAt(seed, c.path, bitcoinParams)) }))
      expect(got).toEqual(chains)
    })
  }

  it("the depth-3 chains are accepted as watch-only accounts and serialise back unchanged", () => {
    for (const chain of [vector1[3]!, vector2[3]!]) {
      expect(unwrap(watchOnlyFromXpub(chain.xpub, bitcoinParams)).xpub).toBe(chain.xpub)
      // The xprv of the same node is refused, not neutered.
      const refused = watchOnlyFromXpub(chain.xprv, bitcoinParams)
      expect(Either.isLeft(refused) && refused.left.message).toBe("this is an extended private key; share the account's extended public key instead")
    }
  })
})

describe("BIP-137 / Electrum signatures published with bitcoinjs-message", () => {
  const message = "This is an example of a signed message."
  const key = ECPairFactory(ecc).fromWIF("L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1")
  const network = bitcoinParams.network
  // Addresses of the README's key, computed independently of our address code.
  const p2pkh = payments.p2pkh({ pubkey: key.publicKey, network }).address!
  const p2wpkh = payments.p2wpkh({ pubkey: key.publicKey, network }).address!
  const p2shP2wpkh = payments.p2sh({ redeem: payments.p2wpkh({ pubkey: key.publicKey, network }), network }).address!
  // The README's three signatures: header 31 (compressed P2PKH), 35 (P2SH-P2WPKH), 39 (P2WPKH).
  const compressed = "H9L5yLFjti0QTHhPyFrZCT1V/MMnBtXKmoiKDZ78NDBjERki6ZTQZdSMCtkgoNmp17By9ItJr8o7ChX0XxY91nk="
  const p2shSig = "I9L5yLFjti0QTHhPyFrZCT1V/MMnBtXKmoiKDZ78NDBjERki6ZTQZdSMCtkgoNmp17By9ItJr8o7ChX0XxY91nk="
  const p2wpkhSig = "J9L5yLFjti0QTHhPyFrZCT1V/MMnBtXKmoiKDZ78NDBjERki6ZTQZdSMCtkgoNmp17By9ItJr8o7ChX0XxY91nk="

  it("the README's address is the key's P2PKH address", () => {
    expect(p2pkh).toBe("1F3sAm6ZtwLAUnj7d38pGFxtP3RVEvtsbV")
  })

  it("verifies each BIP-137 signature for its address kind", () => {
    expect(verifyMessage({ address: p2pkh, message, signature: compressed }, bitcoinParams)).toEqual({ valid: true, header: 31, addressKind: "p2pkh" })
    expect(verifyMessage({ address: p2shP2wpkh, message, signature: p2shSig }, bitcoinParams)).toEqual({ valid: true, header: 35, addressKind: "p2sh-p2wpkh" })
    expect(verifyMessage({ address: p2wpkh, message, signature: p2wpkhSig }, bitcoinParams)).toEqual({ valid: true, header: 39, addressKind: "p2wpkh" })
  })

  it("verifies Electrum's form: the compressed-header signature over either segwit address", () => {
    expect(verifyMessage({ address: p2wpkh, message, signature: compressed }, bitcoinParams)).toEqual({ valid: true, header: 31, addressKind: "p2wpkh" })
    expect(verifyMessage({ address: p2shP2wpkh, message, signature: compressed }, bitcoinParams)).toEqual({ valid: true, header: 31, addressKind: "p2sh-p2wpkh" })
  })

  it("refuses the same signatures for another message, another address kind, or the ledger's prefix", () => {
    expect(verifyMessage({ address: p2pkh, message: `${message}!`, signature: compressed }, bitcoinParams).valid).toBe(false)
    expect(verifyMessage({ address: p2pkh, message, signature: p2wpkhSig }, bitcoinParams).valid).toBe(false)
    // Same key and address bytes, but the signed text is prefixed "Bitcoin Signed Message".
    const otherPrefix = { ...bitcoinParams, network: { ...network, messagePrefix: "\x1aShardline Signed Message:\n" } }
    expect(verifyMessage({ address: p2pkh, message, signature: compressed }, otherPrefix).valid).toBe(false)
  })
})
