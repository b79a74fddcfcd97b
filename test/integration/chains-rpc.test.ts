// A node whose chains are real nodes: the ledger over JSON-RPC on litecoind -regtest, base and
// bsc over viem on anvil. /ops and /metrics report their heights and chain ids; a ledger node
// that never answers is reported unavailable without slowing /ops or /metrics; an EVM node that
// is down or serves another chain stops the node at startup with the setting to fix.
import { createServer, type Server, type Socket } from "node:net"
import { Effect, Either, Exit, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ChainsLive from "../../src/platform/ChainsLive.ts"
import { encodeAddress } from "../../src/chain/address.ts"
import { litecoinRegtestParams } from "../../src/chain/params.ts"
import { configLayer } from "../../src/config.ts"
import * as SecretBox from "../../src/platform/SecretBox.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { chainMetric, eventually, opsChains } from "../support/chainsOps.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startLitecoind, type Litecoind, urlWithCredentials } from "../support/litecoind.ts"
import { startAll } from "../support/processes.ts"
import { configFrom, freePort, startNode, testMasterKey, type RunningNode } from "../support/node.ts"

let litecoind: Litecoind
let base: Anvil
let bsc: Anvil

const regtestAddress = (() => {
  const a = encodeAddress(new Uint8Array(20).fill(0x5a), "p2pkh", litecoinRegtestParams)
  if (Either.isLeft(a)) throw new Error(a.left.message)
  return a.right
})()

/** The litecoind URL with its credentials in it, as an operator would set it. */
const ledgerUrl = () => urlWithCredentials(litecoind)

const anvilMine = (anvil: Anvil, blocks: number) =>
  fetch(anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: [`0x${blocks.toString(16)}`] })
  }).then((r) => r.json())

beforeAll(async () => {
  // startAll stops the ones that started when another fails: no anvil or datadir outlives the file.
  ;[litecoind, base, bsc] = await startAll([startLitecoind(), startAnvil({ chainId: 8453 }), startAnvil({ chainId: 56 })])
})

afterAll(async () => {
  await Promise.all([litecoind?.stop(), base?.stop(), bsc?.stop()])
})

