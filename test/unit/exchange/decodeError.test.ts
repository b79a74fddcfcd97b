// How a request that does not decode is answered: Binance's -1102 (missing), -1101 (repeated),
// -1100 (illegal, with the legal range). A repeated parameter is known by its value (an array of
// values), not by the decoder's wording: a single value that reads like one is not a duplicate.
import { HttpServerRequest } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Effect, Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { NewOrderParams } from "../../../schemas/exchange/params.ts"
import { exchangeDecodeError } from "../../../src/exchange/http/ExchangeHttp.ts"

/** Decodes the query as the router would (a repeated name is an array), then maps the failure. */
const answer = (query: string) => {
  const request = HttpServerRequest.fromWeb(new Request(`http://127.0.0.1/api/public/v1/order?${query}`))
  const input = HttpServerRequest.searchParamsFromURL(new URL(request.url, "http://localhost"))
  const decoded = Schema.decodeUnknownEither(NewOrderParams)(input)
  if (Either.isRight(decoded)) throw new Error("decoded")
  const error = Effect.runSync(HttpApiDecodeError.fromParseError(decoded.left))
  const e = exchangeDecodeError(error, request)
  return { code: e.code, msg: e.msg }
}
const signed = `timestamp=1&signature=${"a".repeat(64)}`

describe("exchangeDecodeError", () => {
  it("answers a parameter given twice with -1101 and its name", () => {
    expect(answer(`symbol=AAABBB&side=BUY&price=1&price=10&quantity=5&${signed}`))
      .toEqual({ code: -1101, msg: "Duplicate values for parameter 'price'." })
    expect(answer(`symbol=AAABBB&side=BUY&side=SELL&price=1&quantity=5&${signed}`))
      .toEqual({ code: -1101, msg: "Duplicate values for parameter 'side'." })
  })

  it("answers one value that merely reads like the decoder's text for an array with -1100, not -1101", () => {
    // The decoder's message for this is `Expected "BUY", actual "actual ["`; matching `actual [`
    // in it took it for a duplicate.
    expect(answer(`symbol=AAABBB&side=${encodeURIComponent("actual [")}&price=1&quantity=5&${signed}`))
      .toEqual({ code: -1100, msg: "Illegal characters found in parameter 'side'; legal range is 'BUY, SELL'." })
    expect(answer(`symbol=AAABBB&side=BUY&price=${encodeURIComponent("actual [1]")}&quantity=5&${signed}`).code).toBe(-1100)
  })

  it("answers a missing parameter with -1102", () => {
    expect(answer(`symbol=AAABBB&side=BUY&quantity=5&${signed}`))
      .toEqual({ code: -1102, msg: "Mandatory parameter 'price' was not sent, was empty/null, or malformed." })
  })
})
