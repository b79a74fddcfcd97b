// Builds and signs P2PKH transactions for a UtxoChainParams chain: plain sends, OP_RETURN
// stamps and Omni class C transactions (bitcoinjs-lib's Transaction, signed input by input). Pure: inputs and a key in, signed
// bytes out; every failure is an Either whose left is a tagged BuildError (buildErrors.ts) a caller
// can branch on, with a message for a person (bitcoinjs throws stay inside). The same bytes go to
// the devnet or a real node.
//
// Policy mirrors what litecoind measured (notes/chains-brief.md §1): one OP_RETURN per tx,
// data ≤ params.opReturnMaxBytes, no output below params.dustSats, fee ≥ minFeeRateSatPerVb.
import { Psbt, Transaction, payments, script as bscript } from "bitcoinjs-lib"
import { ECPairFactory, type ECPairInterface } from "ecpair"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey, validateLedgerAddress } from "./address.ts"
import {
  DuplicateInput,
  DustOutput,
  FeeInvariantBroken,
  FeeRateTooHigh,
  FeeRateTooLow,
  InsufficientFunds,
  InvalidAddress,
  InvalidInput,
  InvalidOmniPayload,
  InvalidSignerKey,
  NoInputs,
  NoOutputs,
  OmniChangeNotToSender,
  OpReturnTooLarge,
  OutputValueTooLarge,
  SigningFailed,
  TooLarge,
  TooManyInputs,
  TooManyOpReturns,
  TooManyOutputs,
  UncompressedSignerKey,
  type AddressRole,
  type BuildError
} from "./buildErrors.ts"
import { encodeOmniPayload, OMNI_MARKER, type OmniPayload } from "./omni/codec.ts"
import { parsedTx, rememberParsed } from "./parsedTx.ts"
import { legacySize, serialize, sighashAll, txidOf } from "./rawTx.ts"
import type { UtxoChainParams } from "./params.ts"

const ECPair = ECPairFactory(ecc)

export interface Utxo {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  /** scriptPubKey of the output being spent; must be the signer's P2PKH script. */
  readonly script: Uint8Array
  /** The full previous transaction: checked to pay exactly `value` to `script` at `vout`. */
  readonly prevTxHex: string
}

/** A compressed P2PKH key, as raw 32 bytes or WIF under the params' wif byte. */
export type Signer = { readonly privateKey: Uint8Array } | { readonly wif: string }

export interface BuiltTx {
  readonly hex: string
  readonly txid: string
  /** Inputs minus outputs, in satoshis (change below dust included). */
  readonly fee: bigint
  /** Virtual size of the signed transaction. */
  readonly vsize: number
}

export interface Payment {
  readonly address: string
  readonly value: bigint
}

interface Common {
  /** All of them are spent, vin in this order; vin[0] is the Omni sender. */
  readonly inputs: ReadonlyArray<Utxo>
  readonly signer: Signer
  readonly changeAddress: string
  /** Defaults to params.minFeeRateSatPerVb. */
  readonly feeRateSatPerVb?: bigint
}

export interface SendRequest extends Common {
  readonly outputs: ReadonlyArray<Payment>
}
export interface StampRequest extends Common {
  readonly data: Uint8Array
}
export interface OmniRequest extends Common {
  readonly payload: OmniPayload
  /** Receiver of a simple send or a grant; omitted means the sender itself (Omni's rule). */
  readonly reference?: string
}

/** Above this the fee is almost certainly a unit mistake (sats/kvB, BTC) rather than intent. */
export const FEE_RATE_MAX_SAT_PER_VB = 1_000n
/** Bitcoin Core and litecoind refuse to relay transactions heavier than 400k WU = 100k vB. */
export const TX_VSIZE_MAX = 100_000
/** Bound the work per call; 500 P2PKH inputs (147 vB each) stay inside TX_VSIZE_MAX. */
export const INPUTS_MAX = 500
export const OUTPUTS_MAX = 500

// A signed P2PKH scriptSig: push(DER signature ≤ 72 bytes with low S, + sighash byte) then
// push(33-byte compressed key). A placeholder of the largest length gives the signed size without
// signing twice. Not ground to low R (which caps it at 71): grinding signs twice on average, and
// a signature was most of a settlement leg's CPU (issue 22); the fee it would save is at most one
// byte per input, and an estimate at the largest length never pays too little.
const SIG_WITH_HASHTYPE_MAX = 73
const PLACEHOLDER_SCRIPT_SIG = new Uint8Array(1 + SIG_WITH_HASHTYPE_MAX + 1 + 33)
// Amounts are int64 on the wire (CAmount): bitcoinjs refuses, by throwing, anything above this.
const SATS_MAX = (1n << 63n) - 1n
const OP_RETURN = 0x6a

