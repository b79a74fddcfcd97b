// The pure parts of retrying a publish: the Idempotency-Key header's forms (draft-ietf-httpapi-
// idempotency-key-header: a Structured Field String, or a bare token), the payload fingerprint,
// the stamp retry backoff, and the comment manifest (the X stamp's CID) naming the post.
import { Either, PrimaryKey } from "effect"
import { describe, expect, it } from "vitest"
import { rawCid } from "../../../src/crypto/cid.ts"
import { commentManifest } from "../../../src/social/posts/Comments.ts"
import { fingerprintOf, parseIdempotencyKey } from "../../../src/social/posts/idempotency.ts"
import { stampRetryDelayMs } from "../../../src/social/posts/StampCompletion.ts"
import { indexOfPath } from "../../../src/social/posts/owedStamps.ts"
import { postPath } from "../../../src/social/accounts/socialKeys.ts"
import { FinishStamps } from "../../../schemas/social/stamping.ts"

describe("Idempotency-Key", () => {
  it("takes a Structured Field String (escapes undone) and a bare token; absent is no key", () => {
    expect(parseIdempotencyKey("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"")).toEqual(Either.right("8e03978e-40d5-43e8-bc93-6894a57f9324"))
    expect(parseIdempotencyKey("  abc-123 ")).toEqual(Either.right("abc-123"))
    expect(parseIdempotencyKey("\"a\\\"b\\\\c\"")).toEqual(Either.right("a\"b\\c"))
    expect(parseIdempotencyKey(undefined)).toEqual(Either.right(undefined))
  })

  it("refuses empty, unterminated, spaced, non-ASCII or over-long keys", () => {
    for (const bad of ["", "\"\"", "\"abc", "a b", "clé", "x".repeat(256), "\"\u0007\""]) {
      expect(Either.isLeft(parseIdempotencyKey(bad)), JSON.stringify(bad)).toBe(true)
    }
    expect(Either.isRight(parseIdempotencyKey("x".repeat(255)))).toBe(true)
  })

  it("fingerprints the payload canonically: key order does not matter, content does", () => {
    const a = fingerprintOf({ kind: "story", body: "hi", tags: ["a"], mediaCids: [] })
    expect(fingerprintOf({ mediaCids: [], tags: ["a"], body: "hi", kind: "story" })).toBe(a)
    expect(fingerprintOf({ kind: "story", body: "hi!", tags: ["a"], mediaCids: [] })).not.toBe(a)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe("stamp retry backoff", () => {
  it("doubles from the base and stops at the cap", () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => stampRetryDelayMs(n, 500, 6_000))).toEqual([500, 1_000, 2_000, 4_000, 6_000, 6_000])
    expect(stampRetryDelayMs(10_000, 500, 300_000)).toBe(300_000)
    expect(stampRetryDelayMs(-1, 500, 300_000)).toBe(500)
  })
})

describe("comment manifest", () => {
  it("is canonical JSON naming the post's metadata CID, the body's CID and the commenter", () => {
    const post = rawCid(Buffer.from("post manifest"))
    const body = rawCid(Buffer.from("nice"))
    const text = commentManifest({ postMetadataCid: post, postId: "p-1", bodyCid: body, author: "Tabc", createdAt: "2026-01-01T00:00:00.000Z" })
    expect(text).toBe(`{"author":"Tabc","body":"${body}","createdAt":"2026-01-01T00:00:00.000Z","post":"${post}","postId":"p-1","type":"comment","version":1}`)
  })
})

describe("owed stamps", () => {
  it("finds the index a comment address was derived at from its path, whatever the account path", () => {
    expect(indexOfPath(postPath(0))).toBe(0)
    expect(indexOfPath(postPath(41))).toBe(41)
    expect(indexOfPath("m/44'/1'/1101'/7/0/0")).toBe(7)
  })

  it("a FinishStamps of the same post and attempt at another time is another message (a post may need finishing more than once)", () => {
    const a = new FinishStamps({ postId: "p", attempt: 0, dueAtMs: 1 })
    const b = new FinishStamps({ postId: "p", attempt: 0, dueAtMs: 2 })
    expect(a[PrimaryKey.symbol]()).not.toBe(b[PrimaryKey.symbol]())
  })
})
