// Member-signed stamps, the pure part (docs/social.md, "Member-signed stamps"): an OP_RETURN stamp
// built unsigned as a BIP-174 PSBT for a wallet to sign (one P2PKH input: the stamp's own sponsor
// coin, with nonWitnessUtxo and bip32Derivation; outputs: the OP_RETURN, then change back to the
// same address), and the check that a signed transaction the member sends back is exactly the one
// built, signed by the key of that address.
//
// Legacy P2PKH txids depend on the signatures, so a stamp cannot spend the change of another
// stamp not signed yet: every stamp of one action spends its own coin and they are all built at once.
import { BIP32Factory } from "bip32"
import { Psbt, Transaction, payments, script as bscript } from "bitcoinjs-lib"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import type { UtxoChainParams } from "../../chain/params.ts"

export interface UnsignedStampRequest {
  /** The sponsor coin this stamp spends (an output of the funding transaction, paying `address`). */
  readonly coin: { readonly txid: string; readonly vout: number; readonly value: bigint; readonly prevTxHex: string }
  readonly address: string
  readonly opReturn: string
  /** The post key's public key (derived from the account xpub). */
  readonly pubkey: Uint8Array
  /** bip32Derivation: the account key's own fingerprint and the path below it (Electrum's convention when the master is unknown). */
  readonly fingerprint: Uint8Array
  readonly relativePath: string
}

export interface UnsignedStamp {
  readonly psbtBase64: string
  /** The transaction as built with an empty scriptSig: what a signed one must equal but for it. */
  readonly unsignedHex: string
  readonly changeValue: bigint
}

// A signed P2PKH scriptSig is at most 1 + 72 + 1 + 33 bytes (a high-R DER signature with its
// sighash byte, then the compressed key): the fee is computed for that size, so any signature fits.
const SCRIPT_SIG_MAX = new Uint8Array(1 + 72 + 1 + 33)

const p2pkhScript = (address: string, params: UtxoChainParams): Uint8Array => payments.p2pkh({ address, network: params.network }).output!

export const buildUnsignedStamp = (params: UtxoChainParams, req: UnsignedStampRequest): Either.Either<UnsignedStamp, string> =>
  Either.try({
    try: () => {
      const script = p2pkhScript(req.address, params)
      const prev = Transaction.fromHex(req.coin.prevTxHex)
      const out = prev.outs[req.coin.vout]
      if (prev.getId() !== req.coin.txid || out === undefined || out.value !== req.coin.value || Buffer.compare(Buffer.from(out.script), Buffer.from(script)) !== 0) {
        throw new Error(`coin ${req.coin.txid}:${req.coin.vout} does not pay ${req.address} ${req.coin.value} sats`)
      }
      const data = payments.embed({ data: [Buffer.from(req.opReturn, "ascii")] }).output!
      const sized = new Transaction()
      sized.version = 2
      sized.addInput(Buffer.from(req.coin.txid, "hex").reverse(), req.coin.vout, 0xffffffff, SCRIPT_SIG_MAX)
      sized.addOutput(data, 0n)
      sized.addOutput(script, 0n)
      const changeValue = req.coin.value - BigInt(sized.virtualSize()) * params.minFeeRateSatPerVb
      // The change is the stamp's unspent coin on the address, what Timeline.ts walks back from.
      if (changeValue < params.dustSats) throw new Error(`a coin of ${req.coin.value} sats leaves change below dust`)
      const psbt = new Psbt({ network: params.network })
      psbt.setVersion(2)
      psbt.addInput({
        hash: req.coin.txid, index: req.coin.vout, nonWitnessUtxo: Buffer.from(req.coin.prevTxHex, "hex"),
        bip32Derivation: [{ masterFingerprint: Buffer.from(req.fingerprint), path: req.relativePath, pubkey: Buffer.from(req.pubkey) }]
      })
      psbt.addOutput({ script: data, value: 0n })
      psbt.addOutput({ script, value: changeValue })
      const unsigned = new Transaction()
      unsigned.version = 2
      unsigned.addInput(Buffer.from(req.coin.txid, "hex").reverse(), req.coin.vout, 0xffffffff)
      unsigned.addOutput(data, 0n)
      unsigned.addOutput(script, changeValue)
      return { psbtBase64: psbt.toBase64(), unsignedHex: unsigned.toHex(), changeValue }
    },
    catch: (e) => (e instanceof Error ? e.message : String(e))
  })

/**
 * What the member sent for one stamp, as a transaction: a signed raw transaction (hex), or a PSBT
 * (base64) that is finalized or carries a partial signature (finalized here). Left(reason) otherwise.
 */
