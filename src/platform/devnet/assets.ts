// What `--asset` names on each chain (desk tokens: a registered code, paid backed: DevnetChains.ts).
//   ledger: absent or TOK = the native coin (8 decimals); DUSD = the devnet dollar (Omni
//           property 3, issued at devnet start); a market asset code registered in
//           `exchange_assets` (SHRD, GOLD, …) = its Omni property; a number = that Omni property
//           id (its decimals, 8 or 0, from our indexer).
//   EVM:    USDC, USDT, PYUSD, DAI = the devnet's tokens (fixed addresses, devnetTokens.ts); a
//           0x contract address = that ERC-20 (the only form on a real node for now). Decimals
//           always come from the contract's decimals(). The native coin (ETH, BNB): `pay` (from the hot wallet) and `balance`.
// Codes are case-insensitive.
import { evmChains, type EvmChain } from "../../chain/evm/chains.ts"
import { devnetTokenAddress, devnetTokenSymbols, isDevnetTokenSymbol } from "../../chain/evm/devnetTokens.ts"
import { devnetDollar } from "../../chain/ledger/devnetFaucet.ts"
import { PROPERTY_ID_MAX } from "../../chain/omni/codec.ts"
import { Data, Either } from "effect"

/** An --asset code no chain here knows. */
export class AssetUnknown extends Data.TaggedError("AssetUnknown")<{ readonly message: string }> {}
import type { Address } from "viem"

/** The ledger's native coin: its code and decimals (satoshis per coin = 10^8). */
export const ledgerNative = { code: "TOK", decimals: 8 } as const

export type LedgerAsset = { readonly kind: "native" } | { readonly kind: "omni"; readonly property: number }

export const ledgerAssetCodes = [ledgerNative.code, devnetDollar.code] as const

/**
 * `registered`: the market assets of `exchange_assets` (code → Omni property id), read by the
 * caller; they are consulted after TOK and DUSD.
 */
export const resolveLedgerAsset = (
  asset: string | undefined,
  registered: ReadonlyMap<string, number> = new Map()
): Either.Either<LedgerAsset, AssetUnknown> => {
  const code = asset?.trim().toUpperCase()
  if (code === undefined || code === ledgerNative.code) return Either.right({ kind: "native" })
  if (code === devnetDollar.code) return Either.right({ kind: "omni", property: devnetDollar.propertyId })
  const listed = registered.get(code)
  if (listed !== undefined) return Either.right({ kind: "omni", property: listed })
  if (/^[0-9]{1,10}$/.test(code)) {
    const property = Number(code)
    return property >= 1 && property <= PROPERTY_ID_MAX
      ? Either.right({ kind: "omni", property })
      : Either.left(new AssetUnknown({ message: `Omni property id ${code} is out of range 1..${PROPERTY_ID_MAX}` }))
  }
  const codes = [...new Set([...ledgerAssetCodes, ...registered.keys()])]
  return Either.left(new AssetUnknown({ message: `unknown asset "${asset}" on the ledger: use ${codes.join(", ")} or an Omni property id` }))
}

/** Whether `code` can only name a registered market asset (not TOK, DUSD or a property id). */
export const needsRegistry = (asset: string | undefined): boolean => {
  const code = asset?.trim().toUpperCase()
  return code !== undefined && code !== ledgerNative.code && code !== devnetDollar.code && !/^[0-9]{1,10}$/.test(code)
}

export type EvmAsset = { readonly kind: "native" } | { readonly kind: "token"; readonly address: Address }

/** `devnetHotWallet` is set on a devnet (its tokens' addresses follow from it), absent on a real node. */
export const resolveEvmAsset = (chain: EvmChain, asset: string | undefined, devnetHotWallet: Address | undefined): Either.Either<EvmAsset, AssetUnknown> => {
  const trimmed = asset?.trim()
  if (trimmed === undefined || trimmed.toUpperCase() === evmChains[chain].nativeCurrency.symbol) return Either.right({ kind: "native" })
  if (/^0x[0-9a-fA-F]{40}$/.test(trimmed)) return Either.right({ kind: "token", address: trimmed as Address })
  const code = trimmed.toUpperCase()
  if (isDevnetTokenSymbol(code)) {
    return devnetHotWallet === undefined
      ? Either.left(new AssetUnknown({ message: `${code} on a real ${chain} node: give the token's contract address (0x…) as --asset` }))
      : Either.right({ kind: "token", address: devnetTokenAddress(devnetHotWallet, code) })
  }
  return Either.left(new AssetUnknown({ message: `unknown asset "${asset}" on ${chain}: use ${devnetTokenSymbols.join(", ")} or a token contract address (0x…)` }))
}
