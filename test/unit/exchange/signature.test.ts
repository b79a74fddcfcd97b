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

  it("verifies Binance's mixed example: the query followed directly by the body (totalParams), read apart", () => {
    // Binance's published vector for "Mixed query string and request body".
    const mixed = "0fd168b8ddb4876a0358a8d14d0c9f3da0e9b20c5d52b2a00fcf7d1c602f9a77"
    const p = parsed("symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC", `quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559&signature=${mixed}`)
    expect(p.payload).toBe("symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTCquantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559")
    expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
    expect(p.params.get("timeInForce")).toBe("GTC")
    expect(p.params.get("quantity")).toBe("1")
    expect(p.params.get("timestamp")).toBe("1499827319559")
    // Signature in the query, the rest split between the parts: the same bytes, the same HMAC.
    const q = parsed(`symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&signature=${mixed}`, "quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559")
    expect(checkSignature(secret, q.payload, q.signature)).toBeUndefined()
  })

  it("keeps a '&' at the boundary as signed bytes (Binance: what is sent is what is signed), never adds one", () => {
    const text = "symbol=LTCBTC&timeInForce=GTC&quantity=1&timestamp=1499827319559"
    const sig = sign(secret, text)
    const atAmp = text.indexOf("&quantity")
    // The '&' is sent at the end of the query or the start of the body: signed as sent.
    for (const [q, b] of [[text.slice(0, atAmp + 1), text.slice(atAmp + 1)], [text.slice(0, atAmp), text.slice(atAmp)]] as const) {
      const p = parsed(q, `${b}&signature=${sig}`)
      expect(p.payload).toBe(text)
      expect(checkSignature(secret, p.payload, p.signature)).toBeUndefined()
      expect(p.params.get("timeInForce")).toBe("GTC")
      expect(p.params.get("quantity")).toBe("1")
    }
    // Signed with a '&' the request does not carry: not the bytes received, refused.
    const p = parsed(text.slice(0, atAmp), `${text.slice(atAmp + 1)}&signature=${sig}`)
    expect(checkSignature(secret, p.payload, p.signature)?.code).toBe(-1022)
  })

  it("refuses a re-cut inside a pair: a captured request cannot change a value by moving the boundary", () => {
    // Signed as one query: price=10.
    const signedText = "symbol=LTCBTC&side=BUY&price=10&quantity=5&timestamp=1499827319559"
    const sig = sign(secret, signedText)
    const cutAt = (marker: string) => signedText.indexOf(marker) + marker.length
    for (const cut of [cutAt("price=1"), cutAt("price="), cutAt("pri"), cutAt("price=10&quantity=5&timestamp")]) {
      const recut = parseSigned(signedText.slice(0, cut), `${signedText.slice(cut)}&signature=${sig}`)
      expect(Either.isLeft(recut) && recut.left).toMatchObject({ code: -1102 })
    }
    // Between pairs, the values are the signed ones.
    const p = parsed(signedText.slice(0, cutAt("price=10")), `${signedText.slice(cutAt("price=10&"))}&signature=${sig}`)
    expect(p.params.get("price")).toBe("10")
    expect(p.params.get("quantity")).toBe("5")
    expect(checkSignature(secret, p.payload, p.signature)?.code).toBe(-1022)
    const q = parsed(signedText.slice(0, cutAt("price=10")), `${signedText.slice(cutAt("price=10"))}&signature=${sig}`)
    expect(q.params.get("price")).toBe("10")
    expect(checkSignature(secret, q.payload, q.signature)).toBeUndefined()
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
