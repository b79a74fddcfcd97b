// Why the transaction builder (`txBuilder.ts`) refused a request: one tagged error class per
// failure it detects, with the numbers a caller branches on and the message a person reads.
// Each constructor writes the message from the fields, so the wording lives here only.
//
// Data.TaggedError classes (docs/runtime.md, "Errors"): `switch (e._tag)` or `Match.tag` to
// branch in pure code, `Effect.catchTag` once lifted into an Effect (`yield* e` fails with it).
import { Data } from "effect"

/** Which address of the request was refused. */
export type AddressRole = "address" | "output" | "change" | "reference"

/** For a person; tests and docs quote it, so its wording is stable. */
type Message = { readonly message: string }
type Count = { readonly count: number; readonly limit: number }

/** The private key or WIF does not parse (bad length, out of range, wrong WIF version byte). */
export class InvalidSignerKey extends Data.TaggedError("InvalidSignerKey")<{ readonly detail: string } & Message> {
  constructor(f: { readonly detail: string }) {
    super({ ...f, message: `invalid signer key: ${f.detail}` })
  }
}

/** A WIF for an uncompressed key: its P2PKH script is not the one of the 33-byte key we sign with. */
export class UncompressedSignerKey extends Data.TaggedError("UncompressedSignerKey")<Message> {
  constructor() {
    super({ message: "signer key must be compressed (P2PKH of the 33-byte public key)" })
  }
}

type InvalidAddressFields = {
  readonly role: AddressRole
  /** Position in `outputs`, for role "output". */
  readonly index?: number
  readonly address: string
  /** validateLedgerAddress's explanation. */
  readonly reason: string
}
const addressLabel = (role: AddressRole, index: number | undefined): string =>
  role === "address" ? "address" : role === "output" ? `output ${index} address` : `${role} address`

export class InvalidAddress extends Data.TaggedError("InvalidAddress")<InvalidAddressFields & Message> {
  constructor(f: InvalidAddressFields) {
    super({ ...f, message: `${addressLabel(f.role, f.index)} ${JSON.stringify(f.address)}: ${f.reason}` })
  }
}

export class OpReturnTooLarge extends Data.TaggedError("OpReturnTooLarge")<{
  /** Data bytes (for Omni: the "omni" marker plus the payload). */
  readonly size: number
  readonly limit: number
} & Message> {
  constructor(f: { readonly size: number; readonly limit: number }) {
    super({ ...f, message: `OP_RETURN data is ${f.size} bytes; the limit is ${f.limit}` })
  }
}

/** The Omni payload does not encode (omni/codec.ts); `message` is the codec's. */
export class InvalidOmniPayload extends Data.TaggedError("InvalidOmniPayload")<Message> {}

type OmniChangeFields = {
  /** The signer's address ("" if it cannot be encoded under the params). */
  readonly sender: string
  readonly changeAddress: string
}
/** No reference output and change not paid to the sender: Omni would read the change as receiver. */
export class OmniChangeNotToSender extends Data.TaggedError("OmniChangeNotToSender")<OmniChangeFields & Message> {
  constructor(f: OmniChangeFields) {
    super({
      ...f,
      message:
        `an Omni transaction without a reference must send its change to the sender ${f.sender}; ` +
        "otherwise Omni reads the change output as the receiver"
    })
  }
}

export class NoInputs extends Data.TaggedError("NoInputs")<Message> {
  constructor() {
    super({ message: "no inputs: a transaction spends at least one output" })
  }
}

export class TooManyInputs extends Data.TaggedError("TooManyInputs")<Count & Message> {
  constructor(f: Count) {
    super({ ...f, message: `${f.count} inputs; at most ${f.limit} per transaction` })
  }
}

type InputAt = { readonly index: number; readonly txid: string; readonly vout: number }

export class DuplicateInput extends Data.TaggedError("DuplicateInput")<InputAt & Message> {
  /** `index` is the second occurrence. */
  constructor(f: InputAt) {
    super({ ...f, message: `input ${f.index} spends ${f.txid}:${f.vout} a second time` })
  }
}

/** What is wrong with one input; `reason` tells which check failed. */
export type InputProblem =
  | { readonly reason: "value"; readonly value: bigint }
  | { readonly reason: "notSignersScript" }
  | { readonly reason: "prevTxUnparseable"; readonly detail: string }
  | { readonly reason: "prevTxidMismatch"; readonly prevTxid: string }
  | { readonly reason: "prevOutputMissing" }
  | { readonly reason: "prevOutputMismatch" }

/** InputProblem flattened: a class cannot extend a union; each reason sets only its own field. */
type InputProblemFields = {
  readonly reason: InputProblem["reason"]
  readonly value?: bigint
  readonly detail?: string
  readonly prevTxid?: string
}

const inputMessage = ({ index, txid, vout }: InputAt, p: InputProblem): string => {
  switch (p.reason) {
    case "value":
      return `input ${index} (${txid}:${vout}) has value ${p.value}; it must be positive`
    case "notSignersScript":
      return `input ${index} (${txid}:${vout}) is not paid to the signer's P2PKH script; only the signer's outputs can be spent`
    case "prevTxUnparseable":
      return `input ${index} (${txid}:${vout}): prevTxHex does not parse: ${p.detail}`
    case "prevTxidMismatch":
      return `input ${index}: prevTxHex has txid ${p.prevTxid}, not ${txid}`
    case "prevOutputMissing":
      return `input ${index}: ${txid} has no output ${vout}`
    case "prevOutputMismatch":
      return `input ${index} (${txid}:${vout}): value or script differ from the previous transaction's output`
  }
}

