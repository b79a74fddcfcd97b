// What a chaos run stands on, started and stopped by the campaign: a private PostgreSQL cluster
// (the machine's own binaries, its own data dir and port, so restarting it touches nobody else),
// litecoind -regtest as the token ledger and as LTC, anvil as the EVM chain base (USDC deployed
// before any node starts, customers' USDC) and a second anvil as ethereum (the desk's ETH), TCP
// proxies between the nodes and what they depend on (so the nemesis can cut or hang them), and N nodes.
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import pg from "pg"
import type { Address } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { deployDevnetTokens, devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../src/platform/database/embedded/EmbeddedPostgres.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../anvil.ts"
import { testMasterKey } from "../config.ts"
import { startLitecoind, urlWithCredentials, type Litecoind } from "../litecoind.ts"
import { spawnNode, type NodeProcess } from "../nodeProcess.ts"
import { freePort } from "../ports.ts"
import { pollFor } from "../omniIssuer.ts"
import { startTcpProxy, type TcpProxy } from "../tcpProxy.ts"

export interface ChaosNode {
  readonly index: number
  current: NodeProcess | undefined
  /** Every process this slot ran, for the report (pid, how it ended). */
  readonly lives: Array<NodeProcess>
}

export interface World {
  readonly postgres: EmbeddedPostgres
  /** The database as the campaign's own clients reach it: directly, never through the cut proxy. */
  readonly directUrl: string
  readonly query: <R = Record<string, unknown>>(text: string, params?: ReadonlyArray<unknown>) => Promise<Array<R>>
  readonly dbProxy: TcpProxy
  readonly litecoind: Litecoind
  readonly ledgerUrl: string
  readonly ledgerProxy: TcpProxy
  /** The EVM chain `base` (chain id 8453): USDC cash-outs, mints and redeems. */
  readonly anvil: Anvil
  /** The EVM chain `ethereum` (chain id 1): ETH wraps and unwraps (the desk's ETH lives on ethereum only). */
  readonly anvilEth: Anvil
  /** The devnet USDC on base, deployed by the hot wallet before any node started (so at its known address). */
  readonly usdc: Address
  /** anvil's default accounts 1..: the desk customers' own EVM wallets, ETH on both chains and USDC on base. */
  readonly evmCustomerKeys: ReadonlyArray<`0x${string}`>
  /** Per node: the port its peers dial, forwarding to the port it binds (cut to partition it). */
  readonly runnerProxies: ReadonlyArray<TcpProxy>
  readonly nodes: ReadonlyArray<ChaosNode>
  readonly dataDir: string
  /** Nodes answering now (a killed one is missing until it is back). */
  readonly live: () => ReadonlyArray<NodeProcess>
  readonly startNode: (i: number) => Promise<NodeProcess>
  readonly stop: () => Promise<void>
}

/** Chain id of anvil: base, one of the desk's EVM chains. */
const anvilChainId = 8453
/** ethereum's chain id: the second anvil, where the desk wraps ETH. */
const anvilEthChainId = 1

/** anvil's default accounts 1..5 (public, well-known test keys, each prefunded with 10,000 ETH). */
export const anvilCustomerKeys: ReadonlyArray<`0x${string}`> = [
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"
]
/** USDC each customer is given on base before the run (whole dollars). */
const CUSTOMER_USDC_WHOLE = 1_000_000n
/** The desk's public URL in a chaos run (nothing listens there: clients send to a live node's desk port). */
export const deskPublicUrl = "https://desk.chaos.example"
/** How often the Attestor attests in a chaos run (the product's hourly cadence, shortened so a run sees a series). */
export const attestationIntervalMs = 10_000

const withPort = (url: string, port: number): string => {
  const u = new URL(url)
  u.port = String(port)
  return u.toString()
}

export const startWorld = async (o: { readonly nodes: number; readonly log: (line: string) => void }): Promise<World> => {
  const dataDir = mkdtempSync(join(tmpdir(), "sl-chaos-"))
  // Run as root, the embedded Postgres runs as its own user, which must be able to enter this folder.
  chmodSync(dataDir, 0o755)
  const started: Array<() => Promise<void>> = []
  const nodes: Array<ChaosNode> = Array.from({ length: o.nodes }, (_, index) => ({ index, current: undefined, lives: [] }))
  const stopAll = async () => {
    for (const slot of nodes) for (const n of slot.lives) await n.dispose().catch(() => undefined)
    for (const f of started.reverse()) await f().catch(() => undefined)
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const postgres = await startEmbeddedPostgres({ dataDir: join(dataDir, "pg"), engine: "postgres" })
    started.push(postgres.stop)
    const directUrl = postgres.url
    const pool = new pg.Pool({ connectionString: directUrl, max: 4 })
    // The campaign's reads ride out a Postgres restart of its own making.
    pool.on("error", () => undefined)
    started.push(() => pool.end())
    const query = async <R,>(text: string, params?: ReadonlyArray<unknown>) => (await pool.query(text, params as Array<unknown>)).rows as Array<R>
    const dbProxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(directUrl).port) })
    started.push(dbProxy.down)
    const litecoind = await startLitecoind()
    started.push(litecoind.stop)
    const ltcUrl = urlWithCredentials(litecoind)
    const ledgerProxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(litecoind.url).port) })
    started.push(ledgerProxy.down)
    const ledgerUrl = withPort(ltcUrl, ledgerProxy.port)
    const anvil = await startAnvil({ chainId: anvilChainId })
    started.push(anvil.stop)
    const anvilEth = await startAnvil({ chainId: anvilEthChainId })
    started.push(anvilEth.stop)
    // The devnet's dollar tokens on base, deployed by the hot wallet from nonce 0 before any node
    // sends from it (so they sit where every node looks: devnetTokens.ts), and each customer's USDC.
    const base = await Effect.runPromise(makeViemLedger({ chain: "base", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
    await Effect.runPromise(deployDevnetTokens(base))
    const usdc = devnetTokenAddress(base.hotWallet, "USDC")
    for (const k of anvilCustomerKeys) await Effect.runPromise(base.erc20Transfer(usdc, privateKeyToAccount(k).address, CUSTOMER_USDC_WHOLE * 1_000_000n))
    o.log(`world: postgres on port ${new URL(directUrl).port} (pid ${postgres.serverPid}), litecoind ${litecoind.url}, anvil ${anvil.url} (base, USDC ${usdc}), anvil ${anvilEth.url} (ethereum), data ${dataDir}`)

    const vars: Record<string, string> = {
      SHARDLINE_DATABASE_URL: withPort(directUrl, dbProxy.port),
      SHARDLINE_MASTER_KEY: testMasterKey,
      // One key epoch file for every node: a grant sealed by one is opened by another.
      SHARDLINE_DATA_DIR: join(dataDir, "shared"),
      SHARDLINE_LEDGER_RPC_URL: ledgerUrl,
      SHARDLINE_LTC_RPC_URL: ltcUrl,
      SHARDLINE_EVM_RPC_URLS: `base=${anvil.url},ethereum=${anvilEth.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey,
      // On RPC chains the desk knows the stablecoins it is told: base's USDC (mint deposits, payouts, reserves).
      SHARDLINE_EVM_TOKEN_CONTRACTS: `base:USDC=${usdc}`,
      // BTC has no shared node here: each node's BTC devnet is its own (the workload does not wrap BTC).
      SHARDLINE_DEVNET_PER_NODE: "true",
      SHARDLINE_LEDGER_BLOCK_MS: "1000",
      SHARDLINE_SETTLEMENT_FINAL_DEPTH: "2",
      SHARDLINE_MESSAGE_POLL_MS: "200",
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      // The expiry sweep's grace is the product's default (60 s), not a shorter one: the first cut's
      // 10 s made any expiry timer more than 10–40 s late (a kill and a partition overlapping an
      // expiry, session 16: 49 s) strand the grant's tokens when its key went, a limit the product
      // has at 60–90 s too (docs/exchange.md "The sweep grace"), documented rather than hit every run.
      SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "1000000",
      SHARDLINE_RATE_LIMIT_IP_WEIGHT: "1000000",
      SHARDLINE_DESK_RATE_LIMIT_IP_WEIGHT: "1000000",
      SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "1000000",
      SHARDLINE_SOCIAL_STAMP_RETRY_MS: "1000",
      SHARDLINE_SOCIAL_STAMP_RETRY_MAX_MS: "5000",
      SHARDLINE_SOCIAL_STAMP_SWEEP_MS: "5000",
      // One public desk URL for every node, as docs/identity.md asks of a cluster: the wallet-link
      // manifest's `from` and link URLs are built by whichever node runs the DeskLinkToken entity.
      SHARDLINE_DESK_PUBLIC_URL: deskPublicUrl,
      SHARDLINE_ATTESTATION_INTERVAL_MS: String(attestationIntervalMs),
      SHARDLINE_REWARDS_SAMPLE_MS: "5000",
      // A node that lost its shard locks in a database cut exits and is started again (below).
      SHARDLINE_SHARD_WATCHDOG_MS: "30000",
      // A start that hangs exits for the nemesis's restart loop to try again (nemesis.ts).
      SHARDLINE_START_DEADLINE_MS: "120000"
    }
    // Each node keeps its runner ports for the whole run: peers dial the proxy, the node binds behind it.
    const listenPorts = await Promise.all(nodes.map(() => freePort()))
    const runnerProxies = await Promise.all(listenPorts.map((p) => startTcpProxy({ host: "127.0.0.1", port: p })))
    for (const p of runnerProxies) started.push(p.down)
    const startNode = async (i: number): Promise<NodeProcess> => {
      const slot = nodes[i]!
      const node = await spawnNode({ ...vars, SHARDLINE_RUNNER_PORT: String(runnerProxies[i]!.port), SHARDLINE_RUNNER_LISTEN_PORT: String(listenPorts[i]!) }, { startTimeoutMs: 300_000 })
      slot.current = node
      slot.lives.push(node)
      o.log(`node${i + 1} up: pid ${node.pid}, ${node.baseUrl}`)
      return node
    }
    // The first node migrates alone; the others join.
    await startNode(0)
    for (let i = 1; i < o.nodes; i++) await startNode(i)
    await pollFor("every node registered as a runner", 60_000, async () => {
      const [r] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`)
      return r !== undefined && r.n >= o.nodes ? true : undefined
    }, 500).catch(() => o.log("note: cluster_runners did not show every runner healthy within 60 s"))

    return {
      postgres, directUrl, query, dbProxy, litecoind, ledgerUrl, ledgerProxy, anvil, anvilEth, usdc, evmCustomerKeys: anvilCustomerKeys, runnerProxies, nodes, dataDir,
      live: () => nodes.flatMap((s) => (s.current !== undefined && s.current.isRunning() ? [s.current] : [])),
      startNode,
      stop: stopAll
    }
  } catch (e) {
    await stopAll()
    throw e
  }
}
