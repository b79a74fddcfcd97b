// A JSON body read as text and decoded by a schema, whatever its Content-Type, in the
// `{error: {code, message}}` shape: the routes that take a JSON body this way (the social
// composer's, by `handleRaw`) answer a client that sends JSON as text/plain, as fetch does by
// default, and a bad body as the API's own 400. The edge has capped the body's size and checked
// its text (textGuard.ts) before this runs.
import { HttpServerRequest } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Effect, Either, Schema } from "effect"
import { ArrayFormatter } from "effect/ParseResult"
import { BadRequest } from "../../../schemas/common/ErrorBody.ts"
import { decodeErrorShape } from "./errorBodyEdge.ts"

export const jsonPayload = <A, I>(schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* Effect.mapError(request.text, () => new BadRequest({ error: { code: "invalid_request", message: "The body did not arrive whole." } }))
    const parsed = Either.try(() => JSON.parse(text) as unknown)
    if (Either.isLeft(parsed)) return yield* Effect.fail(new BadRequest({ error: { code: "invalid_request", message: "The body must be JSON." } }))
    return yield* Schema.decodeUnknown(schema)(parsed.right).pipe(
      Effect.mapError((e) => decodeErrorShape(new HttpApiDecodeError({ issues: ArrayFormatter.formatErrorSync(e), message: e.message })))
    )
  })
