// The exchange's HTTP service, ready for a listener (http/ExchangeListener.ts serves it): the API
// with its handlers and auth middleware, and how a request that does not decode is answered.
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Layer } from "effect"
import { fileURLToPath } from "node:url"
import { webAppRoutes } from "../../platform/webapp/WebApp.ts"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import * as SignedAuth from "../auth/SignedAuth.ts"
import { AccountHandlers } from "./AccountHandlers.ts"
import { decodeFailure } from "./decodeErrors.ts"
import { AggregatorHandlers, MarketDataHandlers } from "./MarketDataHandlers.ts"
import { OrderHandlers } from "./OrderHandlers.ts"
import { OrderQueryHandlers } from "./OrderQueryHandlers.ts"
import { PublicHandlers } from "./PublicHandlers.ts"
import { ExchangeAppHandlers, ExchangeSessionHandlers, ExchangeSignInHandlers } from "./WebAppHandlers.ts"
import * as ExchangeSessionAuth from "../auth/ExchangeSessionAuth.ts"

export const exchangeHandlers = HttpApiBuilder.api(ExchangeApi).pipe(
  Layer.provide([PublicHandlers, MarketDataHandlers, AggregatorHandlers, AccountHandlers, OrderHandlers, OrderQueryHandlers, ExchangeSignInHandlers, ExchangeSessionHandlers, ExchangeAppHandlers]),
  Layer.provide([SignedAuth.layer, ExchangeSessionAuth.layer])
)

/** The web app at /app/ (src/exchange/web/app.js) and /favicon.ico. */
export const exchangeWebApp = webAppRoutes({ title: "Exchange", entry: fileURLToPath(new URL("../web/app.js", import.meta.url)) })

/** A request that does not decode: the same answer as the fast lane's (decodeErrors.ts). */
export const exchangeDecodeError = (error: HttpApiDecodeError, request: HttpServerRequest.HttpServerRequest) =>
  decodeFailure(error.issues, HttpServerRequest.searchParamsFromURL(new URL(request.url, "http://localhost")))
