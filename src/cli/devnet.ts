// devnet pay --chain C --to ADDR --amount DEC [--asset CODE] [--json]      → {txid}
// devnet mine [--chain C] [--blocks N] [--json]                             → {chain, height}
// devnet balance --chain C --address A [--asset CODE] [--json]              → {balance}
// The devnets live inside the running node, so pay, mine and a devnet balance are persisted
// messages to the Devnet entity (one per chain), written to cluster storage and answered by the
// runner that owns it. Pay and mine refuse a chain that is a real node; a balance on a real node
// is read here, from the node itself. Amounts are decimals in the asset's own unit.
import { randomUUID } from "node:crypto"
import { parseArgs } from "node:util"
import { Duration, Effect, Either, Layer, Logger, LogLevel } from "effect"
import { Balance, Devnet, DevnetChainName, Mine, mineBlocksMax, Pay } from "../../schemas/devnet.ts"
import { DECIMALS_MAX, parseAmount } from "../chain/units.ts"
import { AppConfig, appConfig } from "../platform/Config.ts"
import { realNodeRefusal, realNodeSetting } from "../platform/devnet/realNode.ts"
import { runCommand } from "./runtime.ts"

const usage = [
  "usage: devnet pay --chain ledger|ethereum|base|bsc|btc|ltc --to ADDR --amount DEC [--asset CODE] [--json]",
  "       devnet mine [--chain ledger|ethereum|base|bsc|btc|ltc] [--blocks N] [--json]",
  "       devnet balance --chain ledger|ethereum|base|bsc|btc|ltc --address ADDR [--asset CODE] [--json]"
].join("\n")

/** How long the CLI waits for the node to answer before giving up. */
export const replyTimeout = Duration.seconds(60)

const options = {
  chain: { type: "string" },
  to: { type: "string" },
  amount: { type: "string" },
  asset: { type: "string" },
  address: { type: "string" },
  blocks: { type: "string" },
  json: { type: "boolean", default: false }
} as const

type Chain = typeof DevnetChainName.Type

const chainOf = (name: string | undefined, fallback?: Chain): Chain | string => {
  if (name === undefined) return fallback ?? "--chain is required"
  return (DevnetChainName.literals as ReadonlyArray<string>).includes(name) ? (name as Chain) : `unknown chain "${name}": one of ${DevnetChainName.literals.join(", ")}`
}
const isChain = (c: string): c is Chain => (DevnetChainName.literals as ReadonlyArray<string>).includes(c)

const noAnswer = () => new Error("the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?")

/** Fails with the one-line refusal when `chain` is a real node in this process's config. */
const devnetOnly = (command: string, chain: Chain) =>
  Effect.flatMap(AppConfig, (config) => {
    const setting = realNodeSetting(config, chain)
    return setting === undefined ? Effect.void : Effect.fail(realNodeRefusal(command, chain, setting))
  })

const ask = <A, E>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.timeoutFail({ duration: replyTimeout, onTimeout: noAnswer }))

/** A usage refusal: one line on stderr, exit 2. */
const refusedBeforeStart = (message: string): number => {
  console.error(`${message.split("\n")[0]} (run "devnet" alone for the usage)`)
  return 2
}

const parse = (args: ReadonlyArray<string>) => {
  try {
    return parseArgs({ args: [...args], options, strict: true })
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [verb, ...rest] = args
  if (verb !== "pay" && verb !== "mine" && verb !== "balance") {
    console.error(usage)
    return 2
  }
  const parsed = parse(rest)
  if (typeof parsed === "string") return refusedBeforeStart(parsed)
  const v = parsed.values
  const chain = chainOf(v.chain, verb === "mine" ? "ledger" : undefined)
  if (!isChain(chain)) return refusedBeforeStart(chain)
  const print = (human: (a: Record<string, unknown>) => string) => (a: Record<string, unknown>) => console.log(v.json ? JSON.stringify(a) : human(a))

  if (verb === "pay") {
    if (v.to === undefined || v.to.trim() === "") return refusedBeforeStart("--to is required")
    if (v.amount === undefined) return refusedBeforeStart("--amount is required")
    // The shape (digits, positive) is checked here; the decimals the asset allows, by the node.
    const shape = parseAmount(v.amount, DECIMALS_MAX)
    if (Either.isLeft(shape)) return refusedBeforeStart(shape.left.message)
    const request = new Pay({ requestId: randomUUID(), to: v.to.trim(), amount: v.amount, ...(v.asset === undefined ? {} : { asset: v.asset }) })
    return runCommand(
      Effect.zipRight(devnetOnly("pay", chain), Effect.flatMap(Devnet.client, (client) => ask(client(chain).Pay(request)))),
      print((a) => `paid: ${String(a["txid"])}`)
    )
  }

  if (verb === "mine") {
    const blocks = v.blocks === undefined ? 1 : Number(v.blocks)
    if (!Number.isInteger(blocks) || blocks < 1 || blocks > mineBlocksMax) return refusedBeforeStart(`--blocks must be an integer in 1..${mineBlocksMax}`)
    return runCommand(
      Effect.zipRight(devnetOnly("mine", chain), Effect.flatMap(Devnet.client, (client) => ask(client(chain).Mine(new Mine({ requestId: randomUUID(), blocks }))))),
      print((a) => `${String(a["chain"])} at height ${String(a["height"])}`)
    )
  }

  if (v.address === undefined || v.address.trim() === "") return refusedBeforeStart("--address is required")
  const address = v.address.trim()
  const config = await Effect.runPromise(appConfig).catch(() => undefined)
  const real = config !== undefined && realNodeSetting(config, chain) !== undefined
  const showBalance = print((a) => String(a["balance"]))
  if (real) {
    // A real node: read it from here, through the same ports the node uses (loaded only now).
    const [ChainsLive, DevnetChains, LedgerRegistry, marketStore, tokenStore] = await Promise.all([
      import("../platform/ChainsLive.ts"), import("../platform/devnet/DevnetChains.ts"), import("../platform/ledger/LedgerRegistry.ts"),
      import("../exchange/markets/marketStore.ts"), import("../desk/tokens/tokenStore.ts")
    ])
    return runCommand(
      Effect.map(
        Effect.flatMap(DevnetChains.DevnetChains, (chains) => ask(chains.balance(chain, address, v.asset))),
        (balance) => ({ balance })
      ).pipe(
        Effect.provide(DevnetChains.layer.pipe(
          Layer.provide(ChainsLive.layer),
          Layer.provide(LedgerRegistry.layer(marketStore.registeredProperties, tokenStore.registeredProperties))
        )),
        // The chains layer logs its setup on stdout, where --json promises one object only.
        Logger.withMinimumLogLevel(LogLevel.None)
      ),
      showBalance
    )
  }
  const request = new Balance({ requestId: randomUUID(), address, ...(v.asset === undefined ? {} : { asset: v.asset }) })
  return runCommand(Effect.flatMap(Devnet.client, (client) => ask(client(chain).Balance(request))), showBalance)
}
