// The chain settings: each bad value refused with a message naming the variable (and never
// repeating a URL or key), the setups a node refuses, the sealed devnet hot-wallet key, and the
// devnet clocks living exactly as long as the chains layer's scope.
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigProvider, Effect, Either, Exit, Layer, Option, Redacted, Scope } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import * as ChainsLive from "../../../src/platform/ChainsLive.ts"
import { EvmLedgers } from "../../../src/chain/evm/EvmLedger.ts"
import { UtxoLedger } from "../../../src/chain/ledger/UtxoLedger.ts"
import { AppConfig, appConfig, type AppConfigShape } from "../../../src/platform/Config.ts"
import { unitDataDir } from "../../support/unitConfig.ts"
import * as SecretBox from "../../../src/platform/SecretBox.ts"

const read = (vars: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries({ ...unitDataDir, ...vars }))))))

const config = (vars: Record<string, string>): AppConfigShape => {
  const r = read(vars)
  if (Either.isLeft(r)) throw new Error(String(r.left))
  return r.right
}

const refusal = (vars: Record<string, string>): string => {
  const r = read(vars)
  if (Either.isRight(r)) throw new Error(`accepted ${JSON.stringify(vars)}`)
  return String(r.left)
}

const key = "0x" + "ac".repeat(32)

describe("chain settings", () => {
  it("default to devnets mining a block a second, single-node only", () => {
    const c = config({})
    expect(Option.isNone(c.ledgerRpcUrl)).toBe(true)
    expect(Option.isNone(c.evmRpcUrls)).toBe(true)
    expect(Option.isNone(c.evmHotWalletKey)).toBe(true)
    expect(c.devnetBlockMs).toBe(10_000)
    expect(c.devnetPerNode).toBe(false)
    expect(ChainsLive.evmChainsOf(c)).toEqual(["ethereum", "base", "bsc"])
    // Empty is unset, as for SHARDLINE_DATABASE_URL.
    expect(Option.isNone(config({ SHARDLINE_LEDGER_RPC_URL: " ", SHARDLINE_EVM_RPC_URLS: "" }).evmRpcUrls)).toBe(true)
  })

  it("read an EVM URL list in any order and a key with or without 0x", () => {
    const c = config({ SHARDLINE_EVM_RPC_URLS: " bsc=https://bsc.example/v1/k , base=http://127.0.0.1:8545", SHARDLINE_EVM_HOT_WALLET_KEY: "AC".repeat(32) })
    expect(Option.getOrThrow(c.evmRpcUrls).map((u) => [u.chain, Redacted.value(u.url)])).toEqual([
      ["bsc", "https://bsc.example/v1/k"],
      ["base", "http://127.0.0.1:8545"]
    ])
    expect(ChainsLive.evmChainsOf(c)).toEqual(["bsc", "base"])
    expect(Redacted.value(Option.getOrThrow(c.evmHotWalletKey))).toBe("0x" + "AC".repeat(32))
  })

  it("refuse bad values, naming the variable and never echoing a URL or key", () => {
    const at = (name: string, message: string) => `(Invalid data at SHARDLINE_${name}: "${message}")`
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "base=http://a/key1,solana=http://b/key2" })).toBe(at("EVM_RPC_URLS", `unknown chain "solana" in entry 2 (chains: ethereum, base, bsc)`))
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "http://a/key1" })).toBe(at("EVM_RPC_URLS", "entry 1 is not chain=url (chains: ethereum, base, bsc)"))
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "base=wss://a/key1" })).toBe(at("EVM_RPC_URLS", "the URL for base is not an http(s) URL"))
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "base=key1" })).toBe(at("EVM_RPC_URLS", "the URL for base is not an http(s) URL"))
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "base=http://a/key1,base=http://b/key2" })).toBe(at("EVM_RPC_URLS", "base is listed twice"))
    expect(refusal({ SHARDLINE_EVM_RPC_URLS: "base=http://a/key1,," })).toBe(at("EVM_RPC_URLS", "entry 2 is not chain=url (chains: ethereum, base, bsc)"))
    for (const bad of ["0x1234", "0x" + "ag".repeat(32), "0x" + "ac".repeat(33), key + " trailing"]) {
      const message = refusal({ SHARDLINE_EVM_HOT_WALLET_KEY: bad })
      expect(message).toBe(at("EVM_HOT_WALLET_KEY", "must be 0x followed by 64 hex characters (the value is not shown)"))
    }
    expect(refusal({ SHARDLINE_DEVNET_PER_NODE: "sometimes" })).toContain("SHARDLINE_DEVNET_PER_NODE")
  })

  it("take a devnet block clock of 0 or 10 ms to 1 hour", () => {
    const message = `(Invalid data at SHARDLINE_DEVNET_BLOCK_MS: "must be 0 (blocks on demand only) or from 10 to 3600000 milliseconds")`
    for (const ok of ["0", "10", "3600000"]) expect(config({ SHARDLINE_DEVNET_BLOCK_MS: ok }).devnetBlockMs).toBe(Number(ok))
    for (const bad of ["-1", "9", "3600001"]) expect(refusal({ SHARDLINE_DEVNET_BLOCK_MS: bad })).toBe(message)
    expect(refusal({ SHARDLINE_DEVNET_BLOCK_MS: "1s" })).toContain("Expected an integer value")
  })
})

