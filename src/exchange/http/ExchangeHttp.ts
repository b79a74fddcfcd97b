// The exchange's HTTP service, ready for a listener (cluster/Listeners.ts composes it): the API
// with its handlers and auth middleware, and how a request that does not decode is answered.
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Layer } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { apiError, messages } from "../../../schemas/exchange/errors.ts"
import { SignedAuthLive } from "../auth/SignedAuth.ts"
import { AccountHandlers } from "./AccountHandlers.ts"
import { OrderHandlers } from "./OrderHandlers.ts"
import { OrderQueryHandlers } from "./OrderQueryHandlers.ts"
import { PublicHandlers } from "./PublicHandlers.ts"

export const exchangeHandlers = HttpApiBuilder.api(ExchangeApi).pipe(
  Layer.provide([PublicHandlers, AccountHandlers, OrderHandlers, OrderQueryHandlers]),
  Layer.provide(SignedAuthLive)
)

/**
 * The parameters as the router hands them to an endpoint's urlParams schema: a name given more than
 * once is an array of its values. (Signed endpoints decode the signed parameters instead, which
 * refuse a repeated name before any decoding, so none of theirs is ever an array here.)
 */
const searchParamsOf = (request: HttpServerRequest.HttpServerRequest) =>
  HttpServerRequest.searchParamsFromURL(new URL(request.url, "http://localhost"))

/**
 * Binance's texts: -1102 for a missing parameter, -1101 for a repeated one, -1100 with the legal
 * range otherwise. A repeated one is known by its value, not by the decoder's message: the
 * parameter the first issue is about arrived as an array of values.
 */
export const exchangeDecodeError = (error: HttpApiDecodeError, request: HttpServerRequest.HttpServerRequest) => {
  const issue = error.issues[0]
  const name = String(issue?.path[0] ?? "parameter").slice(0, 40)
  if (issue === undefined || issue._tag === "Missing") return apiError(-1102, messages.missing(name))
  const value = issue.path.length > 0 ? searchParamsOf(request)[String(issue.path[0])] : undefined
  if (Array.isArray(value)) return apiError(-1101, `Duplicate values for parameter '${name}'.`)
  // A literal union reports one issue per member ("Expected \"BUY\", actual …"): list the members
  // (an optional parameter's union also has `undefined`, which is not a value one can send).
  const legal = [...new Set(error.issues.filter((i) => String(i.path[0]) === String(issue.path[0])).map((i) =>
    i.message.split("\n")[0]!.replace(/^Expected /, "").replace(/, actual .*$/, "").replace(/^"(.*)"$/, "$1")
  ))].filter((member) => member !== "undefined").join(", ").slice(0, 120)
  return apiError(-1100, messages.illegal(name, legal))
}
