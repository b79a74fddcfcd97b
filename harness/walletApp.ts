// A phone wallet for wallet-identity tests and the chaos campaign: a BIP-32 seed, its ledger account xpub
// (m/44'/696969'/0') and the signing key at m/44'/696969'/0'/0/0, signing with the chain layer's
// signer (bitcoinjs-message) under any BIP-137 header kind.
import { randomBytes } from "node:crypto"
import { payments } from "bitcoinjs-lib"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { unwrap } from "./either.ts"
import { accountFromSeed, deriveAddress, RECEIVE, signingKeyFromSeed } from "../src/chain/keys.ts"
import { signMessage } from "../src/chain/message.ts"
import { ledgerParams } from "../src/chain/params.ts"
import { canonicalJson, type CanonicalValue } from "../src/crypto/canonicalJson.ts"

/** The header kinds a wallet may sign with, and which of the key's addresses it then names. */
export type SignKind = "compressed" | "uncompressed" | "p2sh-p2wpkh" | "p2wpkh" | "electrum-p2sh" | "electrum-p2wpkh"

export const makeWallet = (seed: Uint8Array = randomBytes(32)) => {
  const account = unwrap(accountFromSeed(seed))
  const key = unwrap(signingKeyFromSeed(seed))
  const net = ledgerParams.network
  const addresses = {
    p2pkh: key.address,
    uncompressed: payments.p2pkh({ pubkey: Buffer.from(ecc.pointFromScalar(key.privateKey, false)!), network: net }).address!,
    p2shP2wpkh: payments.p2sh({ redeem: payments.p2wpkh({ pubkey: Buffer.from(key.publicKey), network: net }), network: net }).address!,
    p2wpkh: payments.p2wpkh({ pubkey: Buffer.from(key.publicKey), network: net }).address!
  }
  const addressFor: Record<SignKind, string> = {
    compressed: addresses.p2pkh,
    uncompressed: addresses.uncompressed,
    "p2sh-p2wpkh": addresses.p2shP2wpkh,
    p2wpkh: addresses.p2wpkh,
    "electrum-p2sh": addresses.p2shP2wpkh,
    "electrum-p2wpkh": addresses.p2wpkh
  }
  const sign = (message: string, kind: SignKind = "compressed"): string => {
    const options = kind === "uncompressed" ? { compressed: false }
      : kind === "p2sh-p2wpkh" ? { segwitType: "p2sh(p2wpkh)" as const }
      : kind === "p2wpkh" ? { segwitType: "p2wpkh" as const }
      : {}
    return unwrap(signMessage(message, key.privateKey, ledgerParams, options))
  }
  return {
    xpub: account.watch.xpub,
    addresses,
    addressFor,
    sign,
    signJson: (payload: CanonicalValue, kind: SignKind = "compressed") => sign(canonicalJson(payload), kind),
    /** The receive or change address at `index` (where a test sends tokens). */
    derived: (index: number, branch: 0 | 1 = RECEIVE) => Either.getOrThrow(deriveAddress(account.watch, branch, index)).address
  }
}
export type TestWallet = ReturnType<typeof makeWallet>

/** The payload a wallet builds from a desk manifest. */
export const deskPayload = (manifest: Record<string, any>, wallet: TestWallet, evm = "0x52908400098527886E0F7030069857D2E4169EE7") => ({
  v: manifest.v as 1,
  type: manifest.type as "wl-link-xpubs",
  challenge_id: manifest.challenge_id,
  from: manifest.from,
  callback_url: manifest.callback_url,
  chains: ["LEDGER", "EVM", "BASE"] as Array<"LEDGER" | "EVM" | "BASE">,
  xpubs: { LEDGER: wallet.xpub, EVM: evm },
  wallet: "Test Wallet 1.0",
  exp: manifest.exp,
  issued_at: manifest.issued_at
})