describe("chain setups a node refuses", () => {
  const check = (vars: Record<string, string>) => Effect.runSync(Effect.either(ChainsLive.checkChainSettings(config(vars))))
  const both = { SHARDLINE_LEDGER_RPC_URL: "http://u:p@ledger:19443/", SHARDLINE_EVM_RPC_URLS: "base=http://anvil:8545", SHARDLINE_EVM_HOT_WALLET_KEY: key }

  it("a socket-topology node with any devnet, unless SHARDLINE_DEVNET_PER_NODE=true", () => {
    const socket = { SHARDLINE_TOPOLOGY: "socket" }
    const refused = check(socket)
    expect(Either.isLeft(refused) && String(refused.left)).toMatch(
      /^\(Invalid data at SHARDLINE_TOPOLOGY: "a socket-topology node would run its own in-process devnet for the ledger \(SHARDLINE_LEDGER_RPC_URL unset\) and EVM \(SHARDLINE_EVM_RPC_URLS unset\), a different chain on every node; .*SHARDLINE_DEVNET_PER_NODE=true/
    )
    const evmOnly = check({ ...socket, SHARDLINE_LEDGER_RPC_URL: both.SHARDLINE_LEDGER_RPC_URL })
    expect(Either.isLeft(evmOnly) && String(evmOnly.left)).toContain("devnet for EVM (SHARDLINE_EVM_RPC_URLS unset), a different chain")
    expect(Either.isRight(check({ ...socket, SHARDLINE_DEVNET_PER_NODE: "true" }))).toBe(true)
    expect(Either.isRight(check({ ...socket, ...both }))).toBe(true)
    expect(Either.isRight(check({}))).toBe(true)
  })

  it("a ledger URL the JSON-RPC adapter cannot use, without repeating its password", () => {
    const refused = (url: string) => {
      const r = check({ SHARDLINE_LEDGER_RPC_URL: url })
      return Either.isLeft(r) ? String(r.left) : "accepted"
    }
    expect(refused("ftp://u:hunter2@127.0.0.1:19443/")).toBe(
      `(Invalid data at SHARDLINE_LEDGER_RPC_URL: "expected http or https, got ftp: (expected a bitcoind-compatible JSON-RPC URL such as http://user:password@127.0.0.1:19443/)")`
    )
    expect(refused("http://u:%zz@127.0.0.1/")).toContain("the URL's user or password has a malformed %-escape")
    const notUrl = refused("//u:hunter2@host")
    expect(notUrl).toMatch(/^\(Invalid data at SHARDLINE_LEDGER_RPC_URL: "not a URL: /)
    expect(notUrl).not.toContain("hunter2")
    expect(refused("http://u:p@127.0.0.1:19443/")).toBe("accepted")
  })

  it("EVM nodes without a hot-wallet key", () => {
    const refused = check({ SHARDLINE_EVM_RPC_URLS: both.SHARDLINE_EVM_RPC_URLS })
    expect(Either.isLeft(refused) && String(refused.left)).toBe(
      `(Invalid data at SHARDLINE_EVM_HOT_WALLET_KEY: "is required when SHARDLINE_EVM_RPC_URLS is set (0x followed by 64 hex characters)")`
    )
  })
})

describe("the devnet hot-wallet key", () => {
  const box = SecretBox.make(Buffer.alloc(32, 7))

  it("is generated once, sealed under the data dir (0600), and the same on every start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sl-hot-"))
    const first = Redacted.value(await Effect.runPromise(ChainsLive.loadDevnetHotWalletKey(dir, box)))
    expect(first).toMatch(/^0x[0-9a-f]{64}$/)
    const file = join(dir, ChainsLive.devnetKeyFile)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, "utf8")).not.toContain(first.slice(2))
    expect(Redacted.value(await Effect.runPromise(ChainsLive.loadDevnetHotWalletKey(dir, box)))).toBe(first)
    const other = await Effect.runPromise(Effect.either(ChainsLive.loadDevnetHotWalletKey(dir, SecretBox.make(Buffer.alloc(32, 8)))))
    expect(Either.isLeft(other) && String(other.left)).toBe(
      `(Invalid data at SHARDLINE_DATA_DIR: "evm-devnet-hot-wallet.sealed cannot be read or opened with this master key; delete it to start the EVM devnets with a new hot wallet")`
    )
  })
})

