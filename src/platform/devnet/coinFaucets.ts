// The CoinFaucets port (platform/ledger/CoinFaucets.ts) over the devnets: a coin chain that is a
// devnet in this process's config pays from its faucet (DevnetChains.pay); a real node has none.
import { Effect, Layer } from "effect"
import { formatAmount } from "../../chain/units.ts"
import { DevnetRefused } from "../../../schemas/devnet.ts"
import { AppConfig } from "../Config.ts"
import { CoinFaucets } from "../ledger/CoinFaucets.ts"
import { DevnetChains } from "./DevnetChains.ts"
import { realNodeSetting } from "./realNode.ts"

export const layer: Layer.Layer<CoinFaucets, never, AppConfig | DevnetChains> = Layer.effect(CoinFaucets, Effect.gen(function*() {
  const config = yield* AppConfig
  const devnets = yield* DevnetChains
  return {
    faucet: (chain) =>
      realNodeSetting(config, chain) !== undefined ? undefined : (to, sats) =>
        Effect.flatMap(
          Effect.mapError(formatAmount(sats, 8), (e) => new DevnetRefused({ message: e.message })),
          (amount) => devnets.pay(chain, to, amount, undefined)
        )
  }
}))