export const signedTransactionOf = (item: string): Either.Either<Transaction, string> => {
  const text = item.trim()
  if (/^[0-9a-fA-F]+$/.test(text)) return Either.try({ try: () => Transaction.fromHex(text), catch: () => "not a transaction (hex)" })
  return Either.try({
    try: () => {
      const psbt = Psbt.fromBase64(text)
      const input = psbt.data.inputs[0]
      if (psbt.data.inputs.length === 1 && input !== undefined && input.finalScriptSig === undefined) psbt.finalizeAllInputs()
      // Our own check (verifySignedStamp) decides; bitcoinjs' fee check has nothing to add here.
      return psbt.extractTransaction(true)
    },
    catch: (e) => `not a signed PSBT: ${e instanceof Error ? e.message : String(e)}`
  })
}

/** The outpoint a transaction's first input spends, "txid:vout". */
export const outpointOf = (tx: Transaction): string | undefined => {
  const input = tx.ins[0]
  return input === undefined ? undefined : `${Buffer.from(input.hash).reverse().toString("hex")}:${input.index}`
}

/**
 * Whether `signed` is exactly the transaction built (`unsignedHex`: version, locktime, the one
 * input with its sequence, every output's script and value) with a P2PKH scriptSig that is a
 * valid SIGHASH_ALL signature (low S) by the key of `address`. Right(undefined) when it is.
 */
export const verifySignedStamp = (params: UtxoChainParams, unsignedHex: string, address: string, signed: Transaction): Either.Either<void, string> => {
  const built = Transaction.fromHex(unsignedHex)
  if (signed.version !== built.version || signed.locktime !== built.locktime) return Either.left("version or locktime differs from the transaction built")
  if (signed.ins.length !== 1 || built.ins.length !== 1) return Either.left("a stamp has exactly one input")
  const [a, b] = [signed.ins[0]!, built.ins[0]!]
  if (Buffer.compare(Buffer.from(a.hash), Buffer.from(b.hash)) !== 0 || a.index !== b.index || a.sequence !== b.sequence) {
    return Either.left("the input differs from the transaction built")
  }
  if (a.witness.length > 0) return Either.left("a P2PKH input has no witness")
  if (signed.outs.length !== built.outs.length) return Either.left("the outputs differ from the transaction built")
  for (const [i, o] of built.outs.entries()) {
    const s = signed.outs[i]!
    if (s.value !== o.value || Buffer.compare(Buffer.from(s.script), Buffer.from(o.script)) !== 0) return Either.left(`output ${i} differs from the transaction built`)
  }
  const chunks = bscript.decompile(a.script)
  if (chunks === null || chunks.length !== 2 || !(chunks[0] instanceof Uint8Array) || !(chunks[1] instanceof Uint8Array)) {
    return Either.left("the scriptSig is not <signature> <public key>")
  }
  const [sigBytes, pubkey] = [chunks[0], chunks[1]]
  const owner = Either.try(() => payments.p2pkh({ pubkey, network: params.network }).address)
  if (Either.isLeft(owner) || owner.right !== address) return Either.left(`the signing key is not the key of ${address}`)
  const decoded = Either.try(() => bscript.signature.decode(sigBytes))
  if (Either.isLeft(decoded)) return Either.left("the signature is not DER")
  if (decoded.right.hashType !== Transaction.SIGHASH_ALL) return Either.left("the signature must be SIGHASH_ALL")
  const hash = signed.hashForSignature(0, p2pkhScript(address, params), Transaction.SIGHASH_ALL)
  const valid = Either.try(() => ecc.verify(hash, pubkey, decoded.right.signature, true))
  if (Either.isLeft(valid) || !valid.right) return Either.left("the signature does not verify (or its S is high)")
  return Either.right(undefined)
}

const bip32 = BIP32Factory(ecc)

export interface PostPublicKey {
  readonly address: string
  readonly pubkey: Uint8Array
  /** The account key's own fingerprint (the service never learns the wallet's master fingerprint). */
  readonly fingerprint: Uint8Array
  /** The path below the account key, as bip32Derivation carries it: m/{index}/0/0. */
  readonly relativePath: string
}

/** Post `index`'s key below an account-level xpub ([index, 0, 0], as socialKeys.postSteps), public side only. */
export const postKeyFromXpub = (xpub: string, steps: ReadonlyArray<number>, params: UtxoChainParams): Either.Either<PostPublicKey, string> =>
  Either.try({
    try: () => {
      const account = bip32.fromBase58(xpub, params.network)
      const node = steps.reduce((n, i) => n.derive(i), account)
      return {
        address: payments.p2pkh({ pubkey: node.publicKey, network: params.network }).address!,
        pubkey: new Uint8Array(node.publicKey),
        fingerprint: new Uint8Array(account.fingerprint),
        relativePath: `m/${steps.join("/")}`
      }
    },
    catch: (e) => `cannot derive from the account xpub: ${e instanceof Error ? e.message : String(e)}`
  })
