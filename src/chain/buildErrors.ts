// Why the transaction builder (`txBuilder.ts`) refused a request: one tagged variant per failure
// it detects, with the numbers a caller branches on and the message a person reads. Pure data.
//
// Plain readonly objects with a `_tag`, not Data.TaggedError: no Error or stack capture on the
// signing path, structural equality in tests, a `switch (e._tag)` or `Match.tag` to branch, and an
// Effect caller lifts one with `Effect.fail(e)`.

/** Which address of the request was refused. */
export type AddressRole = "address" | "output" | "change" | "reference"

interface Variant<Tag extends string> {
  readonly _tag: Tag
  /** For a person; tests and docs quote it, so its wording is stable. */
  readonly message: string
}

/** The private key or WIF does not parse (bad length, out of range, wrong WIF version byte). */
export interface InvalidSignerKey extends Variant<"InvalidSignerKey"> {
  readonly detail: string
}
/** A WIF for an uncompressed key: its P2PKH script is not the one of the 33-byte key we sign with. */
export interface UncompressedSignerKey extends Variant<"UncompressedSignerKey"> {}
export interface InvalidAddress extends Variant<"InvalidAddress"> {
  readonly role: AddressRole
  /** Position in `outputs`, for role "output". */
  readonly index?: number
  readonly address: string
  /** validateLedgerAddress's explanation. */
  readonly reason: string
}
export interface OpReturnTooLarge extends Variant<"OpReturnTooLarge"> {
  /** Data bytes (for Omni: the "omni" marker plus the payload). */
  readonly size: number
  readonly limit: number
}
/** The Omni payload does not encode (omni/codec.ts); `message` is the codec's. */
export interface InvalidOmniPayload extends Variant<"InvalidOmniPayload"> {}
/** No reference output and change not paid to the sender: Omni would read the change as receiver. */
export interface OmniChangeNotToSender extends Variant<"OmniChangeNotToSender"> {
  /** The signer's address ("" if it cannot be encoded under the params). */
  readonly sender: string
  readonly changeAddress: string
}
export interface NoInputs extends Variant<"NoInputs"> {}
export interface TooManyInputs extends Variant<"TooManyInputs"> {
  readonly count: number
  readonly limit: number
}
export interface DuplicateInput extends Variant<"DuplicateInput"> {
  /** The second occurrence. */
  readonly index: number
  readonly txid: string
  readonly vout: number
}
/** What is wrong with one input; `reason` tells which check failed. */
export type InputProblem =
  | { readonly reason: "value"; readonly value: bigint }
  | { readonly reason: "notSignersScript" }
  | { readonly reason: "prevTxUnparseable"; readonly detail: string }
  | { readonly reason: "prevTxidMismatch"; readonly prevTxid: string }
  | { readonly reason: "prevOutputMissing" }
  | { readonly reason: "prevOutputMismatch" }
type InputAt = { readonly index: number; readonly txid: string; readonly vout: number }
export type InvalidInput = Variant<"InvalidInput"> & InputAt & InputProblem
export interface NoOutputs extends Variant<"NoOutputs"> {}
export interface TooManyOutputs extends Variant<"TooManyOutputs"> {
  readonly count: number
  readonly limit: number
}
export interface TooManyOpReturns extends Variant<"TooManyOpReturns"> {
  readonly count: number
  readonly limit: number
}
export interface DustOutput extends Variant<"DustOutput"> {
  readonly index: number
  readonly address: string
  readonly value: bigint
  readonly dust: bigint
}
export interface OutputValueTooLarge extends Variant<"OutputValueTooLarge"> {
  readonly index: number
  readonly value: bigint
  readonly limit: bigint
}
export interface FeeRateTooLow extends Variant<"FeeRateTooLow"> {
  readonly feeRate: bigint
  readonly minimum: bigint
}
export interface FeeRateTooHigh extends Variant<"FeeRateTooHigh"> {
  readonly feeRate: bigint
  readonly maximum: bigint
}
/** `fee` is the smaller fee, without a change output. */
export interface InsufficientFunds extends Variant<"InsufficientFunds"> {
  readonly inputsTotal: bigint
  readonly outputsTotal: bigint
  readonly fee: bigint
  readonly feeRate: bigint
}
export interface TooLarge extends Variant<"TooLarge"> {
  readonly vsize: number
  readonly limit: number
}
/** bitcoinjs refused to sign or finalize; `detail` is its message. */
export interface SigningFailed extends Variant<"SigningFailed"> {
  readonly detail: string
}
/**
 * A broken invariant, not a user error: the signed transaction pays less than vsize × rate,
 * which the size estimate rules out. Kept as data (domain code does not throw) but a caller
 * should treat it as a bug to report, never as a request to retry with other inputs.
 */