type Out = { readonly script: Uint8Array; readonly value: bigint }

const fail = <E extends BuildError>(error: E): Either.Either<never, E> => Either.left(error)
const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i])
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * Keys already made from a raw private key, by that key's bytes (the caller's own array): deriving
 * the public key costs about as much as a signature, and a wallet signs with one key many times.
 * Weak, so a key the caller drops (an expired grant's) leaves this cache with it.
 */
const keyCache = new WeakMap<Uint8Array, { readonly network: UtxoChainParams["network"]; readonly key: ECPairInterface }>()

const keyOf = (signer: Signer, params: UtxoChainParams): Either.Either<ECPairInterface, BuildError> => {
  const cached = "privateKey" in signer ? keyCache.get(signer.privateKey) : undefined
  if (cached !== undefined && cached.network === params.network) return Either.right(cached.key)
  try {
    const key =
      "wif" in signer
        ? ECPair.fromWIF(signer.wif, params.network)
        : ECPair.fromPrivateKey(signer.privateKey, { network: params.network, compressed: true })
    if (!key.compressed) return fail(new UncompressedSignerKey())
    if ("privateKey" in signer) keyCache.set(signer.privateKey, { network: params.network, key })
    return Either.right(key)
  } catch (e) {
    return fail(new InvalidSignerKey({ detail: messageOf(e) }))
  }
}

const p2pkhScripts = new WeakMap<ECPairInterface, Uint8Array>()
const p2pkhOfKey = (key: ECPairInterface): Uint8Array => {
  let script = p2pkhScripts.get(key)
  if (script === undefined) p2pkhScripts.set(key, (script = payments.p2pkh({ pubkey: key.publicKey }).output!))
  return script
}

/**
 * Output scripts of addresses already checked, by version bytes and address (bounded, oldest out first): a
 * wallet pays its change to one address and its legs to the same few users, and the base58check
 * decode (two JavaScript SHA-256) and bitcoinjs' payment validation were a sixth of a leg's build.
 */
const scriptCacheMax = 4_096
const scriptCache = new Map<string, Uint8Array>()

const scriptOf = (address: string, params: UtxoChainParams, role: AddressRole, index?: number): Either.Either<Uint8Array, InvalidAddress> => {
  // Keyed by the version bytes that decide validity, not by the chain's name (a test may change them).
  const cacheKey = `${params.network.pubKeyHash}:${params.network.scriptHash}:${address}`
  const known = scriptCache.get(cacheKey)
  if (known !== undefined) return Either.right(known)
  const check = validateLedgerAddress(address, params)
  if (!check.valid) return fail(new InvalidAddress({ role, ...(index === undefined ? {} : { index }), address, reason: check.error }))
  const hash = check.hash160
  const script = check.type === "p2pkh" ? payments.p2pkh({ hash }).output! : payments.p2sh({ hash }).output!
  if (scriptCache.size >= scriptCacheMax) scriptCache.delete(scriptCache.keys().next().value!)
  scriptCache.set(cacheKey, script)
  return Either.right(script)
}

/** The output script for a ledger address under `params`, or why the address is refused. */
export const addressScript = (address: string, params: UtxoChainParams): Either.Either<Uint8Array, InvalidAddress> =>
  scriptOf(address, params, "address")

const opReturn = (data: Uint8Array, params: UtxoChainParams): Either.Either<Out, BuildError> => {
  if (data.length > params.opReturnMaxBytes) return fail(new OpReturnTooLarge({ size: data.length, limit: params.opReturnMaxBytes }))
  return Either.right({ script: payments.embed({ data: [data] }).output!, value: 0n })
}

/** Previous transactions parsed and hashed once (src/chain/parsedTx.ts): a wallet's legs chain on each other's change, so each is a previous transaction of the next one, and the builder remembers what it signs. */
const parsePrev = parsedTx

const checkInputs = (inputs: ReadonlyArray<Utxo>, signerScript: Uint8Array): Either.Either<void, BuildError> => {
  if (inputs.length === 0) return fail(new NoInputs())
  if (inputs.length > INPUTS_MAX) return fail(new TooManyInputs({ count: inputs.length, limit: INPUTS_MAX }))
  const seen = new Set<string>()
  for (const [i, u] of inputs.entries()) {
    const outpoint = `${u.txid}:${u.vout}`
    const at = { index: i, txid: u.txid, vout: u.vout }
    if (seen.has(outpoint)) return fail(new DuplicateInput(at))
    seen.add(outpoint)
    if (u.value <= 0n || u.value > SATS_MAX) return fail(new InvalidInput(at, { reason: "value", value: u.value }))
    // Every input must be the signer's: we sign them all, and Omni takes the sender from vin[0].
    if (!bytesEqual(u.script, signerScript)) return fail(new InvalidInput(at, { reason: "notSignersScript" }))
    let prev: { readonly tx: Transaction; readonly txid: string }
    try {
      prev = parsePrev(u.prevTxHex)
    } catch (e) {
      return fail(new InvalidInput(at, { reason: "prevTxUnparseable", detail: messageOf(e) }))
    }
    if (prev.txid !== u.txid) return fail(new InvalidInput(at, { reason: "prevTxidMismatch", prevTxid: prev.txid }))
    const out = prev.tx.outs[u.vout]
    if (out === undefined) return fail(new InvalidInput(at, { reason: "prevOutputMissing" }))
    if (out.value !== u.value || !bytesEqual(out.script, u.script)) return fail(new InvalidInput(at, { reason: "prevOutputMismatch" }))
  }
  return Either.right(undefined)
}

/** Virtual size once signed: placeholder scriptSigs of the longest signed length. */
const estimateVsize = (inputs: ReadonlyArray<Utxo>, outs: ReadonlyArray<Out>): number =>
  legacySize(inputs.map(() => PLACEHOLDER_SCRIPT_SIG.length), outs)

/** push(signature with its sighash byte) push(compressed key): both under 76 bytes, so each push is its length byte. */
const p2pkhScriptSig = (signature: Uint8Array, publicKey: Uint8Array): Uint8Array => {
  const out = new Uint8Array(2 + signature.length + publicKey.length)
  out[0] = signature.length
  out.set(signature, 1)
  out[1 + signature.length] = publicKey.length
  out.set(publicKey, 2 + signature.length)
  return out
}

/**
 * Signs every input (all P2PKH of `key`, checked by checkInputs) with SIGHASH_ALL, straight on the
 * raw transaction: the legacy sighash does not cover the spent value, so a PSBT's parse and
 * re-hash of each previous transaction (most of its cost, about 2 ms a send here) buys nothing
 * once checkInputs has matched each input to its previous output. The bytes and digests are
 * written by rawTx.ts (bitcoinjs' Transaction and its JavaScript SHA-256 were half a leg's cost);
 * the signatures are the same RFC 6979 ones a PSBT makes, so the bytes are identical
 * (txBuilder.test.ts compares them). The signed bytes and their txid.
 */
const sign = (
  inputs: ReadonlyArray<Utxo>,
  outs: ReadonlyArray<Out>,
  key: ECPairInterface
): Either.Either<{ readonly bytes: Buffer; readonly txid: string }, BuildError> => {
  try {
    const scriptSigs = inputs.map((u, i) => {
      const hash = sighashAll(inputs, outs, i, u.script)
      return p2pkhScriptSig(bscript.signature.encode(key.sign(hash), Transaction.SIGHASH_ALL), key.publicKey)
    })
    const bytes = serialize(inputs, scriptSigs, outs)
    return Either.right({ bytes, txid: txidOf(bytes) })
  } catch (e) {
    return fail(new SigningFailed({ detail: messageOf(e) }))
  }
}

/** The PSBT signer the lean one replaced: kept to show the two give the same bytes (tests only). */
export const signWithPsbt = (
  inputs: ReadonlyArray<Utxo>,
  outs: ReadonlyArray<Out>,
  key: ECPairInterface,
  params: UtxoChainParams
): Transaction => {
  const psbt = new Psbt({ network: params.network })
  psbt.setVersion(2)
  inputs.forEach((u) => psbt.addInput({ hash: u.txid, index: u.vout, nonWitnessUtxo: Buffer.from(u.prevTxHex, "hex") }))
  for (const o of outs) psbt.addOutput({ script: o.script, value: o.value })
  return psbt.signAllInputs(key).finalizeAllInputs().extractTransaction(true)
}

/**
 * The shared core: `fixed` outputs in order, change inserted at `changeIndex` when it is at
 * least dust, otherwise folded into the fee.
 */
const build = (params: UtxoChainParams, req: Common, fixed: ReadonlyArray<Out>, changeIndex: number): Either.Either<BuiltTx, BuildError> => {
  const rate = req.feeRateSatPerVb ?? params.minFeeRateSatPerVb
  if (rate < params.minFeeRateSatPerVb) return fail(new FeeRateTooLow({ feeRate: rate, minimum: params.minFeeRateSatPerVb }))
  if (rate > FEE_RATE_MAX_SAT_PER_VB) return fail(new FeeRateTooHigh({ feeRate: rate, maximum: FEE_RATE_MAX_SAT_PER_VB }))
  if (fixed.length > OUTPUTS_MAX) return fail(new TooManyOutputs({ count: fixed.length, limit: OUTPUTS_MAX }))
  // litecoind refuses a second OP_RETURN as non-standard (multi-op-return). No request reaches
  // this today (each builder adds at most one); it guards the shared core.
  const opReturns = fixed.filter((o) => o.script[0] === OP_RETURN).length
  if (opReturns > 1) return fail(new TooManyOpReturns({ count: opReturns, limit: 1 }))

  const key = keyOf(req.signer, params)
  if (Either.isLeft(key)) return Either.left(key.left)
  const change = scriptOf(req.changeAddress, params, "change")
  if (Either.isLeft(change)) return Either.left(change.left)
  const checked = checkInputs(req.inputs, p2pkhOfKey(key.right))
  if (Either.isLeft(checked)) return Either.left(checked.left)

  const totalIn = req.inputs.reduce((s, u) => s + u.value, 0n)
  const totalOut = fixed.reduce((s, o) => s + o.value, 0n)
  const withChange = (value: bigint): Out[] => [...fixed.slice(0, changeIndex), { script: change.right, value }, ...fixed.slice(changeIndex)]
  const changeValue = totalIn - totalOut - BigInt(estimateVsize(req.inputs, withChange(0n))) * rate
  let outs: ReadonlyArray<Out>
  if (changeValue >= params.dustSats) {
    outs = withChange(changeValue)
  } else {
    // Change below dust would make the tx non-standard: it goes to the miner instead.
    const fee = BigInt(estimateVsize(req.inputs, fixed)) * rate
    if (totalIn < totalOut + fee) {
      return fail(new InsufficientFunds({ inputsTotal: totalIn, outputsTotal: totalOut, fee, feeRate: rate }))
    }
    outs = fixed
  }
  const estimated = estimateVsize(req.inputs, outs)
  // Unreachable with INPUTS_MAX and OUTPUTS_MAX as they are (at most ~91k vB); guards a raise of either.
  if (estimated > TX_VSIZE_MAX) return fail(new TooLarge({ vsize: estimated, limit: TX_VSIZE_MAX }))

  const tx = sign(req.inputs, outs, key.right)
  if (Either.isLeft(tx)) return Either.left(tx.left)
  const fee = totalIn - outs.reduce((s, o) => s + o.value, 0n)
  const vsize = tx.right.bytes.length
  // The placeholder is the longest scriptSig, so the real size can only be smaller. A breach
  // is a bug in the estimate, not a user error: its own variant, FeeInvariantBroken.
  if (BigInt(vsize) * rate > fee) return fail(new FeeInvariantBroken({ fee, vsize, feeRate: rate }))
  const hex = tx.right.bytes.toString("hex")
  // The next leg of this wallet spends its change: its parse of these bytes is a lookup.
  const { txid } = rememberParsed(hex, Transaction.fromBuffer(tx.right.bytes), tx.right.txid)
  return Either.right({ hex, txid, fee, vsize })
}

const paymentOutputs = (params: UtxoChainParams, outputs: ReadonlyArray<Payment>): Either.Either<Out[], BuildError> => {
  const outs: Out[] = []
  for (const [i, o] of outputs.entries()) {
    const script = scriptOf(o.address, params, "output", i)
    if (Either.isLeft(script)) return Either.left(script.left)
    if (o.value < params.dustSats) {
      return fail(new DustOutput({ index: i, address: o.address, value: o.value, dust: params.dustSats }))
    }
    if (o.value > SATS_MAX) return fail(new OutputValueTooLarge({ index: i, value: o.value, limit: SATS_MAX }))
    outs.push({ script: script.right, value: o.value })
  }
  return Either.right(outs)
}

/** Pays each output in order; change to `changeAddress` comes last. */
export const buildSend = (params: UtxoChainParams, req: SendRequest): Either.Either<BuiltTx, BuildError> => {
  if (req.outputs.length === 0) return fail(new NoOutputs())
  const outs = paymentOutputs(params, req.outputs)
  if (Either.isLeft(outs)) return Either.left(outs.left)
  return build(params, req, outs.right, outs.right.length)
}

/** An OP_RETURN stamp (vout0) plus change. */
export const buildStamp = (params: UtxoChainParams, req: StampRequest): Either.Either<BuiltTx, BuildError> => {
  const data = opReturn(req.data, params)
  if (Either.isLeft(data)) return Either.left(data.left)
  return build(params, req, [data.right], 1)
}

/**
 * An Omni class C transaction in the order the reference rule reads it: vout0 OP_RETURN
 * ("omni" ‖ payload), vout1 change, vout2 the reference at the dust amount (the highest vout).
 */
export const buildOmni = (params: UtxoChainParams, req: OmniRequest): Either.Either<BuiltTx, BuildError> => {
  const payload = encodeOmniPayload(req.payload)
  if (Either.isLeft(payload)) return fail(new InvalidOmniPayload({ message: payload.left.message }))
  const data = opReturn(Uint8Array.of(...OMNI_MARKER, ...payload.right), params)
  if (Either.isLeft(data)) return Either.left(data.left)
  const fixed: Out[] = [data.right]
  if (req.reference !== undefined) {
    const ref = scriptOf(req.reference, params, "reference")
    if (Either.isLeft(ref)) return Either.left(ref.left)
    fixed.push({ script: ref.right, value: params.dustSats })
  } else {
    // With no reference output, Omni would read a change output as the receiver unless it pays
    // the sender (the first output paying the sender is skipped): change must go to the sender.
    const key = keyOf(req.signer, params)
    if (Either.isLeft(key)) return Either.left(key.left)
    const change = scriptOf(req.changeAddress, params, "change")
    if (Either.isLeft(change)) return Either.left(change.left)
    if (!bytesEqual(change.right, p2pkhOfKey(key.right))) {
      const sender = p2pkhAddressOfPubkey(key.right.publicKey, params)
      return fail(new OmniChangeNotToSender({ sender: Either.getOrElse(sender, () => ""), changeAddress: req.changeAddress }))
    }
  }
  return build(params, req, fixed, 1)
}

// ---------------------------------------------------------------------------------------------
// Unchecked signing, for tests of a ledger's policy (dust, 81-byte OP_RETURN, two OP_RETURNs,
// zero fee): no policy, no change, outputs exactly as given. Never used to build real payments.

export interface RawOutput {
  readonly script: Uint8Array
  readonly value: bigint
}

/** Signs P2PKH inputs over exactly these outputs; nothing but the key is checked. */
export const signUnchecked = (
  params: UtxoChainParams,
  inputs: ReadonlyArray<Pick<Utxo, "txid" | "vout" | "script">>,
  outputs: ReadonlyArray<RawOutput>,
  signer: Signer
): Either.Either<{ readonly hex: string; readonly txid: string }, BuildError> => {
  const key = keyOf(signer, params)
  if (Either.isLeft(key)) return Either.left(key.left)
  try {
    const tx = new Transaction()
    tx.version = 2
    for (const u of inputs) tx.addInput(Buffer.from(u.txid, "hex").reverse(), u.vout)
    for (const o of outputs) tx.addOutput(o.script, o.value)
    inputs.forEach((u, i) => {
      const hash = tx.hashForSignature(i, u.script, Transaction.SIGHASH_ALL)
      const sig = bscript.signature.encode(key.right.sign(hash, true), Transaction.SIGHASH_ALL)
      tx.setInputScript(i, bscript.compile([sig, key.right.publicKey]))
    })
    return Either.right({ hex: tx.toHex(), txid: tx.getId() })
  } catch (e) {
    return fail(new SigningFailed({ detail: messageOf(e) }))
  }
}

/** OP_RETURN with exactly these pushes (one or several), for policy tests. */
export const nullDataScript = (...pushes: ReadonlyArray<Uint8Array>): Uint8Array => payments.embed({ data: [...pushes] }).output!
