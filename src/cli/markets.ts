// markets list [--json]                                                   → {markets:[…]}
// markets add --symbol S --base B --quote Q --tick T --lot L --min-notional N [--property ID] [--json]
//                                                                           → the market
// The registry is Postgres (marketStore.ts); every node's Market registry reloads on its
// notification and activates the new market. An asset the registry does not know yet is, on
// the ledger devnet, issued as a new Omni property by the running node (the Devnet entity's
// IssueAsset); on a real ledger its existing property id must be given with --property (ID when
// one asset is new, CODE:ID for each when both are).
import { randomUUID } from "node:crypto"
import { Duration, Effect, Either } from "effect"
import { Devnet, IssueAsset } from "../../schemas/devnet.ts"
import { PROPERTY_ID_MAX } from "../chain/omni/codec.ts"
import { checkNewMarket, ASSET_DECIMALS, type Market, type NewMarket } from "../exchange/markets/marketSpec.ts"
import { addAsset, addMarket, listAssets, listMarkets } from "../exchange/markets/marketStore.ts"
import { AppConfig } from "../platform/Config.ts"
import { realNodeSetting } from "../platform/devnet/realNode.ts"
import { parseOrUsage } from "./args.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = [
  "usage: markets list [--json]",
  "       markets add --symbol S --base B --quote Q --tick T --lot L --min-notional N [--property ID | --property CODE:ID ...] [--json]",
  "       (--property: the Omni property id of an asset not registered yet, required on a real ledger; ID alone when only one is new)"
].join("\n")

/** How long the CLI waits for the node to issue a new asset on the devnet. */
export const issueTimeout = Duration.seconds(60)

/** A market as the CLI shows it (INTERFACES.md). */
export const marketView = (m: Market) => ({
  symbol: m.symbol,
  base: m.base,
  quote: m.quote,
  tickSize: m.filters.tickSize,
  stepSize: m.filters.stepSize,
  minNotional: m.filters.minNotional,
  status: m.status
})

const human = (m: Market) =>
  `${m.symbol}  ${m.base} (property ${m.baseProperty}) / ${m.quote} (property ${m.quoteProperty})  ` +
  `tick ${m.filters.tickSize}  lot ${m.filters.stepSize}  min notional ${m.filters.minNotional}  ${m.status}`

const list = (json: boolean) =>
  runCommand(listMarkets, (markets) =>
    console.log(json ? JSON.stringify({ markets: markets.map(marketView) }) : markets.length === 0 ? "no markets" : markets.map(human).join("\n")))

/** `--property` values: a bare id (for the one new asset) or CODE:ID pairs; a string is the refusal. */
export const parseProperties = (values: ReadonlyArray<string>): { readonly bare?: number; readonly byCode: ReadonlyMap<string, number> } | string => {
  const byCode = new Map<string, number>()
  let bare: number | undefined
  for (const value of values) {
    const m = /^(?:([A-Za-z0-9]{2,12}):)?([0-9]{1,10})$/.exec(value.trim())
    const id = m === null ? NaN : Number(m[2])
    if (m === null || id < 1 || id > PROPERTY_ID_MAX) return `--property ${value}: an Omni property id in 1..${PROPERTY_ID_MAX}, or CODE:ID`
    if (m[1] === undefined) {
      if (bare !== undefined || values.length > 1) return "--property: a bare id only when it is the one --property given; else CODE:ID for each"
      bare = id
    } else byCode.set(m[1].toUpperCase(), id)
  }
  return bare === undefined ? { byCode } : { bare, byCode }
}

