// authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration> [--json]
// authorizations show <grantId> [--json]
// The grant is a persisted message to the Authorization entity (user + asset): the CLI writes it
// to cluster storage and waits for the runner that owns the shard to commit and answer. When the
// answer does not come (a timeout, a database restart under the CLI), the CLI does not guess: it
// looks the grant up again on a fresh connection (the embedded system's state file is re-read) and
// reports it as done if it was committed, else as uncertain, with the id to check (exit 3).
import { parseOrUsage } from "./args.ts"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either, Option, Schedule } from "effect"
import { Authorization, Grant } from "../../schemas/exchange/authorization.ts"
import { entityIdOf, parseAsset, parseCap, parseDuration } from "../exchange/authorization/policy.ts"
import { newGrantId } from "../exchange/authorization/AuthorizationEntity.ts"
import { ApiKeys } from "../exchange/auth/ApiKeys.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = "usage: authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration e.g. 30s, 15m, 2h, 7d> [--json] | authorizations show <grantId> [--json]"
/** Exit code of a command whose outcome is not known yet (neither done nor refused). */
export const uncertainExit = 3

interface GrantRecord {
  readonly grantId: string
  readonly userId: number
  readonly asset: string
  /** granted: live; expired or replaced: its key is destroyed. */
  readonly status: "granted" | "expired" | "replaced"
  readonly cap: string | null
  readonly expiresAt: number | null
  readonly delegatedAddress: string | null
  readonly events: ReadonlyArray<{ readonly kind: string; readonly at: string }>
}

/** What the database says about one grant id: none if it was never committed. */
const readGrant = (grantId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* sql<{ kind: string; at: Date; user_id: string; asset: string }>`
      SELECT kind, at, user_id, asset FROM authorization_events WHERE grant_id = ${grantId} ORDER BY at, id`
    if (events.length === 0) return Option.none<GrantRecord>()
    const live = yield* sql<{ cap: string; expires_at: Date; delegated_address: string }>`
      SELECT cap::text AS cap, expires_at, delegated_address FROM authorizations WHERE grant_id = ${grantId}`
    const last = events[events.length - 1]!.kind
    return Option.some<GrantRecord>({
      grantId,
      userId: Number(events[0]!.user_id),
      asset: events[0]!.asset,
      status: last === "expired" ? "expired" : last === "replaced" ? "replaced" : "granted",
      cap: live[0]?.cap ?? null,
      expiresAt: live[0] ? new Date(live[0].expires_at).getTime() : null,
      delegatedAddress: live[0]?.delegated_address ?? null,
      events: events.map((e) => ({ kind: e.kind, at: new Date(e.at).toISOString() }))
    })
  })

const show = async (args: ReadonlyArray<string>): Promise<number> => {
  const parsed = parseOrUsage(args, { json: { type: "boolean", default: false } }, usage, true)
  const grantId = parsed?.positionals[0]
  if (!parsed || grantId === undefined) {
    console.error(usage)
    return 2
  }
  let found = false
  const code = await runCommand(readGrant(grantId), (record) => {
    if (Option.isNone(record)) return console.error(`no grant ${grantId} has been committed`)
    found = true
    console.log(parsed.values.json ? JSON.stringify(record.value) : `${record.value.grantId} ${record.value.asset} ${record.value.status}` +
      (record.value.expiresAt === null ? "" : ` until ${new Date(record.value.expiresAt).toISOString()}`))
  })
  return code !== 0 ? code : found ? 0 : 1
}

/** After a grant whose answer never came: done if it was committed, uncertain otherwise. */
const settleOutcome = async (grantId: string, json: boolean, why: string): Promise<number> => {
  let committed: GrantRecord | undefined
  // A fresh layer: a restarted embedded system is found again through its state file.
  const lookForCommit = readGrant(grantId).pipe(
    Effect.flatMap((r) => (Option.isSome(r) ? Effect.succeed(r.value) : Effect.fail("not yet" as const))),
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(500)) }),
    Effect.timeout(Duration.millis(settleMs)),
    Effect.option
  )
  const code = await runCommand(lookForCommit, (record) => {
    if (Option.isSome(record)) committed = record.value
  })
  if (code === 0 && committed !== undefined) {
    console.log(json ? JSON.stringify({ ...committed, confirmedAfter: why }) :
      `granted ${committed.asset} (${committed.status}); the answer was lost (${why}) but the grant is committed\ngrant id ${grantId}`)
    return 0
  }
  console.error(`uncertain: grant ${grantId} is not committed yet (${why}); it stays queued and applies when a runner takes it. Check with: authorizations show ${grantId}`)
  if (json) console.log(JSON.stringify({ grantId, status: "uncertain", reason: why }))
  return uncertainExit
}
const envMs = (name: string, fallback: number) => {
  const v = Number(process.env[name])
  return Number.isInteger(v) && v > 0 ? v : fallback
}
/** How long the CLI waits for a runner's answer (SHARDLINE_CLI_REPLY_TIMEOUT_MS); the message stays queued after. */
export const replyTimeout = Duration.millis(envMs("SHARDLINE_CLI_REPLY_TIMEOUT_MS", 60_000))
/** How long, after a lost answer, the CLI keeps looking for the commit (SHARDLINE_CLI_SETTLE_MS). */
const settleMs = envMs("SHARDLINE_CLI_SETTLE_MS", 5_000)

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [sub, ...rest] = args
  if (sub === "show") return show(rest)
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
  const grantId = newGrantId()
  let lost: string | undefined
  const code = await runCommand(
    Effect.gen(function*() {
      const key = yield* Effect.flatMap(ApiKeys, (keys) => keys.lookup(apiKey))
      if (Option.isNone(key)) return yield* Effect.fail(new UsageError(`no active API key ${apiKey}`))
      const client = (yield* Authorization.client)(entityIdOf(key.value.userId, asset))
      const message = new Grant({ grantId, cap, expiresAtMs: Date.now() + lifetime })
      // First make the message durable (returns once it is in cluster storage), so no timeout
      // below can cancel it half-sent; then ask again for its answer: the same primary key
      // (grant:<id>) makes the second send wait for the first one's reply instead of running twice.
      yield* client.Grant(message, { discard: true })
      return yield* client.Grant(message).pipe(
        Effect.map(Option.some),
        Effect.timeout(replyTimeout),
        Effect.catchTag("GrantRefused", (e) => Effect.fail(new UsageError(e.message))),
        // Anything else (no answer in time, a lost connection): the outcome is not known here.
        Effect.catchAll((e) =>
          e instanceof UsageError ? Effect.fail(e) : Effect.sync(() => {
            lost = e._tag === "TimeoutException" ? "no runner answered in time" : "the connection was lost"
            return Option.none()
          })),
        Effect.catchAllDefect(() => Effect.sync(() => {
          lost = "the connection was lost"
          return Option.none()
        }))
      )
    }),
    (answer) => {
      if (Option.isNone(answer)) return
      const granted = answer.value
      console.log(values.json ? JSON.stringify(granted) :
        `granted ${granted.asset} cap ${granted.cap} until ${new Date(granted.expiresAt).toISOString()}\ndelegated address ${granted.delegatedAddress}`)
    }
  )
  if (code === 2) return code
  // The message may be committed even though its answer never came back: ask the database again.
  if (code !== 0 || lost !== undefined) return settleOutcome(grantId, values.json === true, lost ?? "the command failed")
  return 0
}