describe("the chains layer with devnets", () => {
  const build = async (vars: Record<string, string>) => {
    const c = config({ SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-chains-")), SHARDLINE_MASTER_KEY: "22".repeat(32), ...vars })
    const scope = Effect.runSync(Scope.make())
    const layer = ChainsLive.layer.pipe(Layer.provide(SecretBox.layer), Layer.provide(Layer.succeed(AppConfig, c)))
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    const evm = (chain: "ethereum" | "base" | "bsc") => Effect.flatMap(EvmLedgers.pipe(Effect.provide(context)), (l) => l.get(chain))
    return {
      ledger: Effect.runSync(UtxoLedger.pipe(Effect.provide(context))),
      evm: (chain: "ethereum" | "base" | "bsc") => Effect.runPromise(evm(chain)),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
      dataDir: c.dataDir
    }
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

  it("mine on the clock while the scope is open and stop when it closes", async () => {
    const chains = await build({ SHARDLINE_DEVNET_BLOCK_MS: "20" })
    const base = await chains.evm("base")
    await sleep(300)
    const [tip, block] = [(await Effect.runPromise(chains.ledger.tip)).height, await Effect.runPromise(base.blockNumber)]
    expect(tip).toBeGreaterThan(3)
    expect(block).toBeGreaterThan(3n)
    await chains.close()
    const [tipClosed, blockClosed] = [(await Effect.runPromise(chains.ledger.tip)).height, await Effect.runPromise(base.blockNumber)]
    await sleep(200)
    expect((await Effect.runPromise(chains.ledger.tip)).height).toBe(tipClosed)
    expect(await Effect.runPromise(base.blockNumber)).toBe(blockClosed)
  })

  it("mine only on demand with SHARDLINE_DEVNET_BLOCK_MS=0, and sign with the sealed hot wallet", async () => {
    const chains = await build({ SHARDLINE_DEVNET_BLOCK_MS: "0" })
    // The blocks the devnets mine at start to fund their customer wallets, then none by themselves:
    // the ledger faucet's 100 + 20 coinbases and two Omni blocks (DUSD); on EVM a block per
    // transaction of the four token deployments and mints.
    const started = { ledger: (await Effect.runPromise(chains.ledger.tip)).height, bsc: await Effect.runPromise((await chains.evm("bsc")).blockNumber) }
    expect(started).toEqual({ ledger: 122, bsc: 8n })
    await sleep(150)
    expect((await Effect.runPromise(chains.ledger.tip)).height).toBe(started.ledger)
    expect(await Effect.runPromise((await chains.evm("bsc")).blockNumber)).toBe(started.bsc)
    const stored = Redacted.value(await Effect.runPromise(ChainsLive.loadDevnetHotWalletKey(chains.dataDir, SecretBox.make(Buffer.from("22".repeat(32), "hex")))))
    expect((await chains.evm("ethereum")).hotWallet).toBe(privateKeyToAccount(stored as `0x${string}`).address)
    await chains.close()
  })
})
