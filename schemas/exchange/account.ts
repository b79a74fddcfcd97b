// The signed account endpoint (spec: Account records): addresses and live trading authorizations.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { SignedParams } from "./params.ts"
import { prefix } from "./public.ts"
import { SignedRead, VerifiedParams } from "./security.ts"

export const Authorization = Schema.Struct({
  asset: Schema.String,
  cap: Schema.String.annotations({ description: "Decimal string" }),
  used: Schema.String.annotations({ description: "Decimal string: spent through the grant by settled fills" }),
  reserved: Schema.String.annotations({ description: "Decimal string: held by open orders" }),
  remaining: Schema.String.annotations({ description: "Decimal string: cap − used − reserved" }),
  expiresAt: Schema.Number.annotations({ description: "Unix milliseconds" }),
  delegatedAddress: Schema.String
})

export const Account = Schema.Struct({
  uid: Schema.Number,
  accountType: Schema.Literal("SPOT"),
  custody: Schema.Literal("non-custodial"),
  canTrade: Schema.Boolean,
  canWithdraw: Schema.Boolean,
  canDeposit: Schema.Boolean,
  updateTime: Schema.Number,
  permissions: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  addresses: Schema.Array(Schema.Struct({ address: Schema.String, type: Schema.Literal("p2pkh", "p2sh") })),
  authorizations: Schema.Array(Authorization),
  /**
   * Non-custodial: nothing is deposited. Each authorized asset: `free` is what new orders can still
   * use (funded at the delegated address, within the cap, not reserved), `locked` what open orders hold.
   */
  balances: Schema.Array(Schema.Struct({ asset: Schema.String, free: Schema.String, locked: Schema.String }))
})
export type Account = typeof Account.Type

export const AccountGroup = HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("account", `${prefix}/account`).setUrlParams(SignedParams).addSuccess(Account)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Addresses and live trading authorizations (SIGNED, weight 10)"))
  .middleware(VerifiedParams)
  .middleware(SignedRead)
  .annotate(OpenApi.Title, "Account")
