// One litecoind -regtest and one anvil for every node of `npm run cluster` (issue 25, item 6), as the
// chaos campaign and the tests start them: litecoind is the token ledger and the wrap desk's LTC,
// anvil the EVM chain `base` (as docker-compose.yml). Their chains live under the cluster's data
// dir (`<data dir>/chains`), so a cluster started again finds the chain its database remembers.
// litecoind comes from the machine's packages (installed with apt when we are root, as the test
// setup does); anvil ships in the npm package @foundry-rs/anvil. What cannot be had is an Error
// whose message says why: the caller falls back to a devnet per node and prints it.
import { join } from "node:path"
import pg from "pg"
import { ensureAptPackage } from "./aptPackages.ts"
import { anvilBinary, anvilDevKey, startAnvil } from "./anvil.ts"
import { startLitecoind, urlWithCredentials } from "./litecoind.ts"
import { randomLedgerKey } from "./walletServices.ts"
import { existsSync } from "node:fs"
import { Effect } from "effect"
import { makeRpcLedger } from "../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../src/chain/params.ts"

/** Chain id of anvil: base, one of the desk's EVM chains. */
const anvilChainId = 8453
/** A ledger block this often (litecoind regtest mines only when asked; the nodes wait for depth). */
export const sharedBlockMs = 5_000
/** Blocks before a coinbase may be spent (regtest): the fee sponsor's first coin needs this many on top. */
const coinbaseMaturity = 100

export interface SharedChains {
  /** The nodes' settings: the ledger and LTC on litecoind, base on anvil (BTC stays a devnet per node). */
  readonly vars: Readonly<Record<string, string>>
  readonly summary: string
  readonly ledgerRpc: <T = unknown>(method: string, ...params: unknown[]) => Promise<T>
  /** On a chain with no coin yet: one block to the fee sponsor (its wallet, made by the first node) and maturity on top. */
  readonly fundSponsor: (databaseUrl: string) => Promise<string>
  readonly stop: () => Promise<void>
}

export const startSharedChains = async (dataDir: string): Promise<SharedChains> => {
  ensureAptPackage("litecoind", "litecoind")
  if (!existsSync(anvilBinary())) throw new Error(`anvil is not installed (npm package @foundry-rs/anvil; run npm ci)`)
  const litecoind = await startLitecoind("litecoind", { datadir: join(dataDir, "chains", "litecoind") })
  let anvil: Awaited<ReturnType<typeof startAnvil>>
  try {
    anvil = await startAnvil({ chainId: anvilChainId, state: join(dataDir, "chains", "anvil-state.json") })
  } catch (e) {
    await litecoind.stop()
    throw e
  }
  const burn = randomLedgerKey().address
  // Addresses are the ledger's (its own prefixes); the RPC ledger turns them into the node's.
  const ledger = makeRpcLedger({ url: urlWithCredentials(litecoind), params: ledgerParams, nodeParams: litecoinRegtestParams })
  const mine = (n: number, to: string) => Effect.runPromise(ledger.mine(n, to))
  let mining = true
  const miner = (async () => {
    while (mining) {
      await new Promise((r) => setTimeout(r, sharedBlockMs))
      if (mining) await mine(1, burn).catch(() => undefined)
    }
  })()
  const ltcUrl = urlWithCredentials(litecoind)
  return {
    vars: {
      SHARDLINE_LEDGER_RPC_URL: ltcUrl,
      SHARDLINE_LTC_RPC_URL: ltcUrl,
      SHARDLINE_EVM_RPC_URLS: `base=${anvil.url}`,
      // anvil's first account: a public test key it prefunds (as docker-compose.yml). Never on a real chain.
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey
    },
    summary: `litecoind -regtest ${litecoind.url} (ledger and LTC, a block every ${sharedBlockMs / 1000} s), anvil ${anvil.url} (base, chain id ${anvilChainId}); chains under ${join(dataDir, "chains")}`,
    ledgerRpc: litecoind.rpc,
    fundSponsor: async (databaseUrl) => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
      try {
        for (;;) {
          const [row] = (await pool.query<{ address: string }>(`SELECT address FROM system_wallets WHERE name = 'fee-sponsor'`).catch(() => ({ rows: [] }))).rows
          if (row !== undefined) {
            if (await litecoind.rpc<number>("getblockcount") > coinbaseMaturity) return `fee sponsor ${row.address}: chain already funded`
            await mine(1, row.address)
            await mine(coinbaseMaturity, burn)
            return `fee sponsor ${row.address}: funded with one block's coinbase`
          }
          await new Promise((r) => setTimeout(r, 1_000))
        }
      } finally {
        await pool.end()
      }
    },
    stop: async () => {
      mining = false
      await miner
      await anvil.stop()
      await litecoind.stop()
    }
  }
}
