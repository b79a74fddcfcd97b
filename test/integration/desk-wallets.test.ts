// The desk's wallets on a real Postgres: the seed made once and sealed, the role wallets at
// their documented paths on every chain, deposit addresses recorded, stable per owner and never
// handed to two owners, even when asked concurrently.
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { validateLedgerAddress } from "../../src/chain/address.ts"
import { keyPairAt } from "../../src/chain/keys.ts"
import { coinChains } from "../../src/chain/params.ts"
import * as DeskWallets from "../../src/desk/wallets/DeskWallets.ts"
import { deskChains, rolePath } from "../../src/desk/wallets/paths.ts"
import { SecretBox } from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { runWithDb } from "../support/services.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("deskwallets")
})
afterAll(async () => {
  await db?.drop()
})

const wallets = <A, E>(f: (w: DeskWallets.DeskWalletsShape) => Effect.Effect<A, E>) =>
  runWithDb(db.url, Effect.flatMap(DeskWallets.make, f))

describe("desk wallets", () => {
  it("makes one seed, sealed; every node and start derives the same wallets at the documented paths", async () => {
    const first = await wallets((w) => Effect.succeed({
      issuer: w.wallet("ledger", "relayer"),
      btcCold: w.wallet("btc", "cold"),
      ltcHot: w.wallet("ltc", "hot"),
      ethCold: w.wallet("ethereum", "cold"),
      bscCold: w.wallet("bsc", "cold"),
      vaults: w.vaults,
      fingerprint: w.fingerprint
    }))
    const again = await wallets((w) => Effect.succeed({ issuer: w.wallet("ledger", "relayer").address, vaults: w.vaults, fingerprint: w.fingerprint }))
    expect(again.issuer).toBe(first.issuer.address)
    expect(again.vaults).toEqual(first.vaults)
    expect(again.fingerprint).toBe(first.fingerprint)

    const [row] = await db.query<{ sealed: string; public: string }>("SELECT sealed, public FROM desk_secrets WHERE name = 'hd-seed'")
    expect(row!.sealed).toMatch(/^v1:/)
    expect(row!.public).toBe(first.fingerprint)
    // The seed inside the seal derives the ledger relayer at m/44'/696969'/4'/0/0, by the chain module alone.
    const seed = await runWithDb(db.url, Effect.map(SecretBox, (box) => Buffer.from(box.open(row!.sealed), "hex")))
    expect(seed.length).toBe(64)
    expect(first.issuer.path).toBe("m/44'/696969'/4'/0/0")
    const byHand = keyPairAt(seed, first.issuer.path)
    expect(Either.isRight(byHand) && Buffer.from(byHand.right.privateKey).equals(Buffer.from(first.issuer.privateKey))).toBe(true)

    // Each chain's own address format; one EVM account on every EVM chain.
    expect(validateLedgerAddress(first.issuer.address).valid).toBe(true)
    expect(first.issuer.address).toMatch(/^T/)
    expect(validateLedgerAddress(first.btcCold.address, coinChains.btc.params).valid).toBe(true)
    expect(validateLedgerAddress(first.ltcHot.address, coinChains.ltc.params).valid).toBe(true)
    expect(first.btcCold.path).toBe("m/44'/0'/2'/0/0")
    expect(first.ltcHot.path).toBe("m/44'/2'/3'/0/0")
    expect(first.ethCold.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(first.bscCold.address).toBe(first.ethCold.address)
    // Cold and hot per chain, all distinct within a chain.
    expect(first.vaults).toHaveLength(deskChains.length * 2)
    for (const chain of deskChains) {
      const [cold, hot] = first.vaults.filter((v) => v.chain === chain)
      expect(cold!.path).toBe(rolePath(chain, "cold"))
      expect(cold!.address).not.toBe(hot!.address)
    }
  })

  it("deposit addresses: stable per owner, never shared, one index sequence, safe under concurrency", async () => {
    const r = await wallets((w) => Effect.gen(function*() {
      const a1 = yield* w.depositAddress({ chain: "ledger", purpose: "member", owner: "m-a", memberId: "m-a" })
      const a2 = yield* w.depositAddress({ chain: "ledger", purpose: "member", owner: "m-a", memberId: "m-a" })
      const b = yield* w.depositAddress({ chain: "ledger", purpose: "member", owner: "m-b", memberId: "m-b" })
      const orders = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => w.depositAddress({ chain: "btc", purpose: "order", owner: `o-${i % 10}`, memberId: "m-a" })),
        { concurrency: 20 }
      )
      const stolen = yield* Effect.either(w.depositAddress({ chain: "btc", purpose: "order", owner: "o-1", memberId: "m-b" }))
      const foreign = yield* Effect.either(w.depositAddress({ chain: "btc", purpose: "member", owner: "m-a", memberId: "m-b" }))
      const key = w.depositKey("btc", orders[0]!.index)
      return { a1, a2, b, orders, stolen, foreign, key }
    }))
    expect(r.a2).toEqual(r.a1)
    expect(r.b.address).not.toBe(r.a1.address)
    expect(r.a1.path).toBe(`m/44'/696969'/5'/0/${r.a1.index}`)
    // Ten orders asked twice each, concurrently: ten addresses, each the same for both asks.
    const byOwner = new Map<string, string>()
    for (const o of r.orders) {
      expect(byOwner.get(o.owner) ?? o.address).toBe(o.address)
      byOwner.set(o.owner, o.address)
    }
    expect(new Set(byOwner.values()).size).toBe(10)
    expect(r.key.address).toBe(r.orders[0]!.address)
    expect(Either.isLeft(r.stolen) && r.stolen.left.message).toMatch(/belongs to another member/)
    expect(Either.isLeft(r.foreign) && r.foreign.left.message).toMatch(/owned by that member/)
    const rows = await db.query<{ n: string; addrs: string; idxs: string }>(
      "SELECT count(*)::text AS n, count(DISTINCT address)::text AS addrs, count(DISTINCT idx)::text AS idxs FROM desk_deposit_addresses"
    )
    expect(rows[0]).toEqual({ n: "12", addrs: "12", idxs: "12" })
  })
})