export interface FeeInvariantBroken extends Variant<"FeeInvariantBroken"> {
  readonly fee: bigint
  readonly vsize: number
  readonly feeRate: bigint
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

type Fields<E> = Omit<E, "_tag" | "message">

const addressLabel = (role: AddressRole, index: number | undefined): string =>
  role === "address" ? "address" : role === "output" ? `output ${index} address` : `${role} address`

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

/** Constructors, one per variant: each writes the variant's message from its fields. */
export const BuildError = {
  InvalidSignerKey: (f: Fields<InvalidSignerKey>): InvalidSignerKey => ({ _tag: "InvalidSignerKey", ...f, message: `invalid signer key: ${f.detail}` }),
  UncompressedSignerKey: (): UncompressedSignerKey => ({
    _tag: "UncompressedSignerKey",
    message: "signer key must be compressed (P2PKH of the 33-byte public key)"
  }),
  InvalidAddress: (f: Fields<InvalidAddress>): InvalidAddress => ({
    _tag: "InvalidAddress",
    ...f,
    message: `${addressLabel(f.role, f.index)} ${JSON.stringify(f.address)}: ${f.reason}`
  }),
  OpReturnTooLarge: (f: Fields<OpReturnTooLarge>): OpReturnTooLarge => ({
    _tag: "OpReturnTooLarge",
    ...f,
    message: `OP_RETURN data is ${f.size} bytes; the limit is ${f.limit}`
  }),
  InvalidOmniPayload: (message: string): InvalidOmniPayload => ({ _tag: "InvalidOmniPayload", message }),
  OmniChangeNotToSender: (f: Fields<OmniChangeNotToSender>): OmniChangeNotToSender => ({
    _tag: "OmniChangeNotToSender",
    ...f,
    message:
      `an Omni transaction without a reference must send its change to the sender ${f.sender}; ` +
      "otherwise Omni reads the change output as the receiver"
  }),
  NoInputs: (): NoInputs => ({ _tag: "NoInputs", message: "no inputs: a transaction spends at least one output" }),
  TooManyInputs: (f: Fields<TooManyInputs>): TooManyInputs => ({
    _tag: "TooManyInputs",
    ...f,
    message: `${f.count} inputs; at most ${f.limit} per transaction`
  }),
  DuplicateInput: (f: Fields<DuplicateInput>): DuplicateInput => ({
    _tag: "DuplicateInput",
    ...f,
    message: `input ${f.index} spends ${f.txid}:${f.vout} a second time`
  }),
  InvalidInput: (at: InputAt, problem: InputProblem): InvalidInput => ({
    _tag: "InvalidInput",
    index: at.index,
    txid: at.txid,
    vout: at.vout,
    ...problem,
    message: inputMessage(at, problem)
  }),
  NoOutputs: (): NoOutputs => ({ _tag: "NoOutputs", message: "no outputs: a send pays at least one address" }),
  TooManyOutputs: (f: Fields<TooManyOutputs>): TooManyOutputs => ({
    _tag: "TooManyOutputs",
    ...f,
    message: `${f.count} outputs; at most ${f.limit} per transaction`
  }),
  TooManyOpReturns: (f: Fields<TooManyOpReturns>): TooManyOpReturns => ({
    _tag: "TooManyOpReturns",
    ...f,
    message: "a transaction carries at most one OP_RETURN output"
  }),
  DustOutput: (f: Fields<DustOutput>): DustOutput => ({
    _tag: "DustOutput",
    ...f,
    message: `output ${f.index} pays ${f.value} sats to ${f.address}; below the dust threshold of ${f.dust}`
  }),
  OutputValueTooLarge: (f: Fields<OutputValueTooLarge>): OutputValueTooLarge => ({
    _tag: "OutputValueTooLarge",
    ...f,
    message: `output ${f.index} pays ${f.value} sats, more than a 64-bit amount`
  }),
  FeeRateTooLow: (f: Fields<FeeRateTooLow>): FeeRateTooLow => ({
    _tag: "FeeRateTooLow",
    ...f,
    message: `fee rate ${f.feeRate} sat/vB is below the minimum relay rate ${f.minimum} sat/vB`
  }),
  FeeRateTooHigh: (f: Fields<FeeRateTooHigh>): FeeRateTooHigh => ({
    _tag: "FeeRateTooHigh",
    ...f,
    message: `fee rate ${f.feeRate} sat/vB is above the cap ${f.maximum} sat/vB`
  }),
  InsufficientFunds: (f: Fields<InsufficientFunds>): InsufficientFunds => ({
    _tag: "InsufficientFunds",
    ...f,
    message: `insufficient funds: inputs total ${f.inputsTotal} sats; outputs need ${f.outputsTotal} plus a fee of ${f.fee} at ${f.feeRate} sat/vB`
  }),
  TooLarge: (f: Fields<TooLarge>): TooLarge => ({
    _tag: "TooLarge",
    ...f,
    message: `transaction would be ${f.vsize} vbytes; the standard limit is ${f.limit}`
  }),
  SigningFailed: (f: Fields<SigningFailed>): SigningFailed => ({ _tag: "SigningFailed", ...f, message: `signing failed: ${f.detail}` }),
  FeeInvariantBroken: (f: Fields<FeeInvariantBroken>): FeeInvariantBroken => ({
    _tag: "FeeInvariantBroken",
    ...f,
    message: `internal: fee ${f.fee} is below ${f.vsize} vB × ${f.feeRate} sat/vB`
  })
} as const
