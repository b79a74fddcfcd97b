import { describe, expect, it } from "vitest"
import { checkSignature, checkTiming, isRefusal, parseParams, sign } from "../../../src/exchange/auth/signature.ts"

// Binance's published test vector (rest-api.md, SIGNED endpoint examples).
const secret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
const query = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
const vector = "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"

const parsed = (q: string, body = "", form = true) => {
  const p = parseParams(q, body, form)
  if (isRefusal(p)) throw new Error(`refused: ${p.msg}`)
  return p
}

describe("signed request payload", () => {
  it("matches Binance's test vector with the whole string in the query", () => {
    expect(sign(secret, query)).toBe(vector)
    const p = parsed(`${query}&signature=${vector}`)
    expect(p.payload).toBe(query)
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("signs query + body with no separator when parameters are split", () => {
    const q = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC"
    const body = "quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
    const sig = sign(secret, q + body)
    const p = parsed(`${q}&signature=${sig}`, body)
    expect(p.payload).toBe(q + body)
    expect(p.params.get("quantity")).toBe("1")
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("accepts a signature at the end of a form body with an empty query (ccxt)", () => {
    const body = `${query}&signature=${vector}`
    const p = parsed("", body)
    expect(p.payload).toBe(query)
    expect(p.params.get("symbol")).toBe("LTCBTC")
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
  })

  it("includes a non-form body in the payload but reads no parameters from it", () => {
    const p = parsed(`timestamp=1&signature=${"0".repeat(64)}`, "", false)
    expect(p.payload).toBe("timestamp=1")
    expect(p.params.has("signature")).toBe(false)
  })

  it("lets the query win when a parameter is in both query and body", () => {
    const p = parsed("symbol=AAA", "symbol=BBB&timestamp=1")
    expect(p.params.get("symbol")).toBe("AAA")
  })

  it("refuses a signature that is not the last parameter", () => {
    const p = parseParams(`signature=${vector}&${query}`, "", true)
    expect(isRefusal(p) && p.code).toBe(-1022)
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
    const p = parseParams("symbol=%E0%A4%A&timestamp=1", "", true)
    expect(isRefusal(p) && p.code).toBe(-1100)
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
