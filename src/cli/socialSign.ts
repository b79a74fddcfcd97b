// Client-side signing of member-signed stamps for `social post --xprv-file FILE` (docs/social.md,
// "Member-signed stamps"): the account-level extended private key (m/44'/696969'/1101') is read
// here, in the CLI process, and each PSBT the Post entity built is signed with the key its
// bip32Derivation names (the account key's fingerprint, m/i/0/0 below it). Only the signed PSBTs
// leave this process; the key never reaches the node or the database. Pure but for reading the file.
import { readFileSync } from "node:fs"
import { BIP32Factory } from "bip32"
import { Psbt } from "bitcoinjs-lib"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import type { UtxoChainParams } from "../chain/params.ts"

const bip32 = BIP32Factory(ecc)
const ACCOUNT_DEPTH = 3

/** The account key from a file holding its xprv (whitespace around it ignored). */
export const readAccountKey = (file: string, params: UtxoChainParams): Either.Either<ReturnType<typeof bip32.fromBase58>, string> =>
  Either.flatMap(
    Either.try({ try: () => readFileSync(file, "utf8").trim(), catch: (e) => `--xprv-file ${file}: ${(e as Error).message}` }),
    (text) => Either.flatMap(
      Either.try({ try: () => bip32.fromBase58(text, params.network), catch: () => `--xprv-file ${file}: not an extended private key of ${params.name}` }),
      (node) => node.isNeutered() || node.depth !== ACCOUNT_DEPTH
        ? Either.left(`--xprv-file ${file}: the account's extended private key (depth 3, m/44'/${params.coinType}'/1101') is needed`)
        : Either.right(node)
    )
  )

/** Each PSBT signed with the account key's child its bip32Derivation names; Left if one is not this account's. */
export const signStamps = (
  psbts: ReadonlyArray<string>,
  account: ReturnType<typeof bip32.fromBase58>,
  params: UtxoChainParams
): Either.Either<ReadonlyArray<string>, string> =>
  Either.all(psbts.map((text, i) =>
    Either.try({
      try: () => {
        const psbt = Psbt.fromBase64(text, { network: params.network })
        psbt.data.inputs.forEach((input, n) => {
          const derivation = input.bip32Derivation?.find((d) => Buffer.compare(Buffer.from(d.masterFingerprint), Buffer.from(account.fingerprint)) === 0)
          if (derivation === undefined) throw new Error("its key is not below this account key")
          const steps = derivation.path.replace(/^m\//, "").split("/").map((s) => {
            if (!/^\d+$/.test(s)) throw new Error(`unexpected path ${derivation.path}`)
            return Number(s)
          })
          const child = steps.reduce((node, step) => node.derive(step), account)
          if (Buffer.compare(Buffer.from(child.publicKey), Buffer.from(derivation.pubkey)) !== 0) throw new Error("the derived key is not the one named")
          psbt.signInput(n, child)
        })
        return psbt.finalizeAllInputs().toBase64()
      },
      catch: (e) => `stamp ${i}: ${(e as Error).message}`
    })))
