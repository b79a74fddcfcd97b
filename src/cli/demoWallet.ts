// The demo wallets of `demo trader` (table demo_wallets): a ledger devnet wallet the system made
// for a user and keeps sealed. The devnet lives inside the running node, so what the CLI does
// with a demo wallet is a persisted message to the Devnet entity (FundDemo).
import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { Devnet, FundDemo, type FundedDemo } from "../../schemas/devnet.ts"
import { AppConfig } from "../platform/Config.ts"
import { realNodeSetting } from "../platform/devnet/realNode.ts"
import { isAsset } from "../exchange/markets/marketStore.ts"

/** How long the CLI waits for the node to fund an address. */
export const fundTimeout = Duration.seconds(60)

/** The words of any error the CLI gets back (tagged errors carry them in `message`). */
export const reasonOf = (e: unknown) => (typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e))

/** Asks the node to fund `to` from `userId`'s demo wallet up to `upTo`; fails with one line. */
export const fundFromDemo = (userId: number, asset: string, to: string, upTo: string) =>
  Effect.flatMap(Devnet.client, (client) =>
    client("ledger").FundDemo(new FundDemo({ requestId: randomUUID(), userId, to, asset, upTo })).pipe(
      Effect.timeoutFail({
        duration: fundTimeout,
        onTimeout: () => new Error("the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?")
      }),
      Effect.mapError((e) => new Error(`funding the delegated address ${to} with ${asset} from the demo wallet failed: ${reasonOf(e)}`))
    ))

/**
 * After a grant: when the user has a demo wallet, the ledger is the devnet and the asset is a
 * market asset, funds the delegated address from the demo wallet up to the cap. None otherwise.
 */
export const fundDelegatedFromDemo = (userId: number, asset: string, delegatedAddress: string, cap: string) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (realNodeSetting(config, "ledger") !== undefined) return Option.none<FundedDemo>()
    const sql = yield* SqlClient.SqlClient
    const [demo] = yield* sql`SELECT 1 FROM demo_wallets WHERE user_id = ${userId}`
    if (demo === undefined || !(yield* isAsset(asset))) return Option.none<FundedDemo>()
    return Option.some(yield* fundFromDemo(userId, asset, delegatedAddress, cap))
  })
