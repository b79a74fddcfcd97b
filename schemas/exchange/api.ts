// The whole HTTP contract of one node. OpenAPI 3.1 is generated from this value.
import { HttpApi, OpenApi } from "@effect/platform"
import { BadRequest, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized } from "./errors.ts"
import { AccountGroup, OrderGroup, PublicGroup } from "./endpoints.ts"

export const Api = HttpApi.make("shardline")
  .add(PublicGroup)
  .add(AccountGroup)
  .add(OrderGroup)
  .addError(BadRequest)
  .addError(Unauthorized)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(TooManyRequests)
  .addError(ServiceUnavailable)
  .annotate(OpenApi.Title, "Shardline exchange API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Non-custodial exchange with a Binance-style REST API. Every route is also served under /api/v3.")
