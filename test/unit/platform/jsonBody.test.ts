// JsonBody: a body declared by its schema and taken as JSON whatever its Content-Type (HttpApi
// hands it parsed JSON, text or bytes); one that is not JSON is 400 invalid_request, one that does
// not fit 400 invalid_parameter naming the field.
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Either, Schema } from "effect"
import { ArrayFormatter } from "effect/ParseResult"
import { describe, expect, it } from "vitest"
import { JsonBody, notJsonMessage } from "../../../schemas/common/jsonBody.ts"
import { decodeErrorShape } from "../../../src/platform/http/errorBodyEdge.ts"

const Body = JsonBody(Schema.Struct({ body: Schema.String.pipe(Schema.maxLength(5)) }))
const decode = Schema.decodeUnknownEither(Body)
const answer = (input: unknown) => {
  const r = decode(input)
  if (Either.isRight(r)) return r.right
  return decodeErrorShape(new HttpApiDecodeError({ issues: ArrayFormatter.formatErrorSync(r.left), message: r.left.message })).error
}

describe("JsonBody", () => {
  it("takes the same JSON as parsed JSON (application/json), text (text/plain) or bytes (any other type)", () => {
    expect(answer({ body: "hi" })).toEqual({ body: "hi" })
    expect(answer("{\"body\":\"hi\"}")).toEqual({ body: "hi" })
    expect(answer(new TextEncoder().encode("{\"body\":\"hi\"}"))).toEqual({ body: "hi" })
  })

  it("answers a body that is not JSON 400 invalid_request, one that does not fit 400 invalid_parameter naming the field", () => {
    expect(answer("{")).toEqual({ code: "invalid_request", message: notJsonMessage })
    expect(answer(new Uint8Array([0xff, 0xfe, 0x00]))).toEqual({ code: "invalid_request", message: notJsonMessage })
    expect(answer("{\"body\":\"too long\"}")).toMatchObject({ code: "invalid_parameter", message: expect.stringContaining("'body'") })
    expect(answer({})).toEqual({ code: "invalid_parameter", message: "Parameter 'body' is missing." })
  })

  it("encodes as the schema does (the typed client sends the JSON object)", () => {
    expect(Schema.encodeSync(Body)({ body: "hi" })).toEqual({ body: "hi" })
  })
})
