// What a CLI command runs inside: the same config, database and secret box as the running
// system (the embedded one when given the same SHARDLINE_DATA_DIR, or SHARDLINE_DATABASE_URL),
// plus a storage-only cluster client for messages to entities.
import { Cause, Data, Effect, Exit, Layer } from "effect"
import { storageClient } from "../platform/ShardingSettings.ts"
import * as ApiKeys from "../exchange/auth/ApiKeys.ts"
import { databaseLayer } from "../platform/database/Database.ts"
import { configLayer, nodeConfig } from "../config.ts"
import { migrations } from "../migrations.ts"
import * as SecretBox from "../platform/SecretBox.ts"

/** The command was called wrongly (bad argument, unknown key): its message is printed, exit code 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {
  constructor(message: string) {
    super({ message })
  }
}

export const cliLayer = Layer.unwrapEffect(Effect.map(nodeConfig, (config) =>
  Layer.mergeAll(ApiKeys.layerNoListen, storageClient(config)).pipe(
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:cli", migrations })),
    Layer.provideMerge(configLayer(config))
  )))

/** Runs a command's effect; prints a usage or failure message and returns the exit code. */
export const runCommand = async <A>(
  effect: Effect.Effect<A, unknown, Layer.Layer.Success<typeof cliLayer>>,
  print: (a: A) => void
): Promise<number> => {
  const exit = await Effect.runPromiseExit(Effect.scoped(Effect.provide(effect, cliLayer)))
  if (Exit.isSuccess(exit)) {
    print(exit.value)
    return 0
  }
  const failure = Cause.squash(exit.cause)
  // A database failure says only "Failed to execute statement"; its cause says what happened
  // (one line: the server's message, never a stack).
  const cause = failure instanceof Error && failure.cause instanceof Error ? `: ${failure.cause.message.split("\n")[0]}` : ""
  console.error(failure instanceof Error ? `${failure.message}${cause}` : String(failure))
  return failure instanceof UsageError ? 2 : 1
}

const fileProblems: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links",
  EMFILE: "too many open files"
}

/** Why a file given on the command line could not be read, in a few words (never a stack). */
export const fileProblem = (e: unknown): string => {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""
  return fileProblems[code] ?? (e instanceof Error ? e.message.split("\n")[0]! : String(e))
}

export const printJsonOr = (json: boolean, human: (a: unknown) => string) => (a: unknown) =>
  console.log(json ? JSON.stringify(a) : human(a))
