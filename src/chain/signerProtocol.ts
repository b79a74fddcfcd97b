// The messages between signerPool.ts and a signing worker (signerWorker.ts): structured clones,
// so plain data (bigints and byte arrays survive; class instances such as a BuildError do not,
// hence its tag and message only).
import type { UtxoChainParams } from "./params.ts"
import type { BuiltTx, OmniRequest } from "./txBuilder.ts"

export interface SignerRequest {
  readonly id: number
  readonly params: UtxoChainParams
  /** The request without its signer: the key travels as bytes. */
  readonly req: Omit<OmniRequest, "signer">
  readonly privateKey: Uint8Array
}

/** Why the builder refused (txBuilder's BuildError, as tag and message). */
export interface WireBuildError {
  readonly _tag: string
  readonly message: string
}

export type SignerAnswer =
  | { readonly id: number; readonly built: BuiltTx }
  | { readonly id: number; readonly refused: WireBuildError }
  | { readonly id: number; readonly crashed: string }