export class InvalidInput extends Data.TaggedError("InvalidInput")<InputAt & InputProblemFields & Message> {
  constructor(at: InputAt, problem: InputProblem) {
    super({ index: at.index, txid: at.txid, vout: at.vout, ...problem, message: inputMessage(at, problem) })
  }
}

export class NoOutputs extends Data.TaggedError("NoOutputs")<Message> {
  constructor() {
    super({ message: "no outputs: a send pays at least one address" })
  }
}

export class TooManyOutputs extends Data.TaggedError("TooManyOutputs")<Count & Message> {
  constructor(f: Count) {
    super({ ...f, message: `${f.count} outputs; at most ${f.limit} per transaction` })
  }
}

export class TooManyOpReturns extends Data.TaggedError("TooManyOpReturns")<Count & Message> {
  constructor(f: Count) {
    super({ ...f, message: "a transaction carries at most one OP_RETURN output" })
  }
}

type DustFields = { readonly index: number; readonly address: string; readonly value: bigint; readonly dust: bigint }
export class DustOutput extends Data.TaggedError("DustOutput")<DustFields & Message> {
  constructor(f: DustFields) {
    super({ ...f, message: `output ${f.index} pays ${f.value} sats to ${f.address}; below the dust threshold of ${f.dust}` })
  }
}

type ValueFields = { readonly index: number; readonly value: bigint; readonly limit: bigint }
export class OutputValueTooLarge extends Data.TaggedError("OutputValueTooLarge")<ValueFields & Message> {
  constructor(f: ValueFields) {
    super({ ...f, message: `output ${f.index} pays ${f.value} sats, more than a 64-bit amount` })
  }
}

type FeeRateLowFields = { readonly feeRate: bigint; readonly minimum: bigint }
export class FeeRateTooLow extends Data.TaggedError("FeeRateTooLow")<FeeRateLowFields & Message> {
  constructor(f: FeeRateLowFields) {
    super({ ...f, message: `fee rate ${f.feeRate} sat/vB is below the minimum relay rate ${f.minimum} sat/vB` })
  }
}

type FeeRateHighFields = { readonly feeRate: bigint; readonly maximum: bigint }
export class FeeRateTooHigh extends Data.TaggedError("FeeRateTooHigh")<FeeRateHighFields & Message> {
  constructor(f: FeeRateHighFields) {
    super({ ...f, message: `fee rate ${f.feeRate} sat/vB is above the cap ${f.maximum} sat/vB` })
  }
}

type FundsFields = { readonly inputsTotal: bigint; readonly outputsTotal: bigint; readonly fee: bigint; readonly feeRate: bigint }
/** `fee` is the smaller fee, without a change output. */
export class InsufficientFunds extends Data.TaggedError("InsufficientFunds")<FundsFields & Message> {
  constructor(f: FundsFields) {
    super({
      ...f,
      message: `insufficient funds: inputs total ${f.inputsTotal} sats; outputs need ${f.outputsTotal} plus a fee of ${f.fee} at ${f.feeRate} sat/vB`
    })
  }
}

type SizeFields = { readonly vsize: number; readonly limit: number }
export class TooLarge extends Data.TaggedError("TooLarge")<SizeFields & Message> {
  constructor(f: SizeFields) {
    super({ ...f, message: `transaction would be ${f.vsize} vbytes; the standard limit is ${f.limit}` })
  }
}

/** bitcoinjs refused to sign or finalize; `detail` is its message. */
export class SigningFailed extends Data.TaggedError("SigningFailed")<{ readonly detail: string } & Message> {
  constructor(f: { readonly detail: string }) {
    super({ ...f, message: `signing failed: ${f.detail}` })
  }
}

type FeeInvariantFields = { readonly fee: bigint; readonly vsize: number; readonly feeRate: bigint }
/**
 * A broken invariant, not a user error: the signed transaction pays less than vsize × rate,
 * which the size estimate rules out. Kept as data (the builder never throws) but a caller
 * should treat it as a bug to report, never as a request to retry with other inputs.
 */
export class FeeInvariantBroken extends Data.TaggedError("FeeInvariantBroken")<FeeInvariantFields & Message> {
  constructor(f: FeeInvariantFields) {
    super({ ...f, message: `internal: fee ${f.fee} is below ${f.vsize} vB × ${f.feeRate} sat/vB` })
  }
}

export type BuildError =
  | InvalidSignerKey
  | UncompressedSignerKey
  | InvalidAddress
  | OpReturnTooLarge
  | InvalidOmniPayload
  | OmniChangeNotToSender
  | NoInputs
  | TooManyInputs
  | DuplicateInput
  | InvalidInput
  | NoOutputs
  | TooManyOutputs
  | TooManyOpReturns
  | DustOutput
  | OutputValueTooLarge
  | FeeRateTooLow
  | FeeRateTooHigh
  | InsufficientFunds
  | TooLarge
  | SigningFailed
  | FeeInvariantBroken
