import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { accountFromSeed, CHANGE, deriveAddress, RECEIVE, type Branch, type WatchOnlyAccount } from "../../../src/chain/keys.ts"
import { GAP_LIMIT, scanAccount, scanBranch, ScanError, type AddressActivity, type AddressLookup } from "../../../src/chain/xpubScan.ts"

const account = accountFromSeed(Uint8Array.from({ length: 32 }, (_, i) => 255 - i))
if (Either.isLeft(account)) throw new Error(account.left.message)
const watch: WatchOnlyAccount = account.right.watch

const addressAt = (branch: Branch, index: number): string => {
  const d = deriveAddress(watch, branch, index)
  if (Either.isLeft(d)) throw new Error(d.left.message)
  return d.right.address
}

/** A ledger stub holding funds at given (branch, index) slots; records every batch asked. */
const ledger = (funds: ReadonlyArray<readonly [Branch, number, bigint]>) => {
  const known = new Map<string, AddressActivity>(funds.map(([b, i, v]) => [addressAt(b, i), { used: true, balance: v }]))
  const batches: Array<number> = []
  const lookup: AddressLookup = async (addresses) => {
    batches.push(addresses.length)
    return new Map(addresses.map((a) => [a, known.get(a) ?? { used: false, balance: 0n }]))
  }
  return { lookup, batches }
}

const scan = async (funds: ReadonlyArray<readonly [Branch, number, bigint]>) => {
  const l = ledger(funds)
  const r = await scanAccount(watch, l.lookup)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return { ...r.right, batches: l.batches }
}

describe("gap-limit scanning (20 unused in a row, both branches)", () => {
  it("finds funds at index 19 on either branch, asking in windows", async () => {
    expect(GAP_LIMIT).toBe(20)
    const r = await scan([[RECEIVE, 19, 500n], [CHANGE, 19, 7n]])
    expect(r.receive.used.map((a) => a.index)).toEqual([19])
    expect(r.change.used.map((a) => a.index)).toEqual([19])
    expect(r.receive.nextIndex).toBe(20)
    expect(r.balance).toBe(507n)
    // 0..19 then 20..39 per branch: the gap after index 19 is confirmed, nothing more.
    expect(r.receive.addresses).toHaveLength(40)
    expect(r.batches).toEqual([20, 20, 20, 20])
  })

  it("finds funds 20 past a used address but not 21 past (index 39 vs 40 after 19)", async () => {
    const inside = await scan([[RECEIVE, 19, 1n], [RECEIVE, 39, 2n], [CHANGE, 19, 3n], [CHANGE, 39, 4n]])
    expect(inside.receive.used.map((a) => a.index)).toEqual([19, 39])
    expect(inside.change.used.map((a) => a.index)).toEqual([19, 39])
    expect(inside.balance).toBe(10n)

    const beyond = await scan([[RECEIVE, 19, 1n], [RECEIVE, 40, 2n], [CHANGE, 19, 3n], [CHANGE, 40, 4n]])
    expect(beyond.receive.used.map((a) => a.index)).toEqual([19])
    expect(beyond.change.used.map((a) => a.index)).toEqual([19])
    expect(beyond.balance).toBe(4n)
    expect(beyond.receive.addresses.map((a) => a.address)).not.toContain(addressAt(RECEIVE, 40))
  })

  it("finds nothing when the first 20 addresses are unused, even with funds at 20", async () => {
    const r = await scan([[RECEIVE, 20, 9n], [CHANGE, 45, 9n]])
    expect(r.balance).toBe(0n)
    expect(r.receive.used).toEqual([])
    expect(r.receive.addresses).toHaveLength(20)
    expect(r.receive.nextIndex).toBe(0)
  })

  it("counts a used address with zero balance as used: it extends the walk", async () => {
    const r = await scan([[RECEIVE, 10, 0n], [RECEIVE, 29, 5n]])
    expect(r.receive.used.map((a) => a.index)).toEqual([10, 29])
    expect(r.balance).toBe(5n)
  })

  it("fails instead of guessing when the ledger skips an address or errors", async () => {
    const skipping: AddressLookup = async (addresses) => new Map(addresses.slice(1).map((a) => [a, { used: false, balance: 0n }]))
    expect(await scanBranch(watch, RECEIVE, skipping)).toMatchObject({ left: { message: expect.stringMatching(/no answer/) } })
    const broken: AddressLookup = async () => {
      throw new Error("connection refused")
    }
    expect(await scanAccount(watch, broken)).toEqual(Either.left(new ScanError({ message: "ledger lookup failed: connection refused" })))
  })

  it("stops at the per-branch address bound and says so", async () => {
    const funds = Array.from({ length: 30 }, (_, i) => [RECEIVE, i, 1n] as const)
    const l = ledger(funds)
    const r = await scanBranch(watch, RECEIVE, l.lookup, { maxAddressesPerBranch: 25 })
    expect(r).toMatchObject({ right: { truncated: true, nextIndex: 25 } })
    if (Either.isRight(r)) expect(r.right.addresses).toHaveLength(25)
    const full = await scanBranch(watch, RECEIVE, l.lookup)
    expect(full).toMatchObject({ right: { truncated: false, nextIndex: 30, balance: 30n } })
  })
})
