// authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration> [--json]
// The grant is a persisted message to the Authorization entity (user + asset): the CLI writes it
// to cluster storage and waits for the runner that owns the shard to commit and answer.
import { parseOrUsage } from "./args.ts"
import { Duration, Effect, Either, Option } from "effect"
import { Authorization, Grant } from "../../schemas/exchange/authorization.ts"
import { entityIdOf, parseAsset, parseCap, parseDuration } from "../exchange/authorization/policy.ts"
import { newGrantId } from "../exchange/authorization/AuthorizationEntity.ts"
import { ApiKeys } from "../exchange/auth/ApiKeys.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = "usage: authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration e.g. 30s, 15m, 2h, 7d> [--json]"
/** How long the CLI waits for a runner to take the message before giving up (it stays queued). */
export const replyTimeout = Duration.seconds(60)

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [sub, ...rest] = args
  if (sub !== "grant") {
    console.error(usage)
    return 2
  }
  const parsed = parseOrUsage(rest, {
    key: { type: "string" },
    asset: { type: "string" },
    cap: { type: "string" },
    "expires-in": { type: "string" },
    json: { type: "boolean", default: false }
  }, usage)
  if (!parsed) return 2
  const values = parsed.values
  // The first refusal in this order is reported, as before.
  const grant = Either.all({
    asset: parseAsset(values.asset ?? ""),
    cap: parseCap(values.cap ?? ""),
    lifetime: parseDuration(values["expires-in"] ?? "")
  })
  if (Either.isLeft(grant)) {
    console.error(`${grant.left.message}\n${usage}`)
    return 2
  }
  const { asset, cap, lifetime } = grant.right
  if (!values.key) {
    console.error(`--key is required\n${usage}`)
    return 2
  }
  const apiKey = values.key
  return runCommand(
    Effect.gen(function*() {
      const key = yield* Effect.flatMap(ApiKeys, (keys) => keys.lookup(apiKey))
      if (Option.isNone(key)) return yield* Effect.fail(new UsageError(`no active API key ${apiKey}`))
      const client = (yield* Authorization.client)(entityIdOf(key.value.userId, asset))
      return yield* client.Grant(new Grant({
        grantId: newGrantId(),
        cap,
        expiresAtMs: Date.now() + lifetime
      })).pipe(
        Effect.timeoutFail({
          duration: replyTimeout,
          onTimeout: () => new Error("no runner answered in time; the grant stays queued and applies when the system runs")
        }),
        Effect.catchTag("GrantRefused", (e) => Effect.fail(new UsageError(e.message)))
      )
    }),
    (granted) => console.log(values.json ? JSON.stringify(granted) :
      `granted ${granted.asset} cap ${granted.cap} until ${new Date(granted.expiresAt).toISOString()}\ndelegated address ${granted.delegatedAddress}`)
  )
}
