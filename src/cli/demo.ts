// demo trader [--fund ASSET:AMT,…] [--cap ASSET:AMT,…] [--expires-in 2h] [--json]
//   → {apiKey, secretKey, userId, address, authorizations:[{grantId, asset, cap, expiresAt, delegatedAddress, funded}]}
// Ledger devnet only. A new user whose wallet the system makes (its key sealed in demo_wallets)
// and registers as the user's address; the wallet is paid every market asset (the defaults of
// DemoWorld.ts, or --fund) and some native coin from the faucet; a read+trade API key; for each
// asset an authorization (cap: the funded amount, or --cap; expiry 2h, or --expires-in), whose
// delegated address the demo wallet then funds up to the cap, with a block mined, so the trader
// can trade at once. Every devnet step is a persisted message to the node's Devnet entity.
import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either } from "effect"
import { Devnet, Mine, Pay } from "../../schemas/devnet.ts"
import { parseAmount } from "../chain/units.ts"
import { ApiKeys } from "../exchange/auth/ApiKeys.ts"
import { newGrantId } from "../exchange/authorization/AuthorizationEntity.ts"
import { parseCap, parseDuration } from "../exchange/authorization/policy.ts"
import { demoFunding, demoFundingOther, demoNativeCoin } from "../exchange/markets/DemoWorld.ts"
import { ASSET_DECIMALS } from "../exchange/markets/marketSpec.ts"
import { listMarkets } from "../exchange/markets/marketStore.ts"
import { appConfig } from "../platform/Config.ts"
import { realNodeSetting } from "../platform/devnet/realNode.ts"
import { ledgerKey } from "../platform/ledger/SystemWallet.ts"
import { SecretBox } from "../platform/SecretBox.ts"
import { parseOrUsage } from "./args.ts"
import { grantAndAwait } from "./authorizations.ts"
import { fundFromDemo, reasonOf } from "./demoWallet.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = "usage: demo trader [--fund ASSET:AMT,…] [--cap ASSET:AMT,…] [--expires-in 2h] [--json]   (ledger devnet only)"

/** An authorization's lifetime unless --expires-in says otherwise. */
export const demoLifetime = "2h"
/** How long the CLI waits for each devnet step. */
export const stepTimeout = Duration.seconds(60)
/** Assets one --fund or --cap list may name. */
const listEntriesMax = 50

/** "SHRD:10,DUSD:500" → code → normalised amount; a string is the refusal. */
export const parseAssetAmounts = (flag: string, text: string | undefined): Map<string, string> | string => {
  const out = new Map<string, string>()
  if (text === undefined) return out
  const entries = text.split(",").map((e) => e.trim()).filter((e) => e !== "")
  if (entries.length > listEntriesMax) return `--${flag}: at most ${listEntriesMax} assets`
  for (const entry of entries) {
    const m = /^([A-Za-z0-9]{2,12}):(.+)$/.exec(entry)
    if (m === null) return `--${flag} ${entry}: expected ASSET:AMOUNT, e.g. SHRD:100`
    const amount = parseCap(m[2]!)
    if (Either.isLeft(amount)) return `--${flag} ${entry}: ${amount.left.message}`
    if (Either.isLeft(parseAmount(amount.right, ASSET_DECIMALS))) return `--${flag} ${entry}: at most ${ASSET_DECIMALS} decimal places`
    const code = m[1]!.toUpperCase()
    if (out.has(code)) return `--${flag}: ${code} given twice`
    out.set(code, amount.right)
  }
  return out
}

const ask = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.timeoutFail({ duration: stepTimeout, onTimeout: () => new Error(`${what}: the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?`) }),
    Effect.mapError((e) => (e instanceof Error ? e : new Error(`${what}: ${reasonOf(e)}`)))
  )

