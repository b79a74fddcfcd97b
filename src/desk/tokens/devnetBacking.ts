// What backs each desk token when a devnet pays it (DevnetBacking, platform): a dollar token the
// same amount of USDC on ethereum, a wrapped token its base coin (BTC, LTC, ETH on ethereum),
// each paid into the desk's cold vault on that chain, which the reserves scan reads. The token is
// then granted by the desk issuer, as a mint or a wrap grants it: `devnet pay --asset SUSD` gives
// a newcomer tokens to cash out, redeem or unwrap, and the published collateralization stays
// what it was.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type Backing, DevnetBacking } from "../../platform/devnet/DevnetBacking.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import { baseChainOf, type DeskToken } from "./registry.ts"
import { findToken } from "./tokenStore.ts"
import { deskIssuerWallet } from "../../platform/ledger/SystemWallet.ts"

/** Chain and asset of a token's backing, pure. */
export const backingAsset = (token: Pick<DeskToken, "kind" | "baseAsset">): Pick<Backing, "chain" | "asset"> => {
  if (token.kind === "dollar") return { chain: "ethereum", asset: "USDC" }
  return { chain: baseChainOf(token.baseAsset) ?? "ethereum", asset: undefined }
}

export const layer = Layer.effect(DevnetBacking, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const wallets = yield* DeskWallets
  return DevnetBacking.of({
    backingOf: (code) =>
      findToken(code).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.map((token) => {
          if (token === undefined) return undefined
          const { chain, asset } = backingAsset(token)
          return { issuer: deskIssuerWallet, chain, asset, address: wallets.wallet(chain, "cold").address }
        }),
        Effect.orDie
      )
  })
}))
