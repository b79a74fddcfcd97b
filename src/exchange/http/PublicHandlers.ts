import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../schemas/exchange/api.ts"
import { prefix } from "../../../schemas/exchange/endpoints.ts"

/** The index document: where everything is. Sample query strings show the parameters. */
export const indexDocument = {
  exchange: "Shardline",
  version: "1.0.0",
  custody: "non-custodial" as const,
  docs: "/api-docs",
  openapi: `${prefix}/openapi.json`,
  public: {
    ping: `${prefix}/ping`,
    time: `${prefix}/time`
  },
  signed: {
    account: `GET ${prefix}/account?timestamp=<ms>&recvWindow=5000&signature=<hex>`
  },
  compat: { aggregator: "/api/public/aggregator" }
}

export const PublicHandlers = HttpApiBuilder.group(Api, "public", (handlers) =>
  handlers
    .handle("index", () => Effect.succeed(indexDocument))
    .handle("ping", () => Effect.succeed({}))
    .handle("time", () => Effect.sync(() => ({ serverTime: Date.now() }))))
