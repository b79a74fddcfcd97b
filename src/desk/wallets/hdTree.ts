// Keys and addresses of the desk's HD tree (paths.ts), pure: the ledger, BTC and LTC get P2PKH
// addresses in their own chain's format; the EVM chains the account of the same secp256k1 key.
import { Either } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { p2pkhAddressOfPubkey } from "../../chain/address.ts"
import { keyPairAt, type KeyError } from "../../chain/keys.ts"
import { coinChains, ledgerParams, type UtxoChainParams } from "../../chain/params.ts"
import { type DeskChain, isEvmChain } from "./paths.ts"

export interface DeskKey {
  readonly chain: DeskChain
  readonly path: string
  readonly address: string
  /** 32 bytes; never logged, never leaves the node. */
  readonly privateKey: Uint8Array
}

/** The UTXO chain rules behind a desk chain (undefined for the EVM chains). */
export const utxoParamsOf = (chain: DeskChain): UtxoChainParams | undefined =>
  chain === "ledger" ? ledgerParams : chain === "btc" || chain === "ltc" ? coinChains[chain].params : undefined

export const deriveDeskKey = (seed: Uint8Array, chain: DeskChain, path: string): Either.Either<DeskKey, KeyError> =>
  Either.flatMap(keyPairAt(seed, path), ({ privateKey, publicKey }): Either.Either<DeskKey, KeyError> => {
    if (isEvmChain(chain)) {
      return Either.right({ chain, path, privateKey, address: privateKeyToAccount(`0x${Buffer.from(privateKey).toString("hex")}`).address })
    }
    const address = p2pkhAddressOfPubkey(publicKey, utxoParamsOf(chain)!)
    // A derived compressed key always has a P2PKH address: anything else is a broken invariant.
    if (Either.isLeft(address)) throw new Error(`desk key ${path} without an address: ${address.left.message}`)
    return Either.right({ chain, path, privateKey, address: address.right })
  })
