// Encryption of secrets at rest (API secrets, delegated keys): AES-256-GCM with a random nonce,
// stored as "v1:<nonce b64>:<tag b64>:<ciphertext b64>". The master key comes from
// SHARDLINE_MASTER_KEY, or in embedded mode from <dataDir>/master.key (created 0600 on first use).
// A socket (multi-node) node refuses to start without SHARDLINE_MASTER_KEY: a key file in the
// data dir would sit beside the database. Every start checks the key against the database
// (`checkMasterKey`), so a node given another key refuses instead of failing every secret later.
import { SqlClient } from "@effect/sql"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { AppConfig } from "./Config.ts"
import { invalidSetting } from "./settings.ts"

export interface SecretBoxShape {
  readonly seal: (plain: string) => string
  /** Fails (defect) only if the stored value was tampered with or the master key changed. */
  readonly open: (sealed: string) => string
  /** A key derived from the master key for one purpose (HKDF-SHA256, `label` as info). */
  readonly subkey: (label: string) => Buffer
  /** Where the master key came from, for messages: `SHARDLINE_MASTER_KEY` or the key file. */
  readonly source: string
}

export class SecretBox extends Context.Tag("shardline/SecretBox")<SecretBox, SecretBoxShape>() {}

export const make = (key: Buffer, source = "the master key"): SecretBoxShape => {
  if (key.length !== 32) throw new Error("master key must be 32 bytes")
  return {
    seal: (plain) => {
      const nonce = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, nonce)
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return ["v1", nonce.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(":")
    },
    open: (sealed) => {
      const [v, nonce, tag, body] = sealed.split(":")
      if (v !== "v1" || !nonce || !tag || body === undefined) throw new Error("unknown sealed secret format")
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"))
      decipher.setAuthTag(Buffer.from(tag, "base64"))
      return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8")
    },
    subkey: (label) => Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `shardline ${label}`, 32)),
    source
  }
}

const parseKey = (text: string): Buffer => {
  const t = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64")
  if (key.length !== 32) throw new Error("SHARDLINE_MASTER_KEY must be 32 bytes, as 64 hex characters or base64")
  return key
}

const keyFile = (dataDir: string) => join(dataDir, "master.key")

/** Reads the configured key, or the data dir's key file, creating it on first use. */
export const loadMasterKey = (config: { masterKey: Option.Option<Redacted.Redacted>; dataDir: string }): Buffer => {
  if (Option.isSome(config.masterKey)) return parseKey(Redacted.value(config.masterKey.value))
  const file = keyFile(config.dataDir)
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true })
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" })
  }
  return parseKey(readFileSync(file, "utf8"))
}

export const layer = Layer.effect(
  SecretBox,
  Effect.flatMap(AppConfig, (config) =>
    config.topology === "socket" && Option.isNone(config.masterKey)
      ? Effect.fail(invalidSetting("MASTER_KEY",
        "must be set on a socket-topology (multi-node) node: a master key file inside the data dir would sit beside the database, and every node must use the same key"))
      : Effect.sync(() =>
        make(loadMasterKey(config), Option.isSome(config.masterKey) ? "SHARDLINE_MASTER_KEY" : keyFile(config.dataDir))))
)

const checkText = "shardline master key check v1"

const opens = (box: SecretBoxShape, sealed: string) => Either.isRight(Either.try(() => box.open(sealed)))

/** A secret sealed before `secret_box_check` existed: the newest one, and what it is, for the refusal. */
export interface SealedBefore {
  /** How the refusal names it ("the API secrets already in table …"). */
  readonly what: string
  readonly newest: Effect.Effect<string | undefined, never, SqlClient.SqlClient>
}

/**
 * Refuses (one line, as a ConfigError) a master key that does not open what the database already
 * holds: the check value in `secret_box_check`, or, in a database from before it, the newest secret
 * `before` names (the platform reads no service's table: the service that sealed them says where).
 * A database with neither gets the check value sealed with this key.
 */
export const checkMasterKey = (before: SealedBefore) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const refuse = (what: string) =>
    invalidSetting("MASTER_KEY", `${box.source} does not open ${what}; start with the master key that sealed them (the key is not shown)`)
  const readCheck = sql<{ sealed: string }>`SELECT sealed FROM secret_box_check WHERE id = 1`.pipe(Effect.orDie)
  const [check] = yield* readCheck
  if (check === undefined) {
    const newest = yield* before.newest
    if (newest !== undefined && !opens(box, newest)) return yield* Effect.fail(refuse(before.what))
    yield* sql`INSERT INTO secret_box_check (id, sealed) VALUES (1, ${box.seal(checkText)}) ON CONFLICT (id) DO NOTHING`.pipe(Effect.orDie)
  }
  // Read again: a node that raced us with another key won the insert, and one of us must refuse.
  const [stored] = yield* readCheck
  if (stored === undefined || !opens(box, stored.sealed) || box.open(stored.sealed) !== checkText) {
    return yield* Effect.fail(refuse("the key check in table secret_box_check (nor the secrets sealed with it: api_keys, authorization_keys)"))
  }
})