/** Registers the assets of `spec` the registry does not know: --property, or issued on the devnet. */
const registerAssets = (spec: { readonly base: string; readonly quote: string }, properties: Exclude<ReturnType<typeof parseProperties>, string>) =>
  Effect.gen(function*() {
    const known = new Set((yield* listAssets).map((a) => a.code))
    const unknown = [spec.base, spec.quote].filter((code) => !known.has(code))
    const stray = [...properties.byCode.keys()].filter((code) => !unknown.includes(code))
    if (stray.length > 0) return yield* new UsageError(`--property ${stray.join(", ")}: not a new asset of this market (${unknown.length === 0 ? "both are registered" : `new: ${unknown.join(", ")}`})`)
    if (properties.bare !== undefined && unknown.length !== 1) {
      return yield* new UsageError(unknown.length === 0
        ? `--property ${properties.bare}: ${spec.base} and ${spec.quote} are both registered already`
        : `--property ${properties.bare}: ${unknown.join(" and ")} are both new; give --property CODE:ID for each`)
    }
    const given = (code: string) => properties.byCode.get(code) ?? properties.bare
    for (const code of unknown) {
      const id = given(code)
      if (id !== undefined) yield* addAsset({ code, propertyId: id, decimals: ASSET_DECIMALS })
    }
    const toIssue = unknown.filter((code) => given(code) === undefined)
    if (toIssue.length === 0) return
    const setting = realNodeSetting(yield* AppConfig, "ledger")
    if (setting !== undefined) {
      return yield* new UsageError(`asset ${toIssue.join(", ")} is not registered; the ledger is a real node (${setting} is set), so give its Omni property id with --property ${toIssue.length === 1 ? "ID" : "CODE:ID"}`)
    }
    const devnet = (yield* Devnet.client)("ledger")
    for (const code of toIssue) {
      const issued = yield* devnet.IssueAsset(new IssueAsset({ requestId: randomUUID(), code })).pipe(
        Effect.timeoutFail({ duration: issueTimeout, onTimeout: () => new Error("the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?") })
      )
      yield* addAsset({ code, propertyId: issued.propertyId, decimals: ASSET_DECIMALS })
    }
  })

const add = async (values: Record<string, string | boolean | Array<string> | undefined>): Promise<number> => {
  const text = (name: string) => {
    const v = values[name]
    return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined
  }
  const missing = ["base", "quote", "tick", "lot", "min-notional"].filter((n) => text(n) === undefined)
  if (missing.length > 0) {
    console.error(`${missing.map((n) => `--${n}`).join(", ")} required (run "markets" alone for the usage)`)
    return 2
  }
  const symbol = text("symbol")
  const spec: NewMarket = {
    ...(symbol === undefined ? {} : { symbol }),
    base: text("base")!.toUpperCase(),
    quote: text("quote")!.toUpperCase(),
    tickSize: text("tick")!,
    stepSize: text("lot")!,
    minNotional: text("min-notional")!
  }
  // The rules first, before anything is issued on a chain (the registry checks them again).
  const checked = checkNewMarket(spec, 1)
  if (Either.isLeft(checked)) {
    console.error(checked.left.message)
    return 2
  }
  const properties = parseProperties(Array.isArray(values["property"]) ? values["property"] : [])
  if (typeof properties === "string") {
    console.error(properties)
    return 2
  }
  const json = values["json"] === true
  return runCommand(
    Effect.gen(function*() {
      const listed = (yield* listMarkets).find((m) => m.symbol === checked.right.symbol)
      if (listed !== undefined) return yield* new UsageError(`market ${listed.symbol} already exists`)
      yield* registerAssets(checked.right, properties)
      return yield* addMarket(spec)
    }),
    (m) => console.log(json ? JSON.stringify(marketView(m)) : human(m))
  )
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [verb, ...rest] = args
  const parsed = parseOrUsage(rest, {
    symbol: { type: "string" },
    base: { type: "string" },
    quote: { type: "string" },
    tick: { type: "string" },
    lot: { type: "string" },
    "min-notional": { type: "string" },
    property: { type: "string", multiple: true },
    json: { type: "boolean", default: false }
  }, usage)
  if (parsed === undefined) return 2
  if (verb === "list") return list(parsed.values.json === true)
  if (verb === "add") return add(parsed.values)
  console.error(usage)
  return 2
}