const trader = (fund: Map<string, string>, caps: Map<string, string>, lifetimeMs: number) =>
  Effect.gen(function*() {
    const markets = yield* listMarkets
    const assets = [...new Set(markets.flatMap((m) => [m.base, m.quote]))]
    if (assets.length === 0) return yield* new UsageError("no market is listed yet: start the node on the ledger devnet first (it lists the demo markets), or markets add")
    for (const [flag, given] of [["fund", fund], ["cap", caps]] as const) {
      const stray = [...given.keys()].filter((code) => !assets.includes(code))
      if (stray.length > 0) return yield* new UsageError(`--${flag}: ${stray.join(", ")} ${stray.length === 1 ? "is not a market asset" : "are not market assets"} (${assets.join(", ")})`)
    }
    const funding = assets.map((asset) => {
      const amount = fund.get(asset) ?? demoFunding[asset] ?? demoFundingOther
      return { asset, amount, cap: caps.get(asset) ?? amount }
    })

    // The user, its key and its wallet in one transaction: no user without its demo wallet.
    const sql = yield* SqlClient.SqlClient
    const wallet = ledgerKey(yield* SecretBox)
    const keys = yield* ApiKeys
    const user = yield* Effect.gen(function*() {
      const created = yield* keys.create({ scopes: ["read", "trade"], addresses: [wallet.address], label: "demo trader" })
      yield* sql`INSERT INTO demo_wallets (user_id, address, key_enc) VALUES (${created.userId}, ${wallet.address}, ${wallet.sealed})`
      return created
    }).pipe(sql.withTransaction)

    // The faucet pays the wallet its assets and coin for its own fees; one block confirms them.
    const devnet = (yield* Devnet.client)("ledger")
    const pay = (amount: string, asset?: string) =>
      ask(`paying the demo wallet ${amount} ${asset ?? "TOK"}`, devnet.Pay(new Pay({ requestId: randomUUID(), to: wallet.address, amount, ...(asset === undefined ? {} : { asset }) })))
    yield* Effect.all([pay(demoNativeCoin), ...funding.map((f) => pay(f.amount, f.asset))], { concurrency: "unbounded" })
    yield* ask("mining the demo wallet's payments", devnet.Mine(new Mine({ requestId: randomUUID(), blocks: 1 })))

    // An authorization per asset, then its delegated address funded from the wallet up to the cap.
    const authorizations = yield* Effect.all(funding.map((f) =>
      Effect.gen(function*() {
        const grantId = newGrantId()
        const outcome = yield* grantAndAwait(user.userId, f.asset, f.cap, lifetimeMs, grantId)
        if (outcome._tag === "Refused") return yield* Effect.fail(new Error(`authorization ${f.asset} refused: ${outcome.message}`))
        if (outcome._tag === "Pending") {
          return yield* Effect.fail(new Error(`authorization ${f.asset} not committed within the wait; it stays queued: authorizations show ${grantId}`))
        }
        const g = outcome.grant
        if (g.delegatedAddress === null || g.cap === null || g.expiresAt === null) return yield* Effect.fail(new Error(`authorization ${f.asset} (${grantId}) ended before it was funded`))
        const funded = yield* fundFromDemo(user.userId, f.asset, g.delegatedAddress, g.cap)
        return { grantId, asset: f.asset, cap: g.cap, expiresAt: g.expiresAt, delegatedAddress: g.delegatedAddress, funded: funded.balance }
      })), { concurrency: "unbounded" })
    return { apiKey: user.apiKey, secretKey: user.secretKey, userId: user.userId, address: wallet.address, authorizations }
  })

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [verb, ...rest] = args
  const parsed = parseOrUsage(rest, {
    fund: { type: "string" },
    cap: { type: "string" },
    "expires-in": { type: "string" },
    json: { type: "boolean", default: false }
  }, usage)
  if (parsed === undefined) return 2
  if (verb !== "trader") {
    console.error(usage)
    return 2
  }
  const fund = parseAssetAmounts("fund", parsed.values.fund)
  const caps = parseAssetAmounts("cap", parsed.values.cap)
  const lifetime = parseDuration(parsed.values["expires-in"] ?? demoLifetime)
  if (typeof fund === "string" || typeof caps === "string" || Either.isLeft(lifetime)) {
    console.error(typeof fund === "string" ? fund : typeof caps === "string" ? caps : Either.isLeft(lifetime) ? lifetime.left.message : usage)
    return 2
  }
  const config = await Effect.runPromise(appConfig).catch(() => undefined)
  const setting = config === undefined ? undefined : realNodeSetting(config, "ledger")
  if (setting !== undefined) {
    console.error(`demo trader refused: the ledger is a real node (${setting} is set); it works on the ledger devnet only`)
    return 1
  }
  const json = parsed.values.json === true
  return runCommand(trader(fund, caps, lifetime.right), (t) =>
    console.log(json ? JSON.stringify(t) : [
      `apiKey:    ${t.apiKey}`,
      `secretKey: ${t.secretKey}   (shown once)`,
      `userId:    ${t.userId}`,
      `address:   ${t.address}`,
      ...t.authorizations.map((a) => `${a.asset}: cap ${a.cap} until ${new Date(a.expiresAt).toISOString()}, delegated address ${a.delegatedAddress} holds ${a.funded}`)
    ].join("\n")))
}
