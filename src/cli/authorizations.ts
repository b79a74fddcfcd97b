// authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration> [--json]
// authorizations show <grantId> [--json]
// The grant is a persisted message to the Authorization entity (user + asset): the CLI writes it
// to cluster storage and waits for the runner that owns the shard to commit and answer. When the
// answer does not come (a timeout, a database restart under the CLI), the CLI does not guess: it
// looks the grant up again on a fresh connection (the embedded system's state file is re-read) and
// reports it as done if it was committed, else as uncertain, with the id to check (exit 3).
// A grant for a `demo trader` user (a demo wallet, the ledger devnet, a market asset) then funds
// the new delegated address from the demo wallet up to the cap (`funded` in the answer); if that
// fails the grant stands, the reason goes to stderr and the exit code is 1.
import { parseOrUsage } from "./args.ts"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either, Option, Schedule } from "effect"
import type { FundedDemo } from "../../schemas/devnet.ts"
import { Authorization, Grant } from "../../schemas/exchange/authorization.ts"
import { entityIdOf, parseAsset, parseCap, parseDuration } from "../exchange/authorization/policy.ts"
import { newGrantId } from "../exchange/authorization/AuthorizationEntity.ts"
import { type GrantRecord, readGrant } from "../exchange/authorization/grantRecord.ts"
import { ApiKeys } from "../exchange/auth/ApiKeys.ts"
import { fundDelegatedFromDemo } from "./demoWallet.ts"
import { runCommand, UsageError } from "./runtime.ts"

const usage = "usage: authorizations grant --key <apiKey> --asset <ASSET> --cap <decimal> --expires-in <duration e.g. 30s, 15m, 2h, 7d> [--json] | authorizations show <grantId> [--json]"
/** Exit code of a command whose outcome is not known yet (neither done nor refused). */
export const uncertainExit = 3

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
      (record.value.expiresAt === null ? "" : ` until ${new Date(record.value.expiresAt).toISOString()}`) +
      (record.value.keyDestroyedAt === null ? "" : `, key unrecoverable since ${record.value.keyDestroyedAt}`))
  })
  return code !== 0 ? code : found ? 0 : 1
}

export type Outcome =
  | { readonly _tag: "Done"; readonly grant: GrantRecord }
  | { readonly _tag: "Refused"; readonly message: string }
  | { readonly _tag: "Pending" }

/** A refusal the entity answered for this grant (its reply is a failure), if any. */
const refusalOf = (grantId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ payload: string | null }>`
      SELECT r.payload FROM cluster_messages m JOIN cluster_replies r ON r.request_id = m.request_id
      WHERE m.entity_type = 'Authorization' AND m.message_id LIKE ${`%grant:${grantId}`}`
    for (const row of rows) {
      if (row.payload === null || !row.payload.includes('"Failure"')) continue
      const message = /"message":"((?:[^"\\]|\\.)*)"/.exec(row.payload)?.[1]
      return Option.some(message ?? "the grant was refused")
    }
    return Option.none<string>()
  })

/** Polls the database until the grant is committed or refused, or `within` passes (then Pending). */
const awaitOutcome = (grantId: string, within: Duration.Duration) =>
  Effect.gen(function*() {
    const committed = yield* readGrant(grantId)
    if (Option.isSome(committed)) return { _tag: "Done", grant: committed.value } satisfies Outcome
    const refused = yield* refusalOf(grantId)
    if (Option.isSome(refused)) return { _tag: "Refused", message: refused.value } satisfies Outcome
    return yield* Effect.fail("pending" as const)
  }).pipe(
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(200)), while: (e) => e === "pending" }),
    Effect.timeout(within),
    Effect.catchAll(() => Effect.succeed<Outcome>({ _tag: "Pending" }))
  )

/**
 * Persists a Grant for `userId`'s `asset` (the message is in cluster storage when `onPersisted`
 * runs), then reads its outcome from the database within `replyTimeout`.
 */
export const grantAndAwait = (userId: number, asset: string, cap: string, lifetimeMs: number, grantId: string, onPersisted: () => void = () => {}) =>
  Effect.gen(function*() {
    const client = (yield* Authorization.client)(entityIdOf(userId, asset))
    // Durable first: this returns once the message is in cluster storage. The answer is then read
    // from the database, never by waiting on the client: interrupting a client that waits for a
    // persisted reply (a timeout) sends an Interrupt envelope, which cancels the grant itself.
    yield* client.Grant(new Grant({ grantId, cap, expiresAtMs: Date.now() + lifetimeMs }), { discard: true })
    onPersisted()
    return yield* awaitOutcome(grantId, replyTimeout)
  })

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
  const json = values.json === true
  let persisted = false
  let outcome = { _tag: "Pending" } as Outcome
  const code = await runCommand(
    Effect.gen(function*() {
      const key = yield* Effect.flatMap(ApiKeys, (keys) => keys.lookup(apiKey))
      if (Option.isNone(key)) return yield* Effect.fail(new UsageError(`no active API key ${apiKey}`))
      return yield* grantAndAwait(key.value.userId, asset, cap, lifetime, grantId, () => (persisted = true))
    }),
    (o) => (outcome = o)
  )
  if (code === 2) return code
  if (outcome._tag === "Refused") {
    console.error(outcome.message)
    return 2
  }
  if (outcome._tag === "Done") {
    const g = outcome.grant
    // A demo trader's grant (devnet): the new delegated address is funded from the demo wallet.
    let funded: FundedDemo | undefined
    const fundCode = g.delegatedAddress === null || g.cap === null ? 0 : await runCommand(
      fundDelegatedFromDemo(g.userId, g.asset, g.delegatedAddress, g.cap),
      (f) => (funded = Option.getOrUndefined(f))
    )
    const shown = funded === undefined ? g : { ...g, funded }
    console.log(json ? JSON.stringify(shown) : `granted ${g.asset} cap ${g.cap} until ${new Date(g.expiresAt ?? 0).toISOString()}\ndelegated address ${g.delegatedAddress}\ngrant id ${g.grantId}` +
      (funded === undefined ? "" : `\nfunded from the demo wallet: the delegated address holds ${funded.balance} ${g.asset}`))
    // The grant is committed either way; a funding that failed was reported on stderr.
    return fundCode === 0 ? 0 : 1
  }
  // No answer in time, or the connection was lost: look again on a fresh connection (a restarted
  // embedded system is found through its state file); done if committed, else uncertain.
  return settleOutcome(grantId, json, code === 0 ? "no runner answered in time" : persisted ? "the connection was lost" : "the message may not have been stored")
}

