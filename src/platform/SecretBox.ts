// Encryption of secrets at rest (API secrets, delegated keys): AES-256-GCM with a random nonce,
// stored as "v1:<nonce b64>:<tag b64>:<ciphertext b64>". The master key comes from
// SHARDLINE_MASTER_KEY, or in embedded mode from <dataDir>/master.key (created 0600 on first use).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "./Config.ts"

export interface SecretBoxShape {
  readonly seal: (plain: string) => string
  /** Fails (defect) only if the stored value was tampered with or the master key changed. */
  readonly open: (sealed: string) => string
}

export class SecretBox extends Context.Tag("shardline/SecretBox")<SecretBox, SecretBoxShape>() {}

export const make = (key: Buffer): SecretBoxShape => {
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
    }
  }
}

const parseKey = (text: string): Buffer => {
  const t = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64")
  if (key.length !== 32) throw new Error("SHARDLINE_MASTER_KEY must be 32 bytes, as 64 hex characters or base64")
  return key
}

/** Reads the configured key, or the data dir's key file, creating it on first use. */
export const loadMasterKey = (config: { masterKey: Option.Option<Redacted.Redacted>; dataDir: string }): Buffer => {
  if (Option.isSome(config.masterKey)) return parseKey(Redacted.value(config.masterKey.value))
  const file = join(config.dataDir, "master.key")
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true })
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" })
  }
  return parseKey(readFileSync(file, "utf8"))
}

export const layer = Layer.effect(
  SecretBox,
  Effect.map(AppConfig, (config) => make(loadMasterKey(config)))
)
