// The address of a dollar ERC-20 on a ledger's chain: the configured one
// (SHARDLINE_EVM_TOKEN_CONTRACTS, tokenContracts.ts), else where the devnet deploys it from the
// hot wallet (devnetTokens.ts). Every desk read of a token contract goes through here.
import type { Address } from "viem"
import { devnetTokenAddress } from "./devnetTokens.ts"
import type { EvmLedger } from "./EvmLedger.ts"
import { configuredTokenContract, type TokenContract, type TokenSymbol } from "./tokenContracts.ts"

export const tokenContractAddress = (
  contracts: ReadonlyArray<TokenContract>,
  ledger: Pick<EvmLedger, "chain" | "hotWallet">,
  symbol: TokenSymbol
): Address => configuredTokenContract(contracts, ledger.chain, symbol) ?? devnetTokenAddress(ledger.hotWallet, symbol)
