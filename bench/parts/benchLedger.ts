// The ledger under the orders and tradeCpu benches (issue 22: "node CPU per trade for settlement
// ≤ 1 ms, measured with the ledger outside the node"). BENCH_LEDGER picks it:
// - `devnet` (the default, so a run needs nothing but Postgres): the node's in-process ledger
//   devnet; properties are issued and addresses funded from its faucet through the bench node's
//   IPC channel (bench/parts/orderNode.ts); its own validation of every leg runs in the node.
// - `litecoind`: a litecoind -regtest started here (harness/litecoind.ts) and the node pointed at
//   it (SHARDLINE_LEDGER_RPC_URL, its poll SHARDLINE_LEDGER_BLOCK_MS); the operator's steps are the
//   chaos world's (harness/omniIssuer.ts readyOmniIssuer): the fee sponsor gets coinbases, an issuer
//   creates a managed property per asset (the quote, DUSD, too) and grants each delegated address its
//   tokens, one block per grant (the issuer spends its change once it is confirmed).
// Both mine a block every BENCH_BLOCK_MS (1000): the devnet on its own clock
// (SHARDLINE_DEVNET_BLOCK_MS), litecoind from a timer here once the world is set up.
import { devnetDollar } from "../../src/chain/ledger/devnetFaucet.ts"
import type { TestDatabase } from "../../harness/db.ts"
import { startLitecoind, urlWithCredentials, type Litecoind } from "../../harness/litecoind.ts"
import { readyOmniIssuer } from "../../harness/omniIssuer.ts"
import type { FundSend } from "./orderNode.ts"

export type LedgerName = "devnet" | "litecoind"

/** BENCH_LEDGER: one ledger or a comma list (tradeCpu runs each in turn). */
export const ledgersFromEnv = (): ReadonlyArray<LedgerName> => {
  const names = (process.env.BENCH_LEDGER ?? "devnet").split(",").map((s) => s.trim()).filter((s) => s !== "")
  for (const n of names) if (n !== "devnet" && n !== "litecoind") throw new Error(`BENCH_LEDGER: ${n} is neither devnet nor litecoind`)
  if (names.length === 0) throw new Error("BENCH_LEDGER is empty")
  return names as ReadonlyArray<LedgerName>
}

const blockMsFromEnv = () => {
  const v = Number(process.env.BENCH_BLOCK_MS ?? 1_000)
  if (!Number.isInteger(v) || v < 100) throw new Error("BENCH_BLOCK_MS must be an integer >= 100")
  return v
}

type Ipc = <A>(op: string, args?: Record<string, unknown>) => Promise<A>

export interface BenchLedger {
  readonly name: LedgerName
  readonly blockMs: number
  /** SHARDLINE_* variables that point the node at this ledger. */
  readonly nodeVars: Record<string, string>
  /** The quote asset of every market: its code and property. */
  readonly quote: () => Promise<{ readonly code: string; readonly property: number }>
  /** Issues a property of `whole` tokens (divisible); its id. */
  readonly issue: (name: string, whole: bigint) => Promise<number>
  /** Pays each send its tokens, confirmed in a block. */
  readonly fund: (sends: ReadonlyArray<FundSend>) => Promise<void>
  /** Mines every blockMs from now on (a devnet mines on its own clock). */
  readonly startMining: () => void
  /** The ledger's own process CPU, ms (0 for the in-process devnet: it is in the node's figure). */
  readonly cpuMs: () => number
  /** The ledger's pid (undefined: in the node). */
  readonly pid: number | undefined
  readonly stop: () => Promise<void>
}

/** Before the node starts: the ledger it will use. `attach` gives it the node (IPC, database) once started. */
export const openLedger = async (name: LedgerName, cpuOf: (pid: number) => number): Promise<BenchLedger & { readonly attach: (ipc: Ipc, db: TestDatabase) => void }> => {
  const blockMs = blockMsFromEnv()
  if (name === "devnet") {
    let ipc: Ipc | undefined
    const need = () => {
      if (ipc === undefined) throw new Error("the devnet ledger is used before its node started")
      return ipc
    }
    return {
      name, blockMs, pid: undefined,
      nodeVars: { SHARDLINE_DEVNET_BLOCK_MS: String(blockMs) },
      attach: (i) => void (ipc = i),
      quote: async () => ({ code: devnetDollar.code, property: devnetDollar.propertyId }),
      issue: (n, whole) => need()<number>("issue", { name: n, whole: String(whole) }),
      fund: async (sends) => void (await need()<number>("fund", { sends })),
      startMining: () => undefined,
      cpuMs: () => 0,
      stop: async () => undefined
    }
  }
  const ltc: Litecoind = await startLitecoind()
  const url = urlWithCredentials(ltc)
  let db: TestDatabase | undefined
  let chain: Awaited<ReturnType<typeof readyOmniIssuer>> | undefined
  let quote: { code: string; property: number } | undefined
  let mining: { on: boolean; loop: Promise<void> } | undefined
  /** The fee sponsor's coinbases: each confirmed coin carries up to 24 unconfirmed fundings (litecoind's mempool chain limit). */
  const sponsorBlocks = 20
  const ready = async () => {
    if (db === undefined) throw new Error("the litecoind ledger is used before its node started")
    // The node made its fee sponsor's wallet at start: the operator funds it, an issuer is readied.
    chain ??= await readyOmniIssuer(url, db, sponsorBlocks)
    return chain
  }
  // Grants mined one per block: the issuer spends its change only once it is confirmed.
  let serial: Promise<unknown> = Promise.resolve()
  const one = <A>(f: () => Promise<A>): Promise<A> => {
    const next = serial.then(f, f)
    serial = next.catch(() => undefined)
    return next
  }
  const issue = (n: string) => one(async () => (await ready()).issue(n))
  return {
    name, blockMs, pid: ltc.pid,
    // The node's other devnets (EVM, BTC, LTC) on the same clock as in a devnet run.
    nodeVars: { SHARDLINE_LEDGER_RPC_URL: url, SHARDLINE_LEDGER_BLOCK_MS: String(blockMs), SHARDLINE_DEVNET_BLOCK_MS: String(blockMs) },
    attach: (_ipc, d) => void (db = d),
    quote: async () => (quote ??= { code: devnetDollar.code, property: await issue("Bench DUSD") }),
    // A managed property: its supply is what the issuer grants (each send below), no faucet stock.
    issue: (n) => issue(n),
    fund: (sends) => one(async () => {
      const { run, ledger, issuerWallet, burn } = await ready()
      for (const s of sends) {
        await run(issuerWallet.omni({ type: "grant", property: s.property, amount: BigInt(s.sats), memo: "" }, s.to))
        await run(ledger.mine(1, burn))
      }
    }),
    startMining: () => {
      if (mining !== undefined) return
      const state = { on: true, loop: Promise.resolve() }
      state.loop = (async () => {
        const { run, ledger, burn } = await ready()
        while (state.on) {
          await run(ledger.mine(1, burn)).catch(() => undefined)
          await new Promise((r) => setTimeout(r, blockMs))
        }
      })()
      mining = state
    },
    cpuMs: () => cpuOf(ltc.pid),
    stop: async () => {
      if (mining !== undefined) {
        mining.on = false
        await mining.loop.catch(() => undefined)
      }
      await ltc.stop()
    }
  }
}
