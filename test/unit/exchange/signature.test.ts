import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { checkSignature, checkTiming, parseSigned, readParams, sign } from "../../../src/exchange/auth/signature.ts"

// Binance's published test vector (rest-api.md, SIGNED endpoint examples).
const secret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
const query = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
const vector = "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"

const parsed = (q: string, body = "") => {
  const p = parseSigned(q, body)
  if (Either.isLeft(p)) throw new Error(`refused: ${p.left.msg}`)
  return p.right
}
const refused = (q: string, body = "") => {
  const p = parseSigned(q, body)
  if (Either.isRight(p)) throw new Error("accepted")
  return p.left
}

describe("signed request payload", () => {
  it("matches Binance's test vector with the whole string in the query", () => {
    expect(sign(secret, query)).toBe(vector)
    const p = parsed(`${query}&signature=${vector}`)
    expect(p.payload).toBe(query)
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("accepts a signature at the end of a form body with an empty query (ccxt)", () => {
    const p = parsed("", `${query}&signature=${vector}`)
    expect(p.payload).toBe(query)
    expect(p.params.get("symbol")).toBe("LTCBTC")
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("reads the parameters from the signed bytes: a request re-cut at another query/body boundary reads what was signed", () => {
    // Signed as one query: price=10. Re-cut: query ends "price=1", body starts "0&quantity=5".
    const signedText = "symbol=LTCBTC&side=BUY&price=10&quantity=5&timestamp=1499827319559"
    const sig = sign(secret, signedText)
    const cut = signedText.indexOf("price=1") + "price=1".length
    const recut = parseSigned(signedText.slice(0, cut), `${signedText.slice(cut)}&signature=${sig}`)
    // The boundary falls inside a pair: refused rather than read two ways.
    expect(Either.isLeft(recut) && recut.left.code).toBe(-1102)
    // Re-cut at a '&': the parameters are exactly the signed ones.
    const atAmp = signedText.indexOf("&quantity")
    const p = parsed(signedText.slice(0, atAmp), `${signedText.slice(atAmp)}&signature=${sig}`)
    expect(p.params.get("price")).toBe("10")
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("refuses query and body parameters that do not meet at '&' (Binance's mixed example), with a clear message", () => {
    const r = refused(`symbol=LTCBTC&timeInForce=GTC&signature=${"0".repeat(64)}`, "quantity=1&timestamp=1")
    expect(r.code).toBe(-1102)
    expect(r.msg).toContain("joined by '&'")
    const p = parsed("symbol=LTCBTC&timeInForce=GTC&", `quantity=1&timestamp=1&signature=${"0".repeat(64)}`)
    expect(p.params.get("timeInForce")).toBe("GTC")
    expect(p.params.get("quantity")).toBe("1")
  })

  it("refuses a parameter given twice with -1101 and its name, in one part or across both", () => {
    expect(refused("symbol=A&symbol=B&timestamp=1").code).toBe(-1101)
    const both = refused("symbol=AAA&", "symbol=BBB&timestamp=1")
    expect(both).toMatchObject({ code: -1101, msg: "Duplicate values for parameter 'symbol'." })
    expect(refused(`timestamp=1&signature=${vector}`, `signature=${vector}`).code).toBe(-1101)
  })

  it("refuses a signature that is not the last parameter", () => {
    expect(refused(`signature=${vector}&${query}`).code).toBe(-1022)
  })

  it("uses the bytes as received: a re-encoded query does not verify", () => {
    const raw = "symbol=LTC%2DBTC&timestamp=1499827319559"
    const sig = sign(secret, "symbol=LTC-BTC&timestamp=1499827319559")
    const p = parsed(`${raw}&signature=${sig}`)
    expect(p.params.get("symbol")).toBe("LTC-BTC")
    expect(checkSignature(secret, p.payload, p.signature)?.code).toBe(-1022)
  })

  it("treats a malformed or wrong signature as invalid without throwing", () => {
    expect(checkSignature(secret, query, "zz")?.code).toBe(-1022)
    expect(checkSignature(secret, query, vector.slice(0, 63))?.code).toBe(-1022)
    expect(checkSignature(secret, query, vector.toUpperCase())).toBeUndefined() // hex is case-insensitive
    expect(checkSignature(secret, query + "x", vector)?.code).toBe(-1022)
    expect(checkSignature(secret, query, undefined)?.code).toBe(-1102)
  })

  it("refuses bad percent-encoding with -1100", () => {
    expect(refused("symbol=%E0%A4%A&timestamp=1").code).toBe(-1100)
    const r = readParams("a=%zz")
    expect(Either.isLeft(r) && r.left.code).toBe(-1100)
  })
})

describe("timestamp and recvWindow", () => {
  const now = 1_700_000_000_000
  const at = (ts: number | string, rw?: number | string) =>
    checkTiming(new Map([["timestamp", String(ts)], ...(rw === undefined ? [] : [["recvWindow", String(rw)] as [string, string]])]), now)

  it("accepts a timestamp inside the default 5000 ms window, refuses one outside", () => {
    expect(at(now - 5000)).toBeUndefined()
    expect(at(now - 5001)?.code).toBe(-1021)
  })

  it("honours recvWindow up to 60000 and refuses more", () => {
    expect(at(now - 59_000, 60_000)).toBeUndefined()
    expect(at(now - 59_000, 10_000)?.code).toBe(-1021)
    expect(at(now, 60_001)?.code).toBe(-1131)
  })

  it("refuses a timestamp 1000 ms or more ahead of the server", () => {
    expect(at(now + 999)).toBeUndefined()
    const r = at(now + 1000)
    expect(r?.code).toBe(-1021)
    expect(r?.msg).toContain("1000ms ahead")
  })

  it("accepts microsecond timestamps", () => {
    expect(at((now - 100) * 1000)).toBeUndefined()
  })

  it("answers -1102 for a missing timestamp and -1100 for illegal characters", () => {
    expect(checkTiming(new Map(), now)?.code).toBe(-1102)
    expect(at("12a")?.code).toBe(-1100)
    expect(at(now, "5s")?.code).toBe(-1100)
  })
})
