// Issuing the market assets on a ledger devnet: the ids the ledger gives, and a fresh devnet
// (what every process start is) getting the registered ids back, gaps skipped, mismatches refused.
import { randomBytes } from "node:crypto"
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { devnetFaucet, fundDevnetFaucet } from "../../../src/chain/ledger/devnetFaucet.ts"
import { makeUtxoDevnet } from "../../../src/chain/ledger/devnet.ts"
import { syncOnce } from "../../../src/chain/ledger/follower.ts"
import { makeKeyWallet } from "../../../src/chain/ledger/keyWallet.ts"
import { OmniIndexer } from "../../../src/chain/omni/indexer.ts"
import { DevnetRefused } from "../../../schemas/devnet.ts"
import { resolveLedgerAsset } from "../../../src/platform/devnet/assets.ts"
import { assetSupplyWhole, issue, placeholderName, reissue, reissueGapMax, type IssuerDeps } from "../../../src/platform/devnet/propertyIssuer.ts"

const issuerKey = randomBytes(32)

/** A fresh devnet with its faucet and DUSD, as at every node start; the same issuer key each time. */
const withDevnet = async <A>(f: (deps: IssuerDeps, indexer: OmniIndexer) => Promise<A>): Promise<A> => {
  const devnet = makeUtxoDevnet()
  try {
    const ledger = devnet.ledger
    await Effect.runPromise(fundDevnetFaucet(ledger))
    const indexer = new OmniIndexer({ params: ledger.params })
    const synced = Effect.as(Effect.mapError(syncOnce(ledger, indexer), (e) => new DevnetRefused({ message: e.message })), indexer)
    return await f({ ledger, faucet: devnetFaucet(ledger), issuer: makeKeyWallet(ledger, issuerKey), synced }, indexer)
  } finally {
    devnet.close()
  }
}
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))

describe("market assets on the ledger devnet", () => {
  it("issues properties 4, 5, … after DUSD, their supply at the faucet", async () => {
    await withDevnet(async (deps, indexer) => {
      const shrd = Either.getOrThrow(await run(issue(deps, "SHRD")))
      const gold = Either.getOrThrow(await run(issue(deps, "GOLD")))
      expect([shrd.propertyId, gold.propertyId]).toEqual([4, 5])
      await Effect.runPromise(deps.synced)
      expect(indexer.property(4)).toMatchObject({ name: "SHRD", issuer: deps.issuer.address, divisible: true })
      expect(indexer.balance(deps.faucet.address, 4)).toBe(assetSupplyWhole * 10n ** 8n)
    })
  })

  it("a fresh devnet re-issues the registry with the same ids, skipping ids issued but never registered", async () => {
    const registry = [{ code: "DUSD", propertyId: 3 }, { code: "GOLD", propertyId: 7 }, { code: "SHRD", propertyId: 4 }]
    await withDevnet(async (deps, indexer) => {
      expect(Either.getOrThrow(await run(reissue(deps, registry)))).toBe(2)
      await Effect.runPromise(deps.synced)
      expect(indexer.properties().map((p) => [p.id, p.name])).toEqual([
        [3, "Devnet Dollar"], [4, "SHRD"], [5, placeholderName], [6, placeholderName], [7, "GOLD"]
      ])
      expect(indexer.balance(deps.faucet.address, 7)).toBe(assetSupplyWhole * 10n ** 8n)
      // Started again on the same ledger (nothing new to issue): every id already matches.
      expect(Either.getOrThrow(await run(reissue(deps, registry)))).toBe(0)
    })
  })

  it("refuses a registry the devnet cannot match", async () => {
    await withDevnet(async (deps) => {
      const refusal = async (registry: ReadonlyArray<{ code: string; propertyId: number }>) => {
        const r = await run(reissue(deps, registry))
        return Either.isLeft(r) ? `${r.left._tag}: ${r.left.message}` : "issued"
      }
      expect(await refusal([{ code: "SHRD", propertyId: 3 }])).toMatch(/^AssetsMismatch: .*SHRD is property 3, which on the devnet is "Devnet Dollar"/)
      expect(await refusal([{ code: "SHRD", propertyId: 2 }])).toMatch(/SHRD is property 2, which on the devnet is nothing/)
      expect(await refusal([{ code: "SHRD", propertyId: 2 ** 31 + 5 }])).toMatch(/test-ecosystem id/)
      expect(await refusal([{ code: "SHRD", propertyId: 4 + reissueGapMax + 1 }])).toMatch(/more than 100 to skip/)
    })
  })
})

describe("--asset on the ledger", () => {
  it("takes the registered market asset codes, case-insensitive, after TOK and DUSD", () => {
    const registry = new Map([["SHRD", 4], ["GOLD", 5]])
    expect(resolveLedgerAsset("shrd", registry)).toEqual(Either.right({ kind: "omni", property: 4 }))
    expect(resolveLedgerAsset("DUSD", registry)).toEqual(Either.right({ kind: "omni", property: 3 }))
    expect(resolveLedgerAsset(undefined, registry)).toEqual(Either.right({ kind: "native" }))
    const unknown = resolveLedgerAsset("NOPE", registry)
    expect(Either.isLeft(unknown) && unknown.left.message).toBe('unknown asset "NOPE" on the ledger: use TOK, DUSD, SHRD, GOLD or an Omni property id')
  })
})
