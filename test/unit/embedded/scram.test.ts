// The SCRAM-SHA-256 server against RFC 7677's own example exchange, and its refusals.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { makeVerifier, serverFinal, serverFirst } from "../../../src/platform/database/embedded/scram.ts"

// RFC 7677, section 3: user "user", password "pencil".
const rfc = {
  clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
  serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
  serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
  clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
}
const verifier = makeVerifier("pencil", Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64"), 4096)
const first = () => Either.getOrThrow(serverFirst(verifier, rfc.clientFirst, rfc.serverNonce))

describe("SCRAM-SHA-256 server", () => {
  it("answers RFC 7677's exchange with its server-first and server-final messages", () => {
    const { message, exchange } = first()
    expect(message).toBe(rfc.serverFirst)
    expect(serverFinal(verifier, exchange, rfc.clientFinal)).toEqual(Either.right(rfc.serverFinal))
  })

  it("refuses a proof made with another password (28P01)", () => {
    const other = makeVerifier("pencil2", verifier.salt, 4096)
    const r = serverFinal(other, Either.getOrThrow(serverFirst(other, rfc.clientFirst, rfc.serverNonce)).exchange, rfc.clientFinal)
    expect(Either.isLeft(r) && r.left.code).toBe("28P01")
    const flipped = rfc.clientFinal.replace("p=dHzb", "p=dHzc")
    const f = serverFinal(verifier, first().exchange, flipped)
    expect(Either.isLeft(f) && f.left.code).toBe("28P01")
    const short = serverFinal(verifier, first().exchange, rfc.clientFinal.replace(/p=.*$/, "p=AAAA"))
    expect(Either.isLeft(short) && short.left.code).toBe("28P01")
  })

  it("refuses a replayed final message against a new server nonce, channel binding, an authzid, and junk", () => {
    const fresh = Either.getOrThrow(serverFirst(verifier, rfc.clientFirst)).exchange
    const replay = serverFinal(verifier, fresh, rfc.clientFinal)
    expect(Either.isLeft(replay) && replay.left.code).toBe("08P01")
    const code = (clientFirst: string) => {
      const r = serverFirst(verifier, clientFirst)
      return Either.isLeft(r) ? r.left.code : "accepted"
    }
    expect(code("p=tls-server-end-point,,n=user,r=abc")).toBe("28000")
    expect(code("n,a=admin,n=user,r=abc")).toBe("28000")
    expect(code("n,,n=user,r=abc,m=ext")).toBe("28000")
    expect(code("n,,n=user")).toBe("08P01")
    expect(code("garbage")).toBe("08P01")
    expect(code("y,,n=,r=abc")).toBe("accepted")
    const noProof = serverFinal(verifier, first().exchange, "c=biws,r=x")
    expect(Either.isLeft(noProof) && noProof.left.code).toBe("08P01")
    const badBinding = serverFinal(verifier, first().exchange, rfc.clientFinal.replace("c=biws", "c=eSws"))
    expect(Either.isLeft(badBinding) && badBinding.left.code).toBe("08P01")
  })
})
