// How a parameter that does not decode is answered, in Binance's texts: -1102 for a missing
// parameter, -1101 for a repeated one, -1100 with the legal range otherwise. One function for the
// Effect path (HttpApi's decode error) and the edge's fast lane (which decodes with the same
// schema itself), so both answer a bad parameter alike.
import { ParseResult, Schema } from "effect"
import { apiError, type ApiError, messages } from "../../../schemas/exchange/errors.ts"

/** The query as the router hands it to an urlParams schema: a name given more than once is an array. */
export type QueryRecord = Readonly<Record<string, string | ReadonlyArray<string>>>

export const queryRecord = (query: string): QueryRecord => {
  const out: Record<string, string | Array<string>> = {}
  for (const [k, v] of new URLSearchParams(query)) {
    const had = out[k]
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v]
  }
  return out
}

/**
 * A repeated parameter is known by its value, not by the decoder's message: the parameter the
 * first issue is about arrived as an array of values.
 */
export const decodeFailure = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>, params: QueryRecord): ApiError => {
  const issue = issues[0]
  const name = String(issue?.path[0] ?? "parameter").slice(0, 40)
  if (issue === undefined || issue._tag === "Missing") return apiError(-1102, messages.missing(name))
  const value = issue.path.length > 0 ? params[String(issue.path[0])] : undefined
  if (Array.isArray(value)) return apiError(-1101, `Duplicate values for parameter '${name}'.`)
  // A literal union reports one issue per member ("Expected \"BUY\", actual …"): list the members
  // (an optional parameter's union also has `undefined`, which is not a value one can send).
  const legal = [...new Set(issues.filter((i) => String(i.path[0]) === String(issue.path[0])).map((i) =>
    i.message.split("\n")[0]!.replace(/^Expected /, "").replace(/, actual .*$/, "").replace(/^"(.*)"$/, "$1")
  ))].filter((member) => member !== "undefined").join(", ").slice(0, 120)
  return apiError(-1100, messages.illegal(name, legal))
}

/** A check's outcome without an Effect (the signed lane's steps run outside one): its value, or the API's error. */
export type Checked<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

/** Decodes a query with an urlParams schema as HttpApi does; a failure is already the API's error. */
export const decodeQuery = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (params: QueryRecord): Checked<A> => {
    const r = decode(params)
    return r._tag === "Right"
      ? { ok: true, value: r.right }
      : { ok: false, error: decodeFailure(ParseResult.ArrayFormatter.formatErrorSync(r.left), params) }
  }
}
