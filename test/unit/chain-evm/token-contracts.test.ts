// SHARDLINE_EVM_TOKEN_CONTRACTS: both forms, the devnet default for what is not listed, and a
// malformed value as the setting's typed ConfigError at load (never a defect).
import { ConfigProvider, Effect, Either, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { devnetTokenAddress } from "../../../src/chain/evm/devnetTokens.ts"
import { tokenContractAddress } from "../../../src/chain/evm/tokenAddress.ts"
import { parseTokenContracts } from "../../../src/chain/evm/tokenContracts.ts"
import { appConfig } from "../../../src/platform/Config.ts"
import { unitDataDir } from "../../support/unitConfig.ts"

const a = "0x" + "a".repeat(40)
const usdcMainnet = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
const hot = "0x52908400098527886E0F7030069857D2E4169EE7" as const

describe("EVM token contracts setting", () => {
  it("reads chain:SYMBOL=0x… entries and the JSON form", () => {
    expect(Either.getOrThrow(parseTokenContracts(`ethereum:USDC=${usdcMainnet}, bsc:DAI=${a}`))).toEqual([
      { chain: "ethereum", symbol: "USDC", address: usdcMainnet }, { chain: "bsc", symbol: "DAI", address: a }
    ])
    expect(Either.getOrThrow(parseTokenContracts(JSON.stringify({ base: { USDC: a, PYUSD: usdcMainnet } })))).toEqual([
      { chain: "base", symbol: "USDC", address: a }, { chain: "base", symbol: "PYUSD", address: usdcMainnet }
    ])
    expect(Either.getOrThrow(parseTokenContracts(""))).toEqual([])
    expect(Either.getOrThrow(parseTokenContracts("  "))).toEqual([])
  })

  it("refuses unknown chains and symbols, duplicates, bad addresses and bad JSON, saying what to fix", () => {
    const left = (t: string) => Either.flip(parseTokenContracts(t)).pipe(Either.getOrThrow)
    expect(left(`polygon:USDC=${a}`)).toMatch(/unknown chain "polygon"/)
    expect(left(`ethereum:FRAX=${a}`)).toMatch(/FRAX is not one of USDC, USDT, PYUSD, DAI/)
    expect(left(`ethereum:USDC=${a},ethereum:USDC=${a}`)).toBe("ethereum:USDC is listed twice")
    expect(left("ethereum:USDC=0x12")).toMatch(/entry 1: .*0x followed by 40 hex digits/)
    expect(left("ethereum USDC 0x12")).toMatch(/is not chain:SYMBOL=0x/)
    expect(left("{not json")).toMatch(/not valid JSON/)
    expect(left(JSON.stringify({ polygon: { USDC: a } }))).toMatch(/chains ethereum, base, bsc/)
    expect(left(JSON.stringify({ base: { FRAX: a } }))).toMatch(/symbols USDC, USDT, PYUSD, DAI/)
    expect(left(JSON.stringify({ base: { USDC: "0x12" } }))).toMatch(/40 hex digits/)
  })

  it("a listed contract wins; anything else is the devnet's deployed address", () => {
    const contracts = Either.getOrThrow(parseTokenContracts(`base:USDC=${usdcMainnet}`))
    expect(tokenContractAddress(contracts, { chain: "base", hotWallet: hot }, "USDC")).toBe(usdcMainnet)
    expect(tokenContractAddress(contracts, { chain: "base", hotWallet: hot }, "DAI")).toBe(devnetTokenAddress(hot, "DAI"))
    expect(tokenContractAddress(contracts, { chain: "ethereum", hotWallet: hot }, "USDC")).toBe(devnetTokenAddress(hot, "USDC"))
  })

  it("is a typed config error at load when malformed; the legacy name still works", async () => {
    const load = (env: Record<string, string>) =>
      Effect.runPromiseExit(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries({ ...unitDataDir, ...env })))))
    const bad = await load({ SHARDLINE_EVM_TOKEN_CONTRACTS: "base:USDC=nope" })
    expect(Exit.isFailure(bad)).toBe(true)
    expect(String(Exit.isFailure(bad) ? bad.cause : "")).toMatch(/SHARDLINE_EVM_TOKEN_CONTRACTS.*entry 1/)
    const legacy = await load({ SHARDLINE_DESK_STABLECOINS: `ethereum:USDC=${usdcMainnet}` })
    expect(Exit.isSuccess(legacy) && legacy.value.evmTokenContracts).toEqual([{ chain: "ethereum", symbol: "USDC", address: usdcMainnet }])
    const unset = await load({})
    expect(Exit.isSuccess(unset) && unset.value.evmTokenContracts).toEqual([])
  })
})
