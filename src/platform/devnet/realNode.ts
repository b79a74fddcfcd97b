// Whether a chain is a real node in this process's config, and the refusal of a devnet-only
// command there. Light on purpose: the CLI checks it before loading any chain code.
import { Option } from "effect"
import { DevnetRefused, type DevnetChainName } from "../../../schemas/devnet.ts"
import type { AppConfigShape } from "../Config.ts"

/** The setting that makes a chain a real node, or undefined for a devnet. */
export const realNodeSetting = (config: AppConfigShape, chain: DevnetChainName): string | undefined =>
  chain === "ledger"
    ? (Option.isSome(config.ledgerRpcUrl) ? "SHARDLINE_LEDGER_RPC_URL" : undefined)
    : chain === "btc"
    ? (Option.isSome(config.btcRpcUrl) ? "SHARDLINE_BTC_RPC_URL" : undefined)
    : chain === "ltc"
    ? (Option.isSome(config.ltcRpcUrl) ? "SHARDLINE_LTC_RPC_URL" : undefined)
    : (Option.isSome(config.evmRpcUrls) ? "SHARDLINE_EVM_RPC_URLS" : undefined)

/** The one-line refusal of a devnet-only command on a real node. */
export const realNodeRefusal = (command: string, chain: DevnetChainName, setting: string) =>
  new DevnetRefused({ message: `devnet ${command} refused: ${chain} is a real node (${setting} is set); it works on devnets only` })
