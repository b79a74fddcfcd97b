// A JSON request body whatever its Content-Type, declared in the endpoint's schema like any other
// body (`setPayload(JsonBody(X))`) and decoded by HttpApi like any other (`handle`): routes that
// answer browsers and clients whose `fetch(url, {body: JSON.stringify(x)})` sends text/plain (the
// default; docs/social.md) take such a body as the JSON it is. HttpApi reads a body by its type:
// application/json (or none) as JSON, text/* as text, other types as bytes; text and bytes are
// parsed here. A body that is not JSON is the API's 400 `invalid_request` (the listener's decode
// error maps `notJsonMessage`), as one that does not fit the schema is its 400 `invalid_parameter`.
// The documents (OpenAPI, the docs page) show the schema itself: the wire form is JSON.
import { JSONSchema, ParseResult, Schema } from "effect"

export const notJsonMessage = "The body must be JSON."

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Text or bytes as the JSON they hold; what HttpApi already parsed passes as it is. */
const parsed = Schema.transformOrFail(Schema.Unknown, Schema.Unknown, {
  strict: true,
  decode: (input, _, ast) => {
    if (typeof input !== "string" && !(input instanceof Uint8Array)) return ParseResult.succeed(input)
    try {
      return ParseResult.succeed(JSON.parse(typeof input === "string" ? input : utf8.decode(input)) as unknown)
    } catch {
      return ParseResult.fail(new ParseResult.Type(ast, "(body)", notJsonMessage))
    }
  },
  encode: ParseResult.succeed
})

/** `schema` as a request body taken as JSON whatever its Content-Type. */
export const JsonBody = <A, I>(schema: Schema.Schema<A, I>) => {
  // What the documents show: the body's own JSON schema (inline: these bodies have no identifier).
  const { $schema: _, ...shown } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return Schema.compose(parsed, schema, { strict: false }).annotations({ jsonSchema: shown })
}