describe("a node on litecoind and anvil", () => {
  let db: TestDatabase
  let node: RunningNode

  beforeAll(async () => {
    await litecoind.rpc("generatetoaddress", 7, regtestAddress)
    await anvilMine(base, 5)
    await anvilMine(bsc, 3)
    db = await createTestDatabase("chainsrpc")
    node = await startNode(db.url, {
      SHARDLINE_LEDGER_RPC_URL: ledgerUrl(),
      SHARDLINE_EVM_RPC_URLS: `base=${base.url},bsc=${bsc.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey
    })
  })

  afterAll(async () => {
    await node?.stop()
    await db?.drop()
  })

  it("reports the nodes' heights and chain ids in /ops, and only the configured EVM chains", async () => {
    const chains = await eventually(async () => {
      const c = await opsChains(node.baseUrl)
      return c.length === 5 && c.every((r) => r.available) ? c : undefined
    })
    expect(chains.slice(0, 3).map(({ chain, kind, height, chainId }) => ({ chain, kind, height, chainId }))).toEqual([
      { chain: "ledger", kind: "rpc", height: 7, chainId: undefined },
      { chain: "base", kind: "rpc", height: 5, chainId: 8453 },
      { chain: "bsc", kind: "rpc", height: 3, chainId: 56 }
    ])
    // The wrap desk's coin chains, unset here: their in-process devnets.
    expect(chains.slice(3).map(({ chain, kind, chainId }) => ({ chain, kind, chainId }))).toEqual([
      { chain: "btc", kind: "devnet", chainId: undefined },
      { chain: "ltc", kind: "devnet", chainId: undefined }
    ])
    // New blocks on the nodes show up on the next probe and report.
    await litecoind.rpc("generatetoaddress", 2, regtestAddress)
    await anvilMine(base, 1)
    const later = await eventually(async () => {
      const c = await opsChains(node.baseUrl)
      return c[0]?.height === 9 && c[1]?.height === 6 ? c : undefined
    })
    expect(later[2]).toMatchObject({ chain: "bsc", height: 3 })
    const text = await (await fetch(`${node.baseUrl}/ops`)).text()
    expect(text).not.toContain("u:p@")
  })

  it("exports the same heights in /metrics", async () => {
    await eventually(async () => ((await chainMetric(node.baseUrl, "shardline_chain_height", "ledger")) === 9 ? true : undefined))
    expect(await chainMetric(node.baseUrl, "shardline_chain_height", "base")).toBe(6)
    expect(await chainMetric(node.baseUrl, "shardline_chain_height", "bsc")).toBe(3)
    expect(await chainMetric(node.baseUrl, "shardline_chain_up", "ledger")).toBe(1)
    expect(await chainMetric(node.baseUrl, "shardline_chain_height", "ethereum")).toBeUndefined()
  })
})

describe("a ledger node that accepts connections and never answers", () => {
  let db: TestDatabase
  let node: RunningNode
  let silent: Server
  const sockets = new Set<Socket>()

  beforeAll(async () => {
    const port = await freePort()
    silent = createServer((s) => { sockets.add(s) })
    await new Promise<void>((r) => silent.listen(port, "127.0.0.1", r))
    db = await createTestDatabase("chainsilent")
    node = await startNode(db.url, {
      SHARDLINE_LEDGER_RPC_URL: `http://u:secret@127.0.0.1:${port}/`,
      SHARDLINE_EVM_RPC_URLS: `base=${base.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey
    })
  })

  afterAll(async () => {
    await node?.stop()
    await db?.drop()
    for (const s of sockets) s.destroy()
    await new Promise((r) => silent?.close(r))
  })

  it("is reported unavailable after the probe timeout while /ops and /metrics answer at once", async () => {
    const ledger = await eventually(async () => {
      const started = Date.now()
      const chains = await opsChains(node.baseUrl)
      expect(Date.now() - started).toBeLessThan(1_000)
      const l = chains.find((c) => c.chain === "ledger")
      return l?.error?.startsWith("no answer within") === true ? { ledger: l, base: chains.find((c) => c.chain === "base") } : undefined
    })
    expect(ledger.ledger).toMatchObject({ kind: "rpc", available: false, height: null, error: "no answer within 2000 ms" })
    expect(ledger.base).toMatchObject({ kind: "rpc", available: true, chainId: 8453 })
    expect(sockets.size).toBeGreaterThan(0)
    const started = Date.now()
    expect(await chainMetric(node.baseUrl, "shardline_chain_up", "ledger")).toBe(0)
    expect(await chainMetric(node.baseUrl, "shardline_chain_up", "base")).toBe(1)
    expect(Date.now() - started).toBeLessThan(1_000)
  })
})

describe("EVM nodes are checked when the node starts", () => {
  /** Builds only the chains layer, as a node would, and returns why it failed. */
  const refusal = async (vars: Record<string, string>): Promise<string> => {
    const config = configFrom({ SHARDLINE_MASTER_KEY: testMasterKey, ...vars })
    const layer = ChainsLive.layer.pipe(
      Layer.provide(SecretBox.layer),
      Layer.provide(configLayer(config))
    )
    const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(layer)))
    if (Exit.isSuccess(exit)) throw new Error("the chains layer started")
    return String(exit.cause._tag === "Fail" ? exit.cause.error : exit.cause)
  }

  it("a node serving another chain id is refused, naming the chain and both ids", async () => {
    const message = await refusal({ SHARDLINE_EVM_RPC_URLS: `base=${bsc.url}`, SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey })
    expect(message).toBe(`(Invalid data at SHARDLINE_EVM_RPC_URLS: "the node for base serves chain id 56, not 8453")`)
  })

  it("a node that is down is refused, and its URL's secret is not repeated", async () => {
    const port = await freePort()
    const message = await refusal({ SHARDLINE_EVM_RPC_URLS: `bsc=http://127.0.0.1:${port}/v3/apikey123`, SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey })
    expect(message).toMatch(/^\(Invalid data at SHARDLINE_EVM_RPC_URLS: "the node for bsc did not answer eth_chainId: /)
    expect(message).not.toContain("apikey123")
  })
})
