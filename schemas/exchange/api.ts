// The exchange's whole HTTP contract. OpenAPI 3.1 is generated from this value.
import { HttpApi } from "@effect/platform"
import { apiDocumentation } from "../common/openApi.ts"
import { AccountGroup } from "./account.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized } from "./errors.ts"
import { AggregatorGroup, MarketDataGroup } from "./marketData.ts"
import { OrderGroup, OrderQueryGroup } from "./orders.ts"
import { PublicGroup } from "./public.ts"
import { ExchangeAppGroup, ExchangeSessionGroup, ExchangeSignInGroup } from "./webApp.ts"

export const ExchangeApi = HttpApi.make("exchange")
  .add(PublicGroup)
  .add(MarketDataGroup)
  .add(AggregatorGroup)
  .add(AccountGroup)
  .add(OrderGroup)
  .add(OrderQueryGroup)
  .add(ExchangeSignInGroup)
  .add(ExchangeSessionGroup)
  .add(ExchangeAppGroup)
  .addError(BadRequest)
  .addError(Unauthorized)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(TooManyRequests)
  .addError(ServiceUnavailable)
  .addError(Conflict)
  .addError(Gone)
  .annotateContext(apiDocumentation({
    title: "Shardline exchange API",
    server: "this node (every route is also served under /api/v3)",
    description:
      "Non-custodial exchange with a Binance-style REST API. Every route is also served under /api/v3. Errors are `{code, msg}`; signed routes take the key in X-MBX-APIKEY or X-SVC-APIKEY and the signature as the last parameter."
  }))
