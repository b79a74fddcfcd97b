// The attestation series past its ninth row (found by `npm run chaos -- --seed 1 --minutes 1`:
// from the tenth attestation on, every tick failed with "duplicate key value violates unique
// constraint desk_attestations_pkey" and the series stopped). The next seq was read with
// `SELECT seq::text AS seq … ORDER BY seq DESC`, and Postgres sorts by the output column of that
// name: the text "9" sorts above "10", so append took 9 + 1 = 10 again, forever; `latest` and
// `history` sorted the same text. Here twelve rows are appended: each takes the next seq, chains
// to the one before, and `latest` and `history` answer in numeric order.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { runWithDatabase } from "../../harness/withDatabase.ts"
import { verifySeries } from "../../src/desk/attestation/attestation.ts"
import * as Attestations from "../../src/desk/attestation/Attestations.ts"

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase("attestseq")
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe("the attestation series", () => {
  it("appends past seq 9: every row takes the next seq and chains to the one before; latest and history in numeric order", { timeout: 60_000 }, async () => {
    const out = await runWithDatabase(db.url, Effect.gen(function*() {
      const attestations = yield* Attestations.make
      const appended: Array<number> = []
      for (let i = 1; i <= 12; i++) appended.push((yield* attestations.append({ totalReserves: String(i), circulatingSupply: "0" })).seq)
      return { appended, latest: (yield* attestations.latest)!, all: yield* attestations.history("all"), day: yield* attestations.history("24h"), publicKey: attestations.publicKey }
    }))
    expect(out.appended).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    expect(out.latest.seq).toBe(12)
    expect(out.all.map((p) => p.seq)).toEqual(out.appended)
    expect(out.day.map((p) => p.seq)).toEqual(out.appended)
    const verdict = verifySeries(out.all, { publicKey: out.publicKey, nowMs: Date.now() })
    expect(verdict.problems).toEqual([])
    expect(out.all[10]!.previousPayloadHash).toBe(out.all[9]!.payload_hash)
  })
})
